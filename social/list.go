package social

import (
	"context"
	"errors"
	"fmt"

	"github.com/ria-go/ria/internal/script"
)

// MaxLists is the most user lists one user may own.
const MaxLists = 100

var (
	// ErrListTaken is returned by [Network.CreateList] when the owner
	// has a list of that name.
	ErrListTaken = errors.New("social: list exists")
	// ErrNoList is returned when a user list does not exist.
	ErrNoList = errors.New("social: no such list")
	// ErrTooManyLists is returned by [Network.CreateList] when the owner
	// has [MaxLists] lists.
	ErrTooManyLists = errors.New("social: too many lists")
)

// errNotMember is the refusal of listremove.lua (RemoveFromList answers
// false) and of unlisted.lua (RemoveFromList goes on to the owner's side).
var errNotMember = errors.New("social: not a member")

// checkList checks a list name (the rules of a login; case-insensitive)
// and returns it in lower case.
func checkList(name string) (string, error) {
	if err := checkLogin(name); err != nil {
		return "", fmt.Errorf("list name%s", err.Error()[len("login"):])
	}
	return ID(name), nil
}

// CreateList creates the user list name of user owner (create_user_list)
// in one round trip. A name follows the rules of a login and is
// case-insensitive. It returns [ErrNoUser] if owner does not exist,
// [ErrListTaken] if the list exists (or a [Network.DeleteList] of it was
// cut in half: repeat it) and [ErrTooManyLists] if owner has [MaxLists]
// lists, having written nothing.
func (n *Network) CreateList(ctx context.Context, owner, name string) error {
	owner, err := checkUID("owner", owner)
	if err == nil {
		name, err = checkList(name)
	}
	if err != nil {
		return fmt.Errorf("social: create list: %w", err)
	}
	keys := []string{n.userKey(owner), n.listsKey(owner), n.listKey(owner, name), n.listTimelineKey(owner, name)}
	v, err := listCreateScript.RunOnce(ctx, n.rdb, n.onceKey(owner), keys, name, MaxLists)
	if err != nil {
		return fmt.Errorf("social: create list %q of %q: %w", name, owner, refusal(err))
	}
	if c, err := listCreateScript.AsInt64(v); err != nil || c != 1 {
		return fmt.Errorf("social: create list %q of %q: script %s: unexpected reply %v", name, owner, listCreateScript.Name(), v)
	}
	return nil
}

// Lists returns the names of owner's lists, oldest first, in one round
// trip.
func (n *Network) Lists(ctx context.Context, owner string) ([]string, error) {
	return n.members(ctx, "lists", owner, 0, MaxLists, n.listsKey, "social lists")
}

// ListMembers returns up to count (1 to [MaxPage]) members of owner's list
// name from position offset, in the order they were added, in one round
// trip. An unknown list has no members.
func (n *Network) ListMembers(ctx context.Context, owner, name string, offset, count int) ([]string, error) {
	name, err := checkList(name)
	if err != nil {
		return nil, fmt.Errorf("social: list members: %w", err)
	}
	return n.members(ctx, "list members", owner, offset, count, func(uid string) string { return n.listKey(uid, name) }, "social list members")
}

// ListPage returns a page of the timeline of owner's list name, as
// [Network.Page] does for a home timeline (same round trips).
func (n *Network) ListPage(ctx context.Context, owner, name string, offset, count int) ([]Status, int, error) {
	owner, err := checkUID("owner", owner)
	if err == nil {
		name, err = checkList(name)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("social: list page: %w", err)
	}
	return n.page(ctx, owner, "list "+name, n.listTimelineKey(owner, name), "social list timeline", offset, count)
}

