package logs

import "time"

// SetHandlerClock makes h's writes read the time from now (when a batch
// whose reply was lost may still be sent again). Call it before h is used.
func SetHandlerClock(h *Handler, now func() time.Time) { h.core.now = now }
