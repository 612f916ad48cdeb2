package session

// PauseUntil exposes pauseUntil, the pause of RowCacher.Run before the
// next row is due.
var PauseUntil = pauseUntil
