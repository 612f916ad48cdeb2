package config

import "time"

// SetClock makes s read time from now (tests move it to expire the cache).
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// Key returns the value key of (typ, component).
func (s *Store) Key(typ, component string) string { return s.key(typ, component) }

// OnRead makes c call fn in each Get between reading the configuration
// and taking c's lock.
func (c *Conns) OnRead(fn func()) { c.read = fn }
