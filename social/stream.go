package social

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/redis/go-redis/v9"
)

// StreamShards is how many Pub/Sub channels the stream of statuses is
// spread over: a status goes to the channel of its author
// (crc32(author ID) mod StreamShards). On a Cluster the channels are
// sharded channels (SPUBLISH, SSUBSCRIBE) in as many slots, so the stream's
// traffic spreads over the masters instead of crossing the whole cluster
// bus; elsewhere they are plain channels.
const StreamShards = 8

// Event is a status posted or deleted, as a subscriber receives it.
type Event struct {
	Status  Status
	Deleted bool // the status was deleted; Status holds what it was
}

// event is an Event on the wire (JSON).
type event struct {
	ID      string   `json:"id"`
	UID     string   `json:"uid"`
	Login   string   `json:"login,omitempty"`
	Message string   `json:"message"`
	Posted  int64    `json:"posted_ms"`
	Lat     *float64 `json:"lat,omitempty"`
	Lon     *float64 `json:"lon,omitempty"`
	Deleted bool     `json:"deleted,omitempty"`
}

func (e Event) wire() event {
	w := event{ID: e.Status.ID, UID: e.Status.UID, Login: e.Status.Login, Message: e.Status.Message,
		Posted: e.Status.Posted.UnixMilli(), Deleted: e.Deleted}
	if p := e.Status.Location; p != nil {
		w.Lat, w.Lon = &p.Lat, &p.Lon
	}
	return w
}

func (w event) event() Event {
	e := Event{Status: Status{ID: w.ID, UID: w.UID, Login: w.Login, Message: w.Message, Posted: time.UnixMilli(w.Posted)}, Deleted: w.Deleted}
	if w.Lat != nil && w.Lon != nil {
		e.Status.Location = &Point{*w.Lat, *w.Lon}
	}
	return e
}

// MarshalJSON encodes an event as the stream handler sends it.
func (e Event) MarshalJSON() ([]byte, error) { return json.Marshal(e.wire()) }

// UnmarshalJSON decodes what MarshalJSON encodes.
func (e *Event) UnmarshalJSON(b []byte) error {
	var w event
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = w.event()
	return nil
}

func (n *Network) streamChannel(author string) string {
	return n.ks.Key("s"+strconv.Itoa(int(crc32.ChecksumIEEE([]byte(author))%StreamShards)), "stream")
}

// publish sends e to its author's stream channel, best effort: the stream
// is at most once (Pub/Sub), and the status is stored whatever happens.
func (n *Network) publish(ctx context.Context, e Event) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	ch := n.streamChannel(e.Status.UID)
	if _, ok := n.rdb.(*redis.ClusterClient); ok {
		n.rdb.SPublish(ctx, ch, b)
	} else {
		n.rdb.Publish(ctx, ch, b)
	}
}

// Box is a latitude and longitude range; a status posted from inside it
// (bounds included) matches.
type Box struct{ South, West, North, East float64 }

// Filter selects the statuses of a subscription (the book's 8.5 filters).
// A status matches when it matches any of Track, Follow and Locations
// (those given; none given: every status), and then, when Sample is set,
// when it falls in the sample. Deleted statuses match as they were.
type Filter struct {
	// Sample keeps a fraction (0 < Sample <= 1; 0 keeps all) of the
	// statuses, chosen by a hash of the status ID: every subscriber with
	// the same fraction sees the same sample.
	Sample float64
	// Track is phrases: a status matches one when its message holds every
	// word of it, case-insensitively (words are runs of letters, digits
	// and apostrophes).
	Track []string
	// Follow is user IDs (or logins): their statuses match.
	Follow []string
	// Locations is boxes: statuses posted from inside one match.
	Locations []Box
}

// MaxFilterTerms bounds the phrases, users and boxes of a filter.
const MaxFilterTerms = 1000

// matcher is a checked Filter.
type matcher struct {
	sample float64
	track  [][]string
	follow map[string]bool
	boxes  []Box
}

