package social

import "github.com/ria-go/ria/internal/near"

// KeySlot is keySlot, for the tests.
var KeySlot = keySlot

// StatusCache returns n's status cache (WithStatusCache), or nil.
func StatusCache(n *Network) *near.Cache { return n.near }

// EncodeStatus and DecodeStatus are the status cache's payload codec.
var (
	EncodeStatus = encodeStatus
	DecodeStatus = decodeStatus
)
