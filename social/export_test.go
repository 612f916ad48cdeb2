package social

// KeySlot is keySlot, for the tests.
var KeySlot = keySlot
