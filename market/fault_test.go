package market_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ria-go/ria"
	"github.com/ria-go/ria/internal/redistest"
	"github.com/ria-go/ria/market"
)

// The fault harness: every state-changing call of the package, through a
// proxy that lets the call's command run on the server and then swallows
// its reply and cuts the connection, so that go-redis (default retries)
// re-sends it, or the WATCH loop settles it. After each call the test
// compares the caller's answer with the server's state; a call whose
// answer disagrees counts as a disagreement (redistest.Harness). Each test
// logs one line of counts.

var (
	scripts = redistest.Scripts
	exec    = redistest.Commands("exec")
	watch   = redistest.Commands("watch")
	// settling is the SET NX GET that settles a transaction whose EXEC
	// reply was lost (not the SET of the record inside MULTI).
	settling = func(cmd []string) bool {
		return redistest.Commands("set")(cmd) && slices.ContainsFunc(cmd, func(a string) bool { return strings.EqualFold(a, "get") })
	}
)

// faultyMarket returns a market on a client whose replies f can lose, and
// the same market on the test's plain client to read the state back.
func faultyMarket(t *testing.T, b *redistest.Backend, name string) (*market.Market, *market.Market, *redistest.Faults) {
	t.Helper()
	rdb, _, f := b.FaultyClient()
	return newMarket(t, b, rdb, name), newMarket(t, b, b.Client, name), f
}

// state is what a market holds, read on a plain client.
type state struct {
	funds    map[string]int64
	inv      map[string][]string
	listings []market.Listing
	totals   market.Totals
}

func readState(t *testing.T, m *market.Market, users ...string) state {
	t.Helper()
	ctx := t.Context()
	s := state{funds: map[string]int64{}, inv: map[string][]string{}}
	for _, u := range users {
		f, err := m.Funds(ctx, u)
		require.NoError(t, err)
		s.funds[u] = f
		s.inv[u], err = m.Inventory(ctx, u)
		require.NoError(t, err)
	}
	var err error
	s.listings, err = m.Listings(ctx, 1000)
	require.NoError(t, err)
	s.totals, err = m.Totals(ctx)
	require.NoError(t, err)
	return s
}

// conserved reports whether the users' funds add up to the money supply and
// the inventories and listings hold every item once.
func (s state) conserved() bool {
	var money, items int64
	for _, f := range s.funds {
		money += f
	}
	for _, inv := range s.inv {
		items += int64(len(inv))
	}
	items += int64(len(s.listings))
	return money == s.totals.Money && items == s.totals.Items
}

func TestFaults_AddUser_AddFunds(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		m, plain, f := faultyMarket(t, b, "m")
		require.NoError(t, m.AddUser(ctx, "warm", "W", 0)) // the scripts cached on the server
		_, err := m.AddFunds(ctx, "warm", 1)
		require.NoError(t, err)
		h := redistest.NewHarness(t, f, "market AddUser/AddFunds")
		money := int64(1)
		users := []string{"warm"}
		for i := range 10 {
			id := fmt.Sprint("u", i)
			h.CallEach(func() { err = m.AddUser(ctx, id, "U", int64(i)) }, scripts)
			require.NoError(t, err, "a lost reply is not a refusal")
			money += int64(i)
			users = append(users, id)
			u, err := plain.User(ctx, id)
			h.Check(err == nil && u.Funds == int64(i), "user %s: %+v, %v", id, u, err)
			// The same call again (not a re-send): a true refusal.
			h.CallEach(func() { err = m.AddUser(ctx, id, "U", 5) }, scripts)
			h.Check(errors.Is(err, market.ErrUserExists), "AddUser of an existing user: %v", err)
		}
		want := int64(0)
		for i := range 20 {
			var n int64
			lose := []func([]string) bool{scripts}
			if i%5 == 4 {
				lose = append(lose, scripts) // the re-send's reply lost too
			}
			h.CallEach(func() { n, err = m.AddFunds(ctx, "u0", int64(i+1)) }, lose...)
			require.NoError(t, err)
			want += int64(i + 1)
			money += int64(i + 1)
			got, err := plain.Funds(ctx, "u0")
			require.NoError(t, err)
			h.Check(n == want && got == want, "AddFunds %d answered %d, the balance is %d, want %d", i, n, got, want)
		}
		h.CallEach(func() { _, err = m.AddFunds(ctx, "nobody", 1) }, scripts)
		h.Check(errors.Is(err, market.ErrUnknownUser), "AddFunds of an unknown user: %v", err)
		s := readState(t, plain, users...)
		h.Check(s.totals.Money == money && s.conserved(), "money supply %d, want %d; conserved %v", s.totals.Money, money, s.conserved())
	})
}

