package report

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/ria-go/ria/bench/internal/server"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestRatio(t *testing.T) {
	if got := Ratio(3, 2); got != "1.50x" {
		t.Errorf("Ratio(3, 2) = %q", got)
	}
	if got := Ratio(3, 0); got != "inf" {
		t.Errorf("Ratio(3, 0) = %q", got)
	}
}

func TestTable(t *testing.T) {
	var b bytes.Buffer
	Table(&b, [][]string{{"library", "latency"}, {"ria", "965µs"}, {"asynq", "695.8ms"}})
	want := "library  latency\n" +
		"ria        965µs\n" +
		"asynq    695.8ms\n"
	if b.String() != want {
		t.Errorf("Table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestPerCommand(t *testing.T) {
	calls := []server.Calls{{"get": 10, "set": 4}, {"get": 6}, {"get": 9}}
	got := PerCommand(calls, []float64{2, 0, 3})
	// get: 5, 0 (no operations), 3; set: 2, 0, 0.
	if len(got) != 2 || got["get"] != 3 || got["set"] != 0 {
		t.Errorf("PerCommand = %v, want map[get:3 set:0]", got)
	}
}

func TestCommands(t *testing.T) {
	var b bytes.Buffer
	per := []map[string]float64{{"set": 1, "evalsha": 2, "get": 1, "del": 0.001}, {}}
	Commands(&b, "op", []string{"ria", "asynq"}, func(i int) map[string]float64 { return per[i] })
	want := "\n  server commands per op, by command (medians):\n" +
		"  ria    evalsha 2.00, get 1.00, set 1.00\n" +
		"  asynq  \n"
	if b.String() != want {
		t.Errorf("Commands:\n%q\nwant:\n%q", b.String(), want)
	}
}

func TestInterleave(t *testing.T) {
	var order []string
	res, err := Interleave(2, 2, true, func(i, round int) (string, error) {
		s := fmt.Sprintf("%d/%d", i, round)
		order = append(order, s)
		return s, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(order) != "[0/0 1/0 0/1 1/1 0/2 1/2]" {
		t.Errorf("run order %v", order)
	}
	if fmt.Sprint(res) != "[[0/1 0/2] [1/1 1/2]]" {
		t.Errorf("results %v", res)
	}
}
