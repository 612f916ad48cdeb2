package social_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/social"
)

// Four subscribers with different filters, and an HTTP client through the
// stream handler, receive exactly the matching statuses of a run of posts
// and deletes, each author's in order.
func TestStream_filters(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		n, _ := newNet(t, b, b.Client)
		posts := 10000
		if !b.Real() {
			posts = 2000
		}
		authors := []string{"u0", "u1", "u2", "u3", "u4"}
		for _, a := range authors {
			mustUser(t, n, a)
		}
		box := social.Box{South: 40, West: -75, North: 41, East: -73}
		filters := []social.Filter{
			{Follow: []string{"U1", "u3"}},
			{Track: []string{"red apple", "BLUE"}},
			{Locations: []social.Box{box}},
			{Sample: 0.1},
		}
		// What each filter matches, by the rules of its documentation,
		// computed here from what the test posts.
		type post struct {
			author, msg string
			lat, lon    float64
		}
		wants := func(i int, id string, p post) bool {
			switch i {
			case 0:
				return p.author == "u1" || p.author == "u3"
			case 1:
				return p.msg == "a red apple" || p.msg == "blue sky" || p.msg == "apple RED, blue"
			case 2:
				return p.lat >= 40 && p.lat <= 41 && p.lon >= -75 && p.lon <= -73
			default:
				return float64(crc32.ChecksumIEEE([]byte(id)))/(1<<32) < 0.1
			}
		}
		subs := make([]<-chan social.Event, len(filters))
		for i, f := range filters {
			var err error
			subs[i], err = n.Subscribe(ctx, f)
			require.NoError(t, err)
		}
		srv := httptest.NewServer(n.StreamHandler(social.Filter{}))
		defer srv.Close()
		hctx, hcancel := context.WithCancel(ctx)
		defer hcancel()
		req, err := http.NewRequestWithContext(hctx, "GET", srv.URL+"?follow=u1&follow=U3", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)

		msgs := []string{"a red apple", "red", "blue sky", "apple RED, blue", "green"}
		want := make([][]social.Event, len(filters))
		for i := range posts {
			p := post{author: authors[i%len(authors)], msg: msgs[i/len(authors)%len(msgs)], lat: 39.5 + float64(i%7)*0.25, lon: -74}
			st, err := n.Post(ctx, p.author, p.msg, social.At(p.lat, p.lon))
			require.NoError(t, err)
			e := social.Event{Status: st}
			for f := range filters {
				if wants(f, st.ID, p) {
					want[f] = append(want[f], e)
				}
			}
			if i%10 == 9 {
				require.NoError(t, n.Delete(ctx, p.author, st.ID))
				for f := range filters {
					if wants(f, st.ID, p) {
						want[f] = append(want[f], social.Event{Status: st, Deleted: true})
					}
				}
			}
		}
		key := func(e social.Event) string { return fmt.Sprintf("%s %v", e.Status.ID, e.Deleted) }
		// got receives until every wanted event came (an unwanted one is
		// an error as it arrives), then checks each author's order.
		check := func(name string, wanted []social.Event, next func() (social.Event, bool)) {
			t.Helper()
			left := map[string]social.Event{}
			for _, e := range wanted {
				left[key(e)] = e
			}
			var got []social.Event
			for len(left) > 0 {
				e, ok := next()
				if !ok {
					t.Fatalf("%s: stream ended with %d events missing", name, len(left))
				}
				w, wanted := left[key(e)]
				if !assert.True(t, wanted, "%s: unwanted or repeated event %s", name, key(e)) {
					continue
				}
				assert.Equal(t, w.Status.Message, e.Status.Message)
				assert.Equal(t, w.Status.Location, e.Status.Location)
				assert.Equal(t, w.Status.Posted.UnixMilli(), e.Status.Posted.UnixMilli())
				delete(left, key(e))
				got = append(got, e)
			}
			for _, a := range authors {
				var g, w []string
				for _, e := range got {
					if e.Status.UID == a {
						g = append(g, key(e))
					}
				}
				for _, e := range wanted {
					if e.Status.UID == a {
						w = append(w, key(e))
					}
				}
				assert.True(t, slices.Equal(w, g), "%s: %s's events out of order", name, a)
			}
			t.Logf("%s: %d events", name, len(got))
		}
		deadline := time.After(2 * time.Minute)
		for i, ch := range subs {
			check(fmt.Sprint("subscriber ", i), want[i], func() (social.Event, bool) {
				select {
				case e, ok := <-ch:
					return e, ok
				case <-deadline:
					return social.Event{}, false
				}
			})
		}
		sc := bufio.NewScanner(resp.Body)
		check("http", want[0], func() (social.Event, bool) {
			if !sc.Scan() {
				return social.Event{}, false
			}
			var e social.Event
			require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
			return e, true
		})
		// Ending the subscription's context closes its channel.
		sctx, cancel := context.WithCancel(ctx)
		ch, err := n.Subscribe(sctx, social.Filter{})
		require.NoError(t, err)
		cancel()
		for range ch {
		}
	})
}