func TestFaults_AddItem_List_Buy(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		m, plain, f := faultyMarket(t, b, "m")
		require.NoError(t, m.AddUser(ctx, "s", "Seller", 0))
		require.NoError(t, m.AddUser(ctx, "b", "Buyer", 1000))
		require.NoError(t, m.AddItem(ctx, "s", "warm")) // the scripts cached on the server
		require.NoError(t, m.List(ctx, "s", "warm", 1))
		_, err := m.Buy(ctx, "b", "s", "warm", 1)
		require.NoError(t, err)
		h := redistest.NewHarness(t, f, "market AddItem/List/Buy")
		funds := map[string]int64{"s": 1, "b": 999}
		for i := range 10 {
			item := fmt.Sprint("i", i)
			h.CallEach(func() { err = m.AddItem(ctx, "s", item) }, scripts)
			require.NoError(t, err)
			s := readState(t, plain, "s", "b")
			h.Check(slices.Contains(s.inv["s"], item) && s.conserved(), "after AddItem %s: %+v", item, s)
			h.CallEach(func() { err = m.AddItem(ctx, "b", item) }, scripts)
			h.Check(errors.Is(err, market.ErrItemExists), "AddItem of a known item: %v", err)

			price := int64(i + 1)
			h.CallEach(func() { err = m.List(ctx, "s", item, price) }, scripts)
			require.NoError(t, err, "a lost reply is not ErrNotOwned")
			p, err := plain.Price(ctx, "s", item)
			h.Check(err == nil && p == price, "after List %s: price %d, %v", item, p, err)
			h.CallEach(func() { err = m.List(ctx, "s", item, price) }, scripts)
			h.Check(errors.Is(err, market.ErrNotOwned), "List of a listed item: %v", err)

			var paid int64
			h.CallEach(func() { paid, err = m.Buy(ctx, "b", "s", item, price) }, scripts)
			require.NoError(t, err, "a lost reply is not ErrNotListed")
			funds["b"] -= price
			funds["s"] += price
			s = readState(t, plain, "s", "b")
			h.Check(paid == price && maps(s.funds, funds) && slices.Contains(s.inv["b"], item) && s.conserved(),
				"after Buy %s: paid %d, state %+v, want funds %v", item, paid, s, funds)
			h.CallEach(func() { _, err = m.Buy(ctx, "b", "s", item, price) }, scripts)
			h.Check(errors.Is(err, market.ErrNotListed), "Buy of a sold item: %v", err)
		}
	})
}