func (f Filter) compile() (*matcher, error) {
	if !(f.Sample >= 0 && f.Sample <= 1) {
		return nil, fmt.Errorf("filter: sample %v: want 0 to 1", f.Sample)
	}
	if len(f.Track) > MaxFilterTerms || len(f.Follow) > MaxFilterTerms || len(f.Locations) > MaxFilterTerms {
		return nil, fmt.Errorf("filter: more than %d phrases, users or boxes", MaxFilterTerms)
	}
	m := &matcher{sample: f.Sample, boxes: f.Locations}
	for _, p := range f.Track {
		ws := words(p)
		if len(ws) == 0 {
			return nil, fmt.Errorf("filter: track phrase %q: no word", p)
		}
		m.track = append(m.track, ws)
	}
	if len(f.Follow) > 0 {
		m.follow = make(map[string]bool, len(f.Follow))
		for _, u := range f.Follow {
			uid, err := checkUID("filter: follow", u)
			if err != nil {
				return nil, err
			}
			m.follow[uid] = true
		}
	}
	for _, b := range f.Locations {
		if !(b.South >= -90 && b.South <= b.North && b.North <= 90 && b.West >= -180 && b.West <= b.East && b.East <= 180) {
			return nil, fmt.Errorf("filter: box %+v: want -90 <= South <= North <= 90 and -180 <= West <= East <= 180", b)
		}
	}
	return m, nil
}

// words returns the lower-cased words of s.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
}

func (m *matcher) match(s Status) bool {
	if m.sample > 0 && float64(crc32.ChecksumIEEE([]byte(s.ID)))/(1<<32) >= m.sample {
		return false
	}
	if len(m.track) == 0 && m.follow == nil && len(m.boxes) == 0 {
		return true
	}
	if m.follow[s.UID] {
		return true
	}
	if p := s.Location; p != nil {
		for _, b := range m.boxes {
			if p.Lat >= b.South && p.Lat <= b.North && p.Lon >= b.West && p.Lon <= b.East {
				return true
			}
		}
	}
	if len(m.track) > 0 {
		have := map[string]bool{}
		for _, w := range words(s.Message) {
			have[w] = true
		}
	phrases:
		for _, ws := range m.track {
			for _, w := range ws {
				if !have[w] {
					continue phrases
				}
			}
			return true
		}
	}
	return false
}

// Subscribe returns the statuses posted and deleted from now on that f
// matches, in the order of each author's posts, until ctx ends (then the
// channel is closed). It holds one Pub/Sub connection (on a Cluster, one
// per stream channel: [StreamShards]; on a Ring, one per shard that the
// channels map to when it is called) and returns once subscribed, so
// every status posted after it returns is delivered. Delivery is at most
// once, as Pub/Sub is: a subscriber that falls behind by more than the
// channel's buffer, or whose connection breaks, misses the statuses of
// that moment (timelines hold them). A bad filter is an error.
func (n *Network) Subscribe(ctx context.Context, f Filter) (<-chan Event, error) {
	m, err := f.compile()
	if err != nil {
		return nil, fmt.Errorf("social: subscribe: %w", err)
	}
	return n.subscribe(ctx, m.match)
}