// AddToList adds user member to owner's list name (follow_user_list) and
// returns true, or false if it was there (a repeated call completes one
// cut in half, as [Network.Follow] does). member's recent statuses (up to
// the timeline cap) are copied into the list's timeline, and from then on
// member's posts are fed to it like to a follower's home timeline (the
// same fan-out passes: syndicate_status_list). Adding does not make owner
// follow member. Three round trips (rarely four, when member posted or
// deleted a status meanwhile), in the order of Follow:
// a read-only script in member's slot, owner's side, member's side; both
// sides are once-scripts, as Follow's are, so a RemoveFromList that saw
// the add's writes stays done. It returns [ErrNoList] or [ErrNoUser]
// (member does not exist), having written nothing.
func (n *Network) AddToList(ctx context.Context, owner, name, member string) (bool, error) {
	owner, name, member, err := checkListArgs("add to list", owner, name, member)
	if err != nil {
		return false, err
	}
	entry := owner + "/" + name
	recent, read, err := n.profile(ctx, member, n.listedKey(member), "social listed")
	if err != nil {
		return false, fmt.Errorf("social: add %q to list %q: %w", member, entry, err)
	}
	args := append([]any{name, member, n.cap}, recent...)
	tl, members, gone := n.listTimelineKey(owner, name), n.listKey(owner, name), n.goneKey(owner)
	v, err := listAddScript.RunOnce(ctx, n.rdb, n.onceKey(owner), []string{n.listsKey(owner), members, tl, gone}, args...)
	if err != nil {
		return false, fmt.Errorf("social: add %q to list %q: %w", member, entry, refusal(err))
	}
	added, err := listAddScript.AsInt64(v)
	if err != nil {
		return false, fmt.Errorf("social: add %q to list %q: %w", member, entry, err)
	}
	v, err = listedScript.RunOnce(ctx, n.rdb, n.onceKey(member), []string{n.userKey(member), n.listedKey(member), n.profileKey(member)}, append([]any{entry, n.cap}, read...)...)
	if err != nil {
		return false, fmt.Errorf("social: add %q to list %q: %w", member, entry, script.Unknown(err))
	}
	if err := n.copyNew(ctx, member, tl, members, gone, "list", recent, listedScript, v); err != nil {
		return false, fmt.Errorf("social: add %q to list %q: %w", member, entry, err)
	}
	return added == 1, nil
}

// RemoveFromList removes user member from owner's list name and returns
// true, or false if it was not a member (then nothing changes). Every
// status of member leaves the list's timeline. Three round trips, as
// [Network.Unfollow], whose writing steps are once-scripts here too; a
// repeated call completes one cut in half. It returns [ErrNoList] if the
// list does not exist.
func (n *Network) RemoveFromList(ctx context.Context, owner, name, member string) (bool, error) {
	owner, name, member, err := n.listPair(ctx, "remove from list", owner, name, member)
	if err != nil {
		return false, err
	}
	entry := owner + "/" + name
	// NOTMEMBER (nothing written): owner's side may still hold member.
	_, err = unlistedScript.RunOnce(ctx, n.rdb, n.onceKey(member), []string{n.listedKey(member)}, entry, 1)
	if err != nil && !errors.Is(refusal(err), errNotMember) {
		return false, fmt.Errorf("social: remove %q from list %q: %w", member, entry, script.Unknown(err))
	}
	v, err := listRemoveScript.RunOnce(ctx, n.rdb, n.onceKey(owner), []string{n.listKey(owner, name), n.listTimelineKey(owner, name)}, member)
	if errors.Is(refusal(err), errNotMember) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("social: remove %q from list %q: %w", member, entry, err)
	}
	removed, err := listRemoveScript.AsInt64(v)
	if err != nil {
		return false, fmt.Errorf("social: remove %q from list %q: %w", member, entry, err)
	}
	return removed == 1, nil
}

// listPage is how many members one step of [Network.DeleteList] handles.
const listPage = 500