func maps(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// The WATCH variants: EXEC's reply lost (settled by the record), EXEC's and
// the settling's replies lost (go-redis re-sends the settling SET), and the
// replies of WATCH and of the watched reads lost (nothing written: the call
// starts over).
func TestFaults_watchVariants(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		m, plain, f := faultyMarket(t, b, "m")
		require.NoError(t, m.AddUser(ctx, "s", "Seller", 0))
		require.NoError(t, m.AddUser(ctx, "b", "Buyer", 1000))
		funds := map[string]int64{"s": 0, "b": 1000}
		item := 0
		newItem := func() string {
			item++
			id := fmt.Sprint("i", item)
			require.NoError(t, plain.AddItem(ctx, "s", id))
			return id
		}
		require.NoError(t, m.ListWatch(ctx, "s", newItem(), 1)) // connections made, cluster layout learnt
		reads := map[string]func([]string) bool{
			"ListWatch": redistest.Commands("sismember"),
			"BuyWatch":  redistest.Commands("zscore"),
			"BuyLocked": redistest.Commands("zscore"),
		}
		faults := []struct {
			name  string
			match func(op string) []func([]string) bool
		}{
			{"EXEC", func(string) []func([]string) bool { return []func([]string) bool{exec} }},
			{"EXEC and settling", func(string) []func([]string) bool { return []func([]string) bool{exec, settling} }},
			{"WATCH", func(string) []func([]string) bool { return []func([]string) bool{watch} }},
			{"reads", func(op string) []func([]string) bool { return []func([]string) bool{reads[op]} }},
			{"EXEC and settling twice", func(string) []func([]string) bool {
				return []func([]string) bool{exec, settling, settling}
			}},
		}
		h := redistest.NewHarness(t, f, "market ListWatch/BuyWatch/BuyLocked")
		for _, fault := range faults {
			it := newItem()
			var err error
			h.CallEach(func() { err = m.ListWatch(ctx, "s", it, 7) }, fault.match("ListWatch")...)
			require.NoError(t, err, "ListWatch, %s lost", fault.name)
			p, perr := plain.Price(ctx, "s", it)
			h.Check(perr == nil && p == 7, "ListWatch, %s lost: price %d, %v", fault.name, p, perr)
			s := readState(t, plain, "s", "b")
			h.Check(!slices.Contains(s.inv["s"], it) && s.conserved(), "ListWatch, %s lost: %+v", fault.name, s)

			for _, v := range variants[1:] {
				it := newItem()
				require.NoError(t, plain.List(ctx, "s", it, 3))
				var paid int64
				h.CallEach(func() { paid, err = v.buy(m, ctx, "b", "s", it, 3) }, fault.match(v.name)...)
				require.NoError(t, err, "%s, %s lost", v.name, fault.name)
				funds["b"] -= 3
				funds["s"] += 3
				s := readState(t, plain, "s", "b")
				h.Check(paid == 3 && maps(s.funds, funds) && slices.Contains(s.inv["b"], it) && s.conserved(),
					"%s, %s lost: paid %d, state %+v, want funds %v", v.name, fault.name, paid, s, funds)
				// Sold: the same purchase again, its reads' reply lost, is
				// truly refused (a refusal sends no EXEC).
				h.CallEach(func() { _, err = v.buy(m, ctx, "b", "s", it, 3) }, reads[v.name])
				h.Check(errors.Is(err, market.ErrNotListed), "%s of a sold item, reads lost: %v", v.name, err)
			}
		}
	})
}

// An EXEC that did not commit (a watched key changed) and whose reply was
// lost: the settling finds no record, so nothing happened, and the call
// starts over and buys once.
func TestFaults_abortedExecLost(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		plain := newMarket(t, b, b.Client, "m")
		noise := 0
		h := &interferer{once: true, fn: func(ctx context.Context) {
			// Touch the watched listings, leaving them as they were.
			noise++
			mem := fmt.Sprint("noise.", noise)
			require.NoError(t, b.Client.ZAdd(ctx, key(b, "m", "listings"), redis.Z{Score: 1, Member: mem}).Err())
			require.NoError(t, b.Client.ZRem(ctx, key(b, "m", "listings"), mem).Err())
		}}
		var execs int
		count := &execHook{fn: func(ctx context.Context, cmds []redis.Cmder, next redis.ProcessPipelineHook) error {
			execs++
			return next(ctx, cmds)
		}}
		rdb, _, f := b.FaultyClient()
		addHook(rdb, h)
		addHook(rdb, count)
		m := newMarket(t, b, rdb, "m")
		book(t, plain)
		require.NoError(t, plain.AddItem(ctx, "17", "ItemB"))
		hr := redistest.NewHarness(t, f, "market BuyWatch/BuyLocked/ListWatch, aborted EXEC lost")
		for _, v := range variants[1:] {
			item := map[string]string{"BuyWatch": "ItemA", "BuyLocked": "ItemB"}[v.name]
			require.NoError(t, plain.List(ctx, "17", item, 10))
			h.ran, execs = 0, 0
			var (
				paid int64
				err  error
			)
			hr.CallEach(func() { paid, err = v.buy(m, ctx, "27", "17", item, 10) }, exec)
			require.NoError(t, err, v.name)
			require.Equal(t, 1, h.ran)
			require.Equal(t, 2, execs, "%s: the first EXEC aborted, the call started over", v.name)
			s := readState(t, plain, "17", "27")
			hr.Check(paid == 10 && slices.Contains(s.inv["27"], item) && s.conserved(), "%s: paid %d, %+v", v.name, paid, s)
		}
		h.ran, execs = 0, 0
		var err error
		hr.CallEach(func() { err = m.ListWatch(ctx, "27", "ItemA", 20) }, exec)
		require.NoError(t, err)
		require.Equal(t, 2, execs, "ListWatch: the first EXEC aborted, the call started over")
		p, err := plain.Price(ctx, "27", "ItemA")
		hr.Check(err == nil && p == 20, "ListWatch: price %d, %v", p, err)
		s := readState(t, plain, "17", "27")
		hr.Check(s.funds["27"] == 105 && s.funds["17"] == 20 && s.conserved(), "%+v", s)
	})
}