func TestStream_badFilters(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		n, _ := newNet(t, b, b.Client)
		for _, f := range []social.Filter{
			{Sample: 1.5}, {Sample: -0.1}, {Track: []string{" ,. "}}, {Follow: []string{"no spaces"}},
			{Locations: []social.Box{{South: 10, North: 5, West: 0, East: 1}}},
			{Locations: []social.Box{{South: 0, North: 5, West: 0, East: 181}}},
		} {
			_, err := n.Subscribe(t.Context(), f)
			assert.ErrorContains(t, err, "social: subscribe: filter", "%+v", f)
		}
		srv := httptest.NewServer(n.StreamHandler(social.Filter{}))
		defer srv.Close()
		for _, q := range []string{"sample=x", "sample=2", "locations=1,2,3", "locations=a,b,c,d", "follow=a%20b"} {
			resp, err := http.Get(srv.URL + "?" + q)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, q)
		}
		_, err := n.Post(t.Context(), "u", "x", social.At(91, 0))
		assert.ErrorContains(t, err, "location")
	})
}

// On a *redis.Ring, Subscribe delivers the statuses of every author,
// whichever shard the author's stream channel maps to (Ring.Subscribe
// alone would put every channel on the shard of the first, and miss the
// statuses published on the other).
func TestStream_ring(t *testing.T) {
	n, ring := ringNet(t)
	shards := map[string]bool{}
	for i := range social.StreamShards {
		c, err := ring.GetShardClientForKey(fmt.Sprintf("social:{s%d}:stream", i))
		require.NoError(t, err)
		shards[c.Options().Addr] = true
	}
	require.Len(t, shards, 2, "stream channels on both shards")

	var authors []string
	for i := range 24 {
		authors = append(authors, mustUser(t, n, fmt.Sprint("a", i)))
	}
	events, err := n.Subscribe(t.Context(), social.Filter{})
	require.NoError(t, err)
	want := map[string]bool{}
	for _, a := range authors {
		want[mustPost(t, n, a, "hello from "+a).ID] = true
	}
	got := map[string]bool{}
	deadline := time.After(time.Minute) // a failure's bound, not a wait
	for len(got) < len(want) {
		select {
		case e := <-events:
			require.True(t, want[e.Status.ID], "an unexpected status %q", e.Status.ID)
			got[e.Status.ID] = true
		case <-deadline:
			require.Failf(t, "statuses never delivered", "%d of %d delivered", len(got), len(want))
		}
	}
}

// streamIDs reads the stream handler's response body until it has sent
// the status last (or ended), and returns the IDs of the statuses sent.
func streamIDs(t *testing.T, body *bufio.Scanner, last string) []string {
	t.Helper()
	var got []string
	for body.Scan() {
		var e social.Event
		require.NoError(t, json.Unmarshal(body.Bytes(), &e))
		got = append(got, e.Status.ID)
		if e.Status.ID == last {
			break
		}
	}
	return got
}

