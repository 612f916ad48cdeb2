// Package block stands in for work that blocks its caller: a database
// query, a call to another service, the work done under a lock.
package block

import (
	"syscall"
	"time"
)

// For blocks the calling thread for d, as a driver's caller waiting for a
// reply on a socket is blocked and woken when it arrives. time.Sleep does
// not do that on Linux: Go waits for timers in epoll_wait, whose timeout is
// whole milliseconds, so a sleep that network traffic interrupts ends up
// to a millisecond late (measured on the 2-core machine: a 500µs sleep
// under the lock took 1.15 ms, a 2 ms load 2.43 ms when other clients'
// commands came meanwhile) and by how much depends on the traffic of the
// library measured. nanosleep keeps d exact for every contender; the
// runtime hands the thread's P to other goroutines meanwhile.
func For(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