// A transaction that is still on its way to the server when the settling
// runs can no longer commit: the settling's SET changes the record, which
// the transaction WATCHes. Here the settling runs just before the EXEC is
// sent; the EXEC aborts, and the purchase (started over by the WATCH loop)
// happens once.
func TestMarket_settlingAbortsLateExec(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		ctx := t.Context()
		var aborted []error
		h := &execHook{fn: func(ctx context.Context, cmds []redis.Cmder, next redis.ProcessPipelineHook) error {
			for _, c := range cmds {
				if c.Name() == "set" && strings.Contains(fmt.Sprint(c.Args()[1]), "}:once:") && len(aborted) == 0 {
					// What the settling does, from another connection.
					err := b.Client.SetArgs(ctx, fmt.Sprint(c.Args()[1]), "0", redis.SetArgs{Mode: "NX", Get: true, TTL: time.Minute}).Err()
					require.ErrorIs(t, err, redis.Nil)
					err = next(ctx, cmds)
					aborted = append(aborted, err)
					return err
				}
			}
			return next(ctx, cmds)
		}}
		rdb, _ := hookedClient(t, b, h)
		m := newMarket(t, b, rdb, "m")
		plain := newMarket(t, b, b.Client, "m")
		book(t, plain)
		require.NoError(t, plain.List(ctx, "17", "ItemA", 10))
		paid, err := m.BuyWatch(ctx, "27", "17", "ItemA", 10)
		require.NoError(t, err)
		assert.Equal(t, int64(10), paid)
		require.Len(t, aborted, 1)
		assert.ErrorIs(t, aborted[0], redis.TxFailedErr, "the late EXEC aborted")
		s := readState(t, plain, "17", "27")
		assert.Equal(t, map[string]int64{"17": 10, "27": 115}, s.funds, "bought once")
		assert.True(t, s.conserved())
	})
}

// execHook runs fn in place of each MULTI/EXEC pipeline.
type execHook struct {
	fn func(ctx context.Context, cmds []redis.Cmder, next redis.ProcessPipelineHook) error
}

func (h *execHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *execHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *execHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "multi" {
			return h.fn(ctx, cmds, next)
		}
		return next(ctx, cmds)
	}
}

// addHook adds h to rdb; on a cluster, to each node's client (go-redis
// runs a ClusterClient's own hooks for commands and pipelines, but not for
// the WATCH transactions it hands to a node).
func addHook(rdb redis.UniversalClient, h redis.Hook) {
	if c, ok := rdb.(*redis.ClusterClient); ok {
		c.OnNewNode(func(n *redis.Client) { n.AddHook(h) })
		return
	}
	rdb.AddHook(h)
}

// stalledClient is a faulty client with a 1ms read timeout (the issue's
// setting), go-redis's default retries, and a pool timeout of a minute, so
// that the calls' reply records outlive the test (the record window is
// the client's retry window).
//
// dials counts the connections the client opens: a command that times out
// takes its connection with it, so the dials beyond the first few are the
// timeouts that made go-redis re-send (the fault happened).
func stalledClient(b *redistest.Backend) (rdb redis.UniversalClient, f *redistest.Faults, dials *atomic.Int64) {
	dials = new(atomic.Int64)
	rdb, _, f = b.FaultyClient(func(o *redis.UniversalOptions) {
		o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = time.Millisecond, time.Second, time.Minute
		dial := o.Dialer
		o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return dial(ctx, network, addr)
		}
	})
	return rdb, f, dials
}