// subscribe is [Network.Subscribe] with the filter as a function.
func (n *Network) subscribe(ctx context.Context, match func(Status) bool) (<-chan Event, error) {
	chans := make([]string, StreamShards)
	for i := range chans {
		chans[i] = n.ks.Key("s"+strconv.Itoa(i), "stream")
	}
	var subs []*redis.PubSub
	var counts []int // channels of each subscription: one confirmation each
	switch c := n.rdb.(type) {
	case *redis.ClusterClient:
		for _, ch := range chans { // one slot each: one connection each
			subs, counts = append(subs, c.SSubscribe(ctx, ch)), append(counts, 1)
		}
	case *redis.Ring:
		// Ring.Subscribe would put every channel on the shard of the
		// first, while Ring.Publish sends each to its own shard.
		shards := map[*redis.Client][]string{}
		var order []*redis.Client
		for _, ch := range chans {
			sc, err := c.GetShardClientForKey(ch)
			if err != nil {
				return nil, fmt.Errorf("social: subscribe: shard of %q: %w", ch, err)
			}
			if shards[sc] == nil {
				order = append(order, sc)
			}
			shards[sc] = append(shards[sc], ch)
		}
		for _, sc := range order {
			subs, counts = append(subs, sc.Subscribe(ctx, shards[sc]...)), append(counts, len(shards[sc]))
		}
	default:
		subs, counts = append(subs, n.rdb.Subscribe(ctx, chans...)), append(counts, len(chans))
	}
	closeAll := func() {
		for _, s := range subs {
			_ = s.Close()
		}
	}
	for i, s := range subs {
		for range counts[i] {
			if _, err := s.Receive(ctx); err != nil {
				closeAll()
				return nil, fmt.Errorf("social: subscribe: %w", err)
			}
		}
	}
	out := make(chan Event, 1024)
	done := make(chan struct{}, len(subs))
	for _, s := range subs {
		go func() {
			defer func() { done <- struct{}{} }()
			for msg := range s.Channel(redis.WithChannelSize(1024)) {
				var e Event
				if json.Unmarshal([]byte(msg.Payload), &e) != nil || !match(e.Status) {
					continue
				}
				select {
				case out <- e:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() {
		<-ctx.Done()
		closeAll()
		for range subs {
			<-done
		}
		close(out)
	}()
	return out, nil
}

// StreamHandler returns an http.Handler that streams the statuses f
// matches to each client as newline-delimited JSON (one [Event] per
// line, flushed as it comes), until the client disconnects. The query
// may narrow f for one client, never widen it: track=phrase and
// follow=user (repeated) and locations=south,west,north,east (repeated)
// make a second [Filter], and a status is sent when it matches both f and
// that filter (which matches any of its terms, as a Filter does);
// sample=0.1 can lower f's sample, not raise it (the status must fall in
// both samples, which share one hash: the smaller wins; sample=0 keeps
// f's). An empty query serves f as it is. A bad query is answered 400.
func (n *Network) StreamHandler(f Filter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		match, err := handlerMatch(f, r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		events, err := n.subscribe(r.Context(), match)
		if err != nil {
			http.Error(w, "subscribe: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		fl, _ := w.(http.Flusher)
		if fl != nil {
			fl.Flush()
		}
		enc := json.NewEncoder(w)
		for e := range events {
			if enc.Encode(e) != nil {
				return // the client went away; r.Context() ends too
			}
			if fl != nil {
				fl.Flush()
			}
		}
	})
}

// handlerMatch returns the filter of one client of a stream handler: f,
// and the filter of r's query too when the query sets any (see
// [Network.StreamHandler]).
func handlerMatch(f Filter, r *http.Request) (func(Status) bool, error) {
	m, err := f.compile()
	if err != nil {
		return nil, fmt.Errorf("handler filter: %w", err)
	}
	qf, err := queryFilter(r)
	if err != nil {
		return nil, err
	}
	q, err := qf.compile()
	if err != nil {
		return nil, err
	}
	if q.sample == 0 && len(q.track) == 0 && q.follow == nil && len(q.boxes) == 0 {
		return m.match, nil
	}
	return func(s Status) bool { return m.match(s) && q.match(s) }, nil
}

// queryFilter returns the filter that the query of r sets (the zero
// Filter for an empty query).
func queryFilter(r *http.Request) (Filter, error) {
	q := r.URL.Query()
	f := Filter{Track: q["track"], Follow: q["follow"]}
	if s := q.Get("sample"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return f, fmt.Errorf("sample %q: not a number", s)
		}
		f.Sample = v
	}
	for _, l := range q["locations"] {
		var b Box
		parts := strings.Split(l, ",")
		if len(parts) != 4 {
			return f, fmt.Errorf("locations %q: want south,west,north,east", l)
		}
		for i, dst := range []*float64{&b.South, &b.West, &b.North, &b.East} {
			v, err := strconv.ParseFloat(strings.TrimSpace(parts[i]), 64)
			if err != nil {
				return f, fmt.Errorf("locations %q: %q is not a number", l, parts[i])
			}
			*dst = v
		}
		f.Locations = append(f.Locations, b)
	}
	return f, nil
}
