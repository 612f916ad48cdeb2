// Package option applies functional options. A nil option is refused
// with an error rather than called: options are user input, and user
// input must not panic.
package option

import "fmt"

// Apply calls each of opts on o in order. A nil option is an error naming
// its position ("nil option (2 of 3)"); o may then be partly set.
func Apply[T any, O ~func(*T)](o *T, opts []O) error {
	for i, f := range opts {
		if f == nil {
			return fmt.Errorf("nil option (%d of %d)", i+1, len(opts))
		}
		f(o)
	}
	return nil
}