// redials returns the connections opened since start, and fails t if
// there were too few to show that replies timed out.
func redials(t *testing.T, dials *atomic.Int64, start int64) int64 {
	t.Helper()
	n := dials.Load() - start
	assert.GreaterOrEqual(t, n, int64(10), "replies timed out (connections re-dialled)")
	return n
}

// The reproduction: 400 purchases, each of its own listing, through
// a client whose 1ms read timeout a stalling server keeps missing, so that
// go-redis re-sends (it used to answer ErrNotListed for purchases that had
// happened). Every answer must match the state: a success bought the item,
// no call is refused (each listing is there and affordable), an unknown
// outcome may have gone either way; funds and items are exact, and each
// purchase ran once (one reply record each).
func TestFaults_Buy_stalls(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const calls = 400
		ctx := t.Context()
		plain := newMarket(t, b, b.Client, "m")
		require.NoError(t, plain.AddUser(ctx, "s", "Seller", 0))
		require.NoError(t, plain.AddUser(ctx, "b", "Buyer", calls))
		for i := range calls {
			it := fmt.Sprint("i", i)
			require.NoError(t, plain.AddItem(ctx, "s", it))
			require.NoError(t, plain.List(ctx, "s", it, 1))
		}
		_, err := plain.Buy(ctx, "b", "s", "nothing", 1) // the script cached on the server
		require.ErrorIs(t, err, market.ErrNotListed)
		before := len(b.Keys(key(b, "m", "once:*")))
		rdb, f, dials := stalledClient(b)
		m := newMarket(t, b, rdb, "m")
		_, _ = m.Listings(ctx, 1) // connections made, cluster layout learnt

		start := dials.Load()
		stop := f.Stall()
		answers := make([]error, calls)
		var ok, unknown int
		for i := range calls {
			var paid int64
			paid, answers[i] = m.Buy(ctx, "b", "s", fmt.Sprint("i", i), 1)
			switch err := answers[i]; {
			case err == nil:
				ok++
				require.Equal(t, int64(1), paid)
			case errors.Is(err, ria.ErrOutcomeUnknown):
				unknown++
			}
		}
		stop()
		s := readState(t, plain, "s", "b")
		bought := map[string]bool{}
		for _, it := range s.inv["b"] {
			bought[it] = true
		}
		disagree := 0
		for i, err := range answers {
			it := fmt.Sprint("i", i)
			switch {
			case err == nil && !bought[it]:
				disagree++
				t.Errorf("Buy %s said bought; the buyer does not hold it", it)
			case err != nil && !errors.Is(err, ria.ErrOutcomeUnknown):
				disagree++
				t.Errorf("Buy %s refused (bought: %v): %v", it, bought[it], err)
			}
		}
		moved := int64(len(bought))
		if s.funds["b"] != calls-moved || s.funds["s"] != moved || int64(len(s.listings)) != calls-moved || !s.conserved() {
			disagree++
			t.Errorf("state after %d purchases: %+v", moved, s)
		}
		if ran := len(b.Keys(key(b, "m", "once:*"))) - before; int64(ran) != moved {
			disagree++
			t.Errorf("%d purchases ran, %d items moved", ran, moved)
		}
		t.Logf("fault harness: market Buy under 0-3ms stalls, ReadTimeout 1ms: calls=%d ok=%d unknown=%d bought=%d timeouts=%d disagreements=%d",
			calls, ok, unknown, moved, redials(t, dials, start), disagree)
		assert.Zero(t, disagree)
	})
}

