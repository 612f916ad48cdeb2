// Package autocomplete completes names by prefix (Redis in Action 6.1):
// a user's recent contacts, and named member sets such as the book's
// guilds.
//
//	ac, err := autocomplete.New(rdb)
//	err = ac.AddContact(ctx, "joe", "Jenny")     // moves Jenny to the front
//	names, err := ac.Contacts(ctx, "joe", "je")  // recent first
//	err = ac.Join(ctx, "guild", "jeff", "Jenny", "jack")
//	names, err = ac.Complete(ctx, "guild", "JE", 10) // [jeff Jenny]
//	page, err := ac.Members(ctx, "guild", "", 100)   // the first 100 names
//
// # Recent contacts
//
// [Completer.AddContact] moves a contact to the front of a user's list (or
// adds it) and keeps the newest [WithRecent] ([DefaultRecent], the book's
// 100); [Completer.RemoveContact] drops one; [Completer.Contacts] returns
// those that start with a prefix, most recent first (the book's
// add_update_contact, remove_contact, fetch_autocomplete_list). The list
// is short and is filtered in the client.
//
// # Member sets
//
// [Completer.Join] and [Completer.Leave] add and remove names;
// [Completer.Complete] returns up to n names that start with a prefix. Each
// name is stored as one ZSET member, its folded form ([Fold]), a NUL byte
// and the name as spelled, all with score 0, so the set sorts by folded
// form and the names that start with a prefix p are the members between
// Fold(p)+"\x00" and Fold(p)+"\xff". Complete is one ZRANGEBYLEX ...
// LIMIT 0 n over that range: O(log N + n) on the server, nothing written.
// The book's autocomplete_on_prefix instead inserts two sentinel members
// under WATCH, retries when a concurrent join or leave touches the set,
// and works for the letters a to z only. [Completer.Members] lists a set
// in the same order, a page of up to n names after a given name at a
// time (one ZRANGEBYLEX ... LIMIT 0 n from that name's member on), for an
// operator or a migration.
//
// # Guarantees
//
//   - Matching is case-insensitive for any UTF-8 name, rune by rune under
//     Unicode simple case folding ("ÆRØ" finds "Ærøskøbing", "K" the
//     Kelvin sign), and returns names as they were spelled. Accents are
//     not removed and strings are not normalised (see [Fold]).
//   - Complete agrees with a linear filter of the names, in folded order,
//     under concurrent joins and leaves (no retry, no sentinel).
//   - Paging with Members lists every name that is in the set from the
//     first page to the last exactly once, in order; a name that joins or
//     leaves meanwhile is listed if its place is read while it is there.
//   - Bad input (empty or over-long names, prefixes, users or sets;
//     invalid UTF-8 or NUL bytes; braces in user or set names; n out of
//     range; more than [MaxBatch] names) is an error wrapping [ErrEmpty],
//     [ErrTooLong] or [ErrInvalid], and nothing is written.
//
// # Lost replies
//
// Every write is naturally idempotent: AddContact removes the contact
// before pushing it (a re-send leaves the same list), RemoveContact,
// Join and Leave are set operations. An error that is not a server reply
// wraps ria.ErrOutcomeUnknown.
//
// # Wrong types
//
// The scripts check the type of their key before writing; a key of
// another type gives a *ria.KeyError naming it and its role ("autocomplete
// recent contacts", "autocomplete members") and nothing is written. A read
// that meets one gives the same error (one more round trip, TYPE, on that
// path only). A member that does not hold a NUL byte gives a
// *ria.KeyError wrapping ria.ErrCorrupt.
//
// # Round trips
//
// One for every call: AddContact, RemoveContact and Join/Leave one script
// each; Contacts and RecentContacts one LRANGE; Complete one ZRANGEBYLEX;
// Members one ZRANGEBYLEX per page.
//
// # Key schema
//
//	<prefix>{<user>}:recent   LIST contacts, most recent first
//	<prefix>{<set>}:members   ZSET Fold(name) "\x00" name, score 0
//
// The default prefix is "autocomplete:".
//
// # Cluster
//
// Each call touches one key, so one slot: a user's contacts live in the
// user's slot, a member set in its own. A member set is one key, so it
// does not spread over nodes; shard very large sets by a leading letter
// yourself if one node cannot hold one. Members pages through the one key
// of a set, so it reads one node.
//
// # Limits
//
// Names, contacts and prefixes are at most [MaxName] bytes; a completion
// or a page of Members returns at most [MaxCompletions] names; names with
// one folded form are ordered by their bytes.
//
// # Performance
//
// `go test -bench Complete ./autocomplete/` (make bench installs the word
// lists and RediSearch). One run on a shared 2-core machine, 2-letter
// prefixes, 10 completions: over 1.15 million English, French and Polish
// dictionary words, Complete takes 0.99x the time of the same ZRANGEBYLEX
// sent by hand (the limit), and RediSearch 1.2's FT.SUGGET 25x as long;
// over generated a-z names, 1,000,000 names cost 0.93-1.23x of 10,000, and
// the book's sentinel method, retried under concurrent joins, about 400x.
package autocomplete
