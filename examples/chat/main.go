// Command chat runs the group chat of Redis in Action 6.5: joe creates a
// chat with jeff and jenny and sends messages; jeff waits for them
// (blocking, woken by each send), jenny fetches when she comes back; jack
// joins and sees only what follows; joe sends a log file to the others,
// who read it as a stream (6.6); everyone leaves and the chat is gone.
// It checks that each member got every message once, in order, and exits
// non-zero if not.
//
// It uses the server named by REDIS_URL (or REDIS_CLUSTER), or an embedded
// miniredis. Each run uses a prefix of its own; leaving deletes the chat,
// and the reply records of the sends expire after the retry window.
package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ria-go/ria/chat"
	"github.com/ria-go/ria/examples/demo"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
}

func run() error {
	rdb, closeFn, err := demo.Client()
	if err != nil {
		return err
	}
	defer closeFn()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := chat.New(rdb, chat.WithFileWindow(256<<10), chat.WithPrefix("example:chat:"+strconv.FormatInt(time.Now().UnixNano(), 36)+":"))
	if err != nil {
		return err
	}

	// jeff waits for messages while joe writes.
	type got struct {
		lines []string
		err   error
	}
	jeff := make(chan got, 1)
	go func() {
		var lines []string
		for len(lines) < 4 {
			ms, err := cs.Wait(ctx, "jeff")
			if err != nil {
				jeff <- got{err: err}
				return
			}
			lines = append(lines, show(ms)...)
		}
		jeff <- got{lines: lines}
	}()

	if _, err := cs.Create(ctx, "lunch", "joe", []string{"jeff", "jenny"}, "message 1"); err != nil {
		return err
	}
	for i := 2; i <= 4; i++ {
		m, err := cs.Send(ctx, "lunch", "joe", fmt.Sprintf("message %d", i))
		if err != nil {
			return err
		}
		fmt.Printf("joe sent #%d at %s\n", m.ID, m.Time.Format(time.TimeOnly))
	}
	g := <-jeff
	if g.err != nil {
		return g.err
	}
	fmt.Println("jeff, waiting, got:", g.lines)

	unread, err := cs.Unread(ctx, "jenny")
	if err != nil {
		return err
	}
	fmt.Println("jenny has", unread["lunch"], "unread")
	ms, err := cs.Fetch(ctx, "jenny")
	if err != nil {
		return err
	}
	jenny := show(ms)
	fmt.Println("jenny fetched:", jenny)
	if again, err := cs.Fetch(ctx, "jenny"); err != nil || len(again) != 0 {
		return fmt.Errorf("jenny's second fetch: %d messages, %v", len(again), err)
	}

	if err := cs.Join(ctx, "lunch", "jack"); err != nil {
		return err
	}
	if _, err := cs.Send(ctx, "lunch", "jenny", "welcome jack"); err != nil {
		return err
	}
	ms, err = cs.Fetch(ctx, "jack")
	if err != nil {
		return err
	}
	fmt.Println("jack, after joining, fetched:", show(ms))

	want := []string{"joe: message 1", "joe: message 2", "joe: message 3", "joe: message 4"}
	if !slices.Equal(g.lines, want) || !slices.Equal(jenny, want) || !slices.Equal(show(ms), []string{"jenny: welcome jack"}) {
		return fmt.Errorf("members did not get every message once, in order")
	}
	if err := sendFile(ctx, cs); err != nil {
		return err
	}
	for _, u := range []string{"joe", "jeff", "jenny", "jack"} {
		if err := cs.Leave(ctx, "lunch", u); err != nil {
			return err
		}
	}
	if _, err := cs.Send(ctx, "lunch", "joe", "anyone?"); err == nil {
		return fmt.Errorf("the chat outlived its members")
	}
	fmt.Println("everyone left: the chat is deleted")
	return nil
}

// sendFile has joe send a log of 10,000 lines to jeff and jenny (jack
// reads it too: he is a member now) while they read it as a stream; at
// most a 256 KiB window waits in Redis at a time.
func sendFile(ctx context.Context, cs *chat.Chats) error {
	var log bytes.Buffer
	for i := range 10000 {
		fmt.Fprintf(&log, "line %d\n", i)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	wg.Go(func() {
		if _, err := cs.SendFile(ctx, "lunch", "joe", "app.log", bytes.NewReader(log.Bytes())); err != nil {
			errs <- err
		}
	})
	for _, u := range []string{"jeff", "jenny", "jack"} {
		wg.Go(func() {
			var ref chat.FileRef
			for ref.File == "" { // the file is announced in the chat
				ms, err := cs.Wait(ctx, u)
				if err != nil {
					errs <- err
					return
				}
				for _, m := range ms {
					_ = m.Decode(&ref)
				}
			}
			fr, err := cs.OpenFile(ctx, "lunch", u, ref.File)
			if err != nil {
				errs <- err
				return
			}
			n := 0
			for sc := bufio.NewScanner(fr); sc.Scan(); {
				n++
			}
			fmt.Printf("%s received %s: %d lines\n", u, ref.Name, n)
			if n != 10000 {
				errs <- fmt.Errorf("%s got %d lines, want 10000", u, n)
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func show(ms []chat.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		var text string
		_ = m.Decode(&text)
		out[i] = m.Sender + ": " + text
	}
	return out
}