// AddFunds under the same stalls: the balance grows by exactly the deposits
// that ran, each once; every success ran, and nothing else did except
// calls whose outcome is unknown.
func TestFaults_AddFunds_stalls(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const calls = 400
		ctx := t.Context()
		plain := newMarket(t, b, b.Client, "m")
		require.NoError(t, plain.AddUser(ctx, "u", "U", 0))
		_, err := plain.AddFunds(ctx, "u", 1) // the script cached on the server
		require.NoError(t, err)
		before := len(b.Keys(key(b, "m", "once:*")))
		rdb, f, dials := stalledClient(b)
		m := newMarket(t, b, rdb, "m")
		_, _ = m.Listings(ctx, 1)

		start := dials.Load()
		stop := f.Stall()
		var ok, unknown, other int
		for range calls {
			switch _, err := m.AddFunds(ctx, "u", 1); {
			case err == nil:
				ok++
			case errors.Is(err, ria.ErrOutcomeUnknown):
				unknown++
			default:
				other++
				t.Errorf("AddFunds: %v", err)
			}
		}
		stop()
		s := readState(t, plain, "u")
		ran := int64(len(b.Keys(key(b, "m", "once:*"))) - before)
		deposited := s.funds["u"] - 1
		disagree := other
		if deposited != ran || ran < int64(ok) || ran > int64(ok+unknown) || s.totals.Money != s.funds["u"] {
			disagree++
			t.Errorf("deposited %d, ran %d, ok %d, unknown %d, supply %d", deposited, ran, ok, unknown, s.totals.Money)
		}
		t.Logf("fault harness: market AddFunds under 0-3ms stalls, ReadTimeout 1ms: calls=%d ok=%d unknown=%d deposited=%d timeouts=%d disagreements=%d",
			calls, ok, unknown, deposited, redials(t, dials, start), disagree)
		assert.Zero(t, disagree)
	})
}

// The WATCH variants under the same stalls: WATCH, the reads or EXEC time
// out, the loop starts over or settles EXEC. A success bought the item; an
// error that does not wrap ria.ErrOutcomeUnknown (a refusal, or a transport
// error the call could not get past) means nothing changed.
func TestFaults_watch_stalls(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b *redistest.Backend) {
		const calls = 150
		ctx := t.Context()
		for _, v := range variants[1:] {
			t.Run(v.name, func(t *testing.T) {
				plain := newMarket(t, b, b.Client, v.name)
				require.NoError(t, plain.AddUser(ctx, "s", "Seller", 0))
				require.NoError(t, plain.AddUser(ctx, "b", "Buyer", calls))
				for i := range calls {
					it := fmt.Sprint("i", i)
					require.NoError(t, plain.AddItem(ctx, "s", it))
					require.NoError(t, plain.List(ctx, "s", it, 1))
				}
				rdb, f, dials := stalledClient(b)
				m := newMarket(t, b, rdb, v.name)
				_, _ = m.Listings(ctx, 1)
				start := dials.Load()
				stop := f.Stall()
				answers := make([]error, calls)
				var ok, unknown, failed int
				for i := range calls {
					_, answers[i] = v.buy(m, ctx, "b", "s", fmt.Sprint("i", i), 1)
					switch err := answers[i]; {
					case err == nil:
						ok++
					case errors.Is(err, ria.ErrOutcomeUnknown):
						unknown++
					default:
						failed++
					}
				}
				stop()
				s := readState(t, plain, "s", "b")
				bought := map[string]bool{}
				for _, it := range s.inv["b"] {
					bought[it] = true
				}
				disagree := 0
				for i, err := range answers {
					it := fmt.Sprint("i", i)
					if err == nil && !bought[it] || err != nil && !errors.Is(err, ria.ErrOutcomeUnknown) && bought[it] {
						disagree++
						t.Errorf("%s %s: answered %v, bought %v", v.name, it, err, bought[it])
					}
					if err != nil && (errors.Is(err, market.ErrNotListed) || errors.Is(err, market.ErrContended)) {
						disagree++
						t.Errorf("%s %s: a refusal for an outage: %v", v.name, it, err)
					}
				}
				moved := int64(len(bought))
				if s.funds["b"] != calls-moved || s.funds["s"] != moved || !s.conserved() {
					disagree++
					t.Errorf("state after %d purchases: %+v", moved, s)
				}
				t.Logf("fault harness: market %s under 0-3ms stalls, ReadTimeout 1ms: calls=%d ok=%d unknown=%d failed=%d bought=%d timeouts=%d disagreements=%d",
					v.name, calls, ok, unknown, failed, moved, redials(t, dials, start), disagree)
				assert.Zero(t, disagree)
			})
		}
	})
}
