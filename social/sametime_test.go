package social_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/social"
)

// Statuses of one author posted within one millisecond (always on the
// harness's miniredis, whose TIME is frozen; by chance on a real server)
// tied on score, and a ZSET orders ties by member bytes: "ann:10" sorted
// below "ann:9", the cap trimmed the newest status and pages showed
// "ann:9" first. An author's post times now strictly increase.
func TestPost_sameMillisecond(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		n, _ := newNet(t, b, b.Client, social.WithTimelineCap(3))
		ann := mustUser(t, n, "ann")
		bob := mustUser(t, n, "bob")
		mustFollow(t, n, bob, ann)
		var last social.Status
		for i := 1; i <= 10; i++ {
			prev := last
			last = mustPost(t, n, ann, fmt.Sprintf("status %d", i))
			if i > 1 {
				assert.True(t, last.Posted.After(prev.Posted), "status %d posted after %d", i, i-1)
			}
		}
		require.Equal(t, "ann:10", last.ID)
		want := []string{"ann:10", "ann:9", "ann:8"}
		assert.Equal(t, want, page(t, n, ann, social.Profile, 10), "profile: the newest 3, newest first")
		assert.Equal(t, want, page(t, n, bob, social.Home, 10), "home: the newest 3, newest first")
	})
}
