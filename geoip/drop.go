package geoip

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/ria-go/ria/internal/keys"
	"github.com/ria-go/ria/internal/script"
)

// ErrDropped is returned (wrapped) by an import whose staged data a
// [DB.Drop] deleted while it ran: nothing of it went live.
var ErrDropped = errors.New("geoip: data set dropped during the import")

var (
	//go:embed drop.lua
	dropLua string
	// dropFirst runs the first step, which UNLINKs the live data set:
	// run again after a lost reply it would delete an import committed
	// since, so a re-send is answered from the record of its first reply.
	// dropStep runs the later steps, which are idempotent.
	dropFirst = script.NewOnce("geoip drop", dropLua)
	dropStep  = script.New("geoip drop scan", dropLua)
)

// dropScan is the SCAN COUNT of one step of Drop: about how many keys of
// the node one step visits (and so bounds the time the step holds the
// server).
const dropScan = 1000

// Drop deletes the data set: its live ranges, version and records, and
// what imports left staged, so that it can be retired. Its first step (one
// script) UNLINKs the live keys: readers see the whole data set before it
// and nothing after it (a Lookup is not found, [DB.Version] says ""). Big
// keys are freed in the background (UNLINK). The staged keys and records
// of other versions are then found by a SCAN of the node holding the data
// set, a bounded step (about 1,000 keys visited) per round trip, the first
// in the same script: one round trip in all when that node holds fewer
// than about 1,000 keys, one more per further 1,000 or so.
//
// An import running meanwhile whose staged keys Drop deletes fails with
// [ErrDropped] and leaves nothing: for each such version Drop sets a
// tombstone, which the import's commit finds (see the package doc's Keys).
// An import that committed before Drop's first step is dropped with the
// rest; one whose staged keys Drop's scan does not meet (it committed
// while Drop scanned, or staged only after the scan had passed) goes live
// as if it had run after Drop.
//
// Dropping a data set that is gone, or never was, is not an error. A
// re-send after a lost reply changes nothing more: the first step's is
// answered from a record of its first reply (run again, it would delete
// an import committed since), and each later step is idempotent (a re-run
// finds less to delete). When no reply comes the error wraps
// ria.ErrOutcomeUnknown, and calling Drop again finishes the work. A key of the wrong type at the ranges,
// the version or the live records gives a *ria.KeyError and changes
// nothing.
func (db *DB) Drop(ctx context.Context) error {
	match := keys.GlobEscape(db.keys.Key(db.name, "")) + "*"
	ks := []string{db.rangesKey(), db.versionKey()}
	cursor := "0"
	for {
		args := []any{cursor, match, db.dropScan,
			db.recordsPrefix(), db.stagingKey(""), db.tombstoneKey(""), stagingTTL.Milliseconds(), db.markerKey("")}
		var v any
		var err error
		if cursor == "0" {
			v, err = dropFirst.RunOnce(ctx, db.rdb, db.onceKey(), ks, args...)
		} else {
			v, err = dropStep.Run(ctx, db.rdb, ks, args...)
		}
		if err != nil {
			return fmt.Errorf("geoip: drop: %w", script.Unknown(err))
		}
		r, ok := v.([]any)
		if ok && len(r) == 2 {
			cursor, ok = r[0].(string)
		}
		if !ok {
			return fmt.Errorf("geoip: drop: unexpected reply %v", v)
		}
		if cursor == "0" {
			return nil
		}
	}
}
