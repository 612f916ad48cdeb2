package block

import (
	"testing"
	"time"
)

func TestFor(t *testing.T) {
	const d = 3 * time.Millisecond
	t0 := time.Now()
	For(d)
	if got := time.Since(t0); got < d {
		t.Fatalf("For(%v) returned after %v", d, got)
	}
}
