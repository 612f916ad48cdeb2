package social

import (
	"context"

	"github.com/ria-go/ria/internal/near"
)

// StatusCache returns n's status cache (WithStatusCache), or nil.
func StatusCache(n *Network) *near.Cache { return n.near }

// EncodeStatus and DecodeStatus are the status cache's payload codec.
var (
	EncodeStatus = encodeStatus
	DecodeStatus = decodeStatus
)

// ListGoneForTest runs a later step of DeleteList (listgone.lua) for
// owner's list name with the members done, as a re-send of it would, and
// returns the page it answers.
func ListGoneForTest(ctx context.Context, n *Network, owner, name string, done ...string) ([]string, error) {
	args := []any{name, listPage}
	for _, m := range done {
		args = append(args, m)
	}
	v, err := listGoneScript.Run(ctx, n.rdb, []string{n.listsKey(owner), n.listKey(owner, name), n.listTimelineKey(owner, name)}, args...)
	if err != nil {
		return nil, err
	}
	return listGoneScript.AsStrings(v)
}
