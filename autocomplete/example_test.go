package autocomplete_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ria-go/ria/autocomplete"
)

func Example() {
	srv, _ := miniredis.Run() // stands in for a real server
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	ac, err := autocomplete.New(rdb)
	if err != nil {
		panic(err)
	}
	_ = ac.Join(ctx, "guild", "jeff", "Jenny", "jack", "jennifer")
	names, _ := ac.Complete(ctx, "guild", "JE", 10)
	fmt.Println(names)
	_ = ac.Leave(ctx, "guild", "jeff")
	names, _ = ac.Complete(ctx, "guild", "je", 10)
	fmt.Println(names)

	words := strings.Fields("these are some words that we will be autocompleting on")
	_ = ac.Join(ctx, "words", words...)
	th, _ := ac.Complete(ctx, "words", "th", 10)
	w, _ := ac.Complete(ctx, "words", "w", 10)
	fmt.Println(th, w)
	// Output:
	// [jeff jennifer Jenny]
	// [jennifer Jenny]
	// [that these] [we will words]
}

func ExampleCompleter_Contacts() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	ac, _ := autocomplete.New(rdb, autocomplete.WithRecent(3))
	for _, c := range []string{"Åsa", "åke", "bob", "Ærø"} {
		_ = ac.AddContact(ctx, "me", c)
	}
	_ = ac.AddContact(ctx, "me", "åke") // back to the front
	all, _ := ac.RecentContacts(ctx, "me")
	fmt.Println(all) // Åsa fell off: only 3 kept
	names, _ := ac.Contacts(ctx, "me", "Å")
	fmt.Println(names)
	// Output:
	// [åke Ærø bob]
	// [åke]
}

// Listing a whole member set, a page at a time, in folded order.
func ExampleCompleter_Members() {
	srv, _ := miniredis.Run()
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	ac, _ := autocomplete.New(rdb)
	_ = ac.Join(ctx, "guild", "jeff", "Jenny", "jack", "jennifer", "Ann")
	after := ""
	for {
		page, err := ac.Members(ctx, "guild", after, 2)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(page)
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1]
	}
	// Output:
	// [Ann jack]
	// [jeff jennifer]
	// [Jenny]
}
