package shard

// RememberedDays returns how many days' sizes v keeps in memory.
func RememberedDays(v *Visitors) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.days)
}

// RememberDays is the most days a Visitors keeps in memory.
const RememberDays = rememberDays
