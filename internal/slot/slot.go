// Package slot computes Redis Cluster hash slots, for code that must know
// which keys may share a transaction or a script.
package slot

// Count is the number of hash slots of a Redis Cluster.
const Count = 16384

// Of returns the Redis Cluster hash slot of key (0 to 16383): CRC16
// (XMODEM) of its hash tag mod 16384, where the hash tag is what lies
// between the first '{' and the first '}' after it when that is not empty,
// else the whole key.
func Of(key string) int {
	for i := 0; i < len(key); i++ {
		if key[i] == '{' {
			for j := i + 1; j < len(key); j++ {
				if key[j] == '}' {
					if j > i+1 {
						key = key[i+1 : j]
					}
					return int(crc16(key) % Count)
				}
			}
			break
		}
	}
	return int(crc16(key) % Count)
}

// crc16 is CRC-16/XMODEM, the checksum Redis Cluster hashes keys with.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ table[byte(crc>>8)^s[i]]
	}
	return crc
}

var table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()