// streamGet opens the stream of srv with query q.
func streamGet(t *testing.T, srv *httptest.Server, q string) *bufio.Scanner {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", srv.URL+"?"+q, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return bufio.NewScanner(resp.Body)
}

// The query of a stream handler narrows the handler's filter, never
// widens it: a server that serves only ann's statuses does not send bob's
// to a client asking ?track=hello (the query's terms are ANDed with the
// server's, not added to them), nor to one asking ?follow=bob&follow=ann.
func TestStream_handlerQueryNarrowsOnly(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		n, _ := newNet(t, b, b.Client)
		mustUser(t, n, "ann")
		// bob's stream channel is ann's: bob's status, posted first,
		// arrives first, so the reads below that end with ann's have seen it.
		bob := "bob"
		for i := 0; crc32.ChecksumIEEE([]byte(bob))%social.StreamShards != crc32.ChecksumIEEE([]byte("ann"))%social.StreamShards; i++ {
			bob = fmt.Sprint("bob", i)
		}
		mustUser(t, n, bob)
		srv := httptest.NewServer(n.StreamHandler(social.Filter{Follow: []string{"ann"}}))
		t.Cleanup(srv.Close) // after the streams' cancels (cleanups run last first)
		track := streamGet(t, srv, "track=hello")
		follow := streamGet(t, srv, "follow="+bob+"&follow=ann")
		all := streamGet(t, srv, "")

		bobs := mustPost(t, n, bob, "hello world")
		annBye := mustPost(t, n, "ann", "goodbye from ann")
		anns := mustPost(t, n, "ann", "hello from ann")
		// bob's status is not sent, nor ann's without "hello"; the
		// statuses of one author arrive in order, so ann's last ends it.
		assert.Equal(t, []string{anns.ID}, streamIDs(t, track, anns.ID), "?track=hello of an ann-only stream")
		assert.Equal(t, []string{annBye.ID, anns.ID}, streamIDs(t, all, anns.ID), "no query: the handler's filter")
		assert.NotContains(t, streamIDs(t, follow, anns.ID), bobs.ID, "?follow=bob&follow=ann of an ann-only stream")
	})
}

// A client's sample can lower the handler's, not raise it: a handler
// sampling half the statuses sends no status outside that half to a
// client asking ?sample=1, and a client asking ?sample=0.2 gets only the
// statuses in both samples.
func TestStream_handlerQuerySample(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		n, _ := newNet(t, b, b.Client)
		mustUser(t, n, "ann")
		srv := httptest.NewServer(n.StreamHandler(social.Filter{Sample: 0.5}))
		t.Cleanup(srv.Close) // after the streams' cancels (cleanups run last first)
		raise := streamGet(t, srv, "sample=1")
		lower := streamGet(t, srv, "sample=0.2")
		in := func(id string, s float64) bool { return float64(crc32.ChecksumIEEE([]byte(id)))/(1<<32) < s }
		var want5, want2 []string
		outside := 0
		for range 40 {
			st := mustPost(t, n, "ann", "hello")
			switch {
			case in(st.ID, 0.2):
				want2 = append(want2, st.ID)
				want5 = append(want5, st.ID)
			case in(st.ID, 0.5):
				want5 = append(want5, st.ID)
			default:
				outside++
			}
		}
		require.NotEmpty(t, want2)
		require.Less(t, len(want2), len(want5))
		require.Positive(t, outside)
		assert.Equal(t, want5, streamIDs(t, raise, want5[len(want5)-1]), "?sample=1 of a half-sampled stream")
		assert.Equal(t, want2, streamIDs(t, lower, want2[len(want2)-1]), "?sample=0.2 of a half-sampled stream")
	})
}
