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
// go-redis re-sends a command whose reply was lost (a dropped connection, a
// read timeout; MaxRetries, 3 by default), so a script may run twice, with
// another client's writes in between. Running a write again is not
// harmless then: a second AddContact of X would move X back in front of a
// contact another client added after it, or add X back after another
// client removed it; a second Join would undo a later Leave, a second
// Leave or RemoveContact a later Join or AddContact. So every write,
// [Completer.AddContact], [Completer.RemoveContact], [Completer.Join] and
// [Completer.Leave], runs a once-script: the first run records its reply
// under a key of its own call, <prefix>{<user or set>}:once:<nonce>, a
// STRING that lives for the client's retry window, and a re-send is
// answered from it and changes nothing. The window is read from the
// client's options: MaxRetries times (PoolTimeout + WriteTimeout +
// ReadTimeout + MaxRetryBackoff), plus a second, at most 5 minutes (and at
// most the call's ctx deadline plus a second); 52 s with go-redis v9's
// defaults, none (no record is written) with MaxRetries -1 (on a Cluster,
// MaxRedirects -1 too). Each call keeps one such record, about 110 bytes
// (measured on Redis 7.0 with the default prefix), for that window, so
// 1,000 writes/s keep some 6 MB of records with the defaults; give a busy
// client fewer retries or shorter timeouts to shrink it. A refused call (a
// *ria.KeyError) keeps none and writes nothing: a re-send is refused
// alike. Still one round trip per call.
//
// When every attempt lost its reply, the call returns an error wrapping
// ria.ErrOutcomeUnknown: it may or may not have taken effect; read the
// state to find out. Calling again leaves the state the call asks for (the
// contact in front or gone, the name in or out of the set), overriding
// what another client may have done meanwhile.
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
//	<prefix>{<user>}:recent       LIST contacts, most recent first
//	<prefix>{<set>}:members       ZSET Fold(name) "\x00" name, score 0
//	<prefix>{<user>}:once:<nonce> STRING the reply of one AddContact or
//	                              RemoveContact call (expires: retry window)
//	<prefix>{<set>}:once:<nonce>  STRING the reply of one Join or Leave call
//	                              (expires: retry window)
//
// The default prefix is "autocomplete:".
//
// # Cluster
//
// Each call touches one key (and a write its reply record, which shares
// the key's hash tag), so one slot: a user's contacts live in the user's
// slot, a member set in its own. A member set is one key, so it
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