// DeleteList deletes owner's list name: its timeline, its members, and
// the list's entry in each member's side (which feeds the list). First,
// in owner's slot, the list leaves owner's lists: from then on
// [Network.ListPage] and [Network.ListMembers] may show what is left of
// it, AddToList and RemoveFromList answer [ErrNoList], and
// [Network.CreateList] of the name answers [ErrListTaken] until the
// delete is done. Then, 500 members at a time, each member's side drops
// the list (pipelined per node) and owner's side drops those members;
// with the last page the timeline and members keys go. Round trips: 1
// for a list with no members, else 1 plus 2 per page of 500 members (1
// per node for the members' sides on a Cluster).
//
// It returns [ErrNoList] if there is no such list. A DeleteList cut in
// half (a crash, or an error such as a member's key of another type,
// which it returns as a *ria.KeyError) leaves the list gone from owner's
// lists with some members left; calling DeleteList again (once such a key
// is mended) finishes it. An AddToList racing a delete can leave the list
// in the new member's side after the delete: the fan-out feeds a list
// only while its members hold the author, so such an entry feeds nothing.
// A delete that finds the name among owner's lists again (a CreateList
// came after it finished) stops without touching the new list; but a
// DeleteList and a CreateList plus AddToList of the same name running at
// once can leave a new member's side without the list, which repeating
// the AddToList repairs (the members' sides are dropped by a plain script,
// pipelined, keeping no reply record per member: a re-send of it is such
// a race too).
func (n *Network) DeleteList(ctx context.Context, owner, name string) error {
	owner, err := checkUID("owner", owner)
	if err == nil {
		name, err = checkList(name)
	}
	if err != nil {
		return fmt.Errorf("social: delete list: %w", err)
	}
	entry := owner + "/" + name
	members, tl := n.listKey(owner, name), n.listTimelineKey(owner, name)
	v, err := listDropScript.RunOnce(ctx, n.rdb, n.onceKey(owner), []string{n.listsKey(owner), members, tl}, name, listPage)
	for err == nil {
		var page []string
		if page, err = listDropScript.AsStrings(v); err != nil || len(page) == 0 {
			break
		}
		calls := make([]*script.Call, len(page))
		for i, m := range page {
			calls[i] = listedDropScript.Call([]string{n.listedKey(m)}, entry)
		}
		if err = send(ctx, n.rdb, calls); err != nil {
			err = script.Unknown(err)
			break
		}
		args := make([]any, 0, 2+len(page))
		args = append(args, name, listPage)
		for _, m := range page {
			args = append(args, m)
		}
		v, err = listGoneScript.Run(ctx, n.rdb, []string{n.listsKey(owner), members, tl}, args...)
	}
	if err != nil {
		return fmt.Errorf("social: delete list %q: %w", entry, refusal(err))
	}
	return nil
}

// checkListArgs checks the arguments of a list change.
func checkListArgs(op, owner, name, member string) (string, string, string, error) {
	owner, err := checkUID("owner", owner)
	if err == nil {
		name, err = checkList(name)
	}
	if err == nil {
		member, err = checkUID("member", member)
	}
	if err != nil {
		return "", "", "", fmt.Errorf("social: %s: %w", op, err)
	}
	return owner, name, member, nil
}

// listPair checks the arguments of a list removal and that the list exists.
func (n *Network) listPair(ctx context.Context, op, owner, name, member string) (string, string, string, error) {
	owner, name, member, err := checkListArgs(op, owner, name, member)
	if err != nil {
		return "", "", "", err
	}
	// A list that exists now exists when the third step runs unless a
	// DeleteList runs meanwhile (then the member it removes is gone with
	// the list); its keys are checked before the second step writes.
	keys := []string{n.listsKey(owner), n.listKey(owner, name), n.listTimelineKey(owner, name), n.goneKey(owner)}
	ex, err := listCheckScript.Run(ctx, n.rdb, keys, name)
	if err != nil {
		return "", "", "", fmt.Errorf("social: %s %q %q: %w", op, owner+"/"+name, member, err)
	}
	if ex != int64(1) {
		return "", "", "", fmt.Errorf("social: %s %q %q: %w", op, owner+"/"+name, member, ErrNoList)
	}
	return owner, name, member, nil
}
