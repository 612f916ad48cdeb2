package semaphore

import "github.com/ria-go/ria/internal/keys"

// The keys of one semaphore are <prefix>{<name>}:<part>. All of them share
// the {<name>} hash tag, so every script touches a single Cluster slot.

// holdersKey is a ZSET of permit IDs scored by their deadline, in Unix
// milliseconds of the server's clock. Its TTL is kept at least as long as
// the semaphore's timeout, so an abandoned semaphore disappears.
func holdersKey(ks keys.Space, name string) string { return ks.Key(name, "holders") }

// seqKey is a STRING counter, the last [Permit.Seq] minted; no TTL.
func seqKey(ks keys.Space, name string) string { return ks.Key(name, "seq") }

// queueKey is a LIST of the permit IDs of waiting acquirers, oldest first.
func queueKey(ks keys.Space, name string) string { return ks.Key(name, "queue") }

// waitersKey is a HASH from a waiting permit ID to the server time (Unix
// ms) until which its place in the queue stays valid.
func waitersKey(ks keys.Space, name string) string { return ks.Key(name, "waiters") }

// grantPrefix is the prefix of the grant lists; grantPrefix+ID is a LIST
// where a release pushes the seq of the permit it hands to that waiter (or
// an empty value to wake it), and where a pipelined attempt that takes a
// permit pushes its seq; TTL: the timeout.
func grantPrefix(ks keys.Space, name string) string { return ks.Key(name, "grant:") }

// recordPrefix is the prefix of the release records; recordPrefix+ID is a
// STRING holding the nonce of the Release call that released permit ID,
// for the client's retry window: a re-send of that call answers
// "released" from it.
func recordPrefix(ks keys.Space, name string) string { return ks.Key(name, "released:") }

// keySet holds the keys of one semaphore, built once by [New].
type keySet struct {
	holders, seq, queue, waiters, grant, released string
}

// record is the release record of permit id.
func (k keySet) record(id string) string { return k.released + id }

func newKeySet(ks keys.Space, name string) keySet {
	return keySet{
		holders:  holdersKey(ks, name),
		seq:      seqKey(ks, name),
		queue:    queueKey(ks, name),
		waiters:  waitersKey(ks, name),
		grant:    grantPrefix(ks, name),
		released: recordPrefix(ks, name),
	}
}
