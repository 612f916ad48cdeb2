package replica

// UseBookCheck makes w wait for fsyncs with the book's check, as on a
// server without WAITAOF, whatever the server.
func UseBookCheck(w *Waiter) { w.probed, w.waitAOF = true, false }
