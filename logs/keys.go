package logs

// recentKey is a LIST of the newest messages of log name at severity sev,
// newest first: "<Unix µs> <text>".
func (l *Logs) recentKey(name, sev string) string { return l.keys.Key(name, "recent:"+sev) }

// commonKey is a ZSET of the messages of log name at severity sev in the
// current hour, scored by how many times each was logged.
func (l *Logs) commonKey(name, sev string) string { return l.keys.Key(name, "common:"+sev) }

// lastKey is the ZSET of [Logs.commonKey] for the hour before the current.
func (l *Logs) lastKey(name, sev string) string { return l.keys.Key(name, "last:"+sev) }

// hoursKey is a HASH of log name: severity -> the start (Unix s) of the
// current hour of its common log.
func (l *Logs) hoursKey(name string) string { return l.keys.Key(name, "hours") }
