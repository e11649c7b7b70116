package failureio

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/resque-go/resque-go/failure"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
)

// Entries removed before the part of the list already read shift the rest
// left by as many places; read naively, batch after batch, the entries at
// the batch boundaries would be skipped (and a bulk retry would miss them).
// With batches of 10 and another client removing Go entries near the head
// all the while, every listing still has each Stay entry once, in order.
func TestListIsConsistentWhileEntriesAreRemoved(t *testing.T) {
	t.Parallel()
	c, err := rdb.New(rdb.Options{URL: os.Getenv("RESQUE_GO_TEST_REDIS"), Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	key := c.Keys().Failed()
	entry := func(class string, n int) string {
		return fmt.Sprintf(`{"failed_at":"x","payload":{"class":"%s","args":[%d]},"exception":"E","error":"e","backtrace":[],"worker":"w","queue":"q"}`, class, n)
	}
	args := []any{key}
	for i := 0; i < 1100; i++ {
		class := "Go"
		if i%11 == 5 {
			class = "Stay"
		}
		args = append(args, entry(class, i))
	}
	if _, err := c.Do(ctx, "RPUSH", args...); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var removed atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // remove the first Go entry among the first 20, again and again
		defer wg.Done()
		for !stop.Load() {
			items, err := c.List(ctx, key, 0, 19)
			if err != nil {
				t.Errorf("remover: %v", err)
				return
			}
			for _, it := range items {
				if strings.Contains(string(it), `"Go"`) {
					if _, err := c.Do(ctx, "LREM", key, 1, it); err != nil {
						t.Errorf("remover: %v", err)
						return
					}
					removed.Add(1)
					break
				}
			}
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	s := New(c, nil)
	s.batch = 10
	for round := 0; round < 8; round++ {
		got, _, err := s.List(ctx, failure.Filter{Class: "Stay"}, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for i := 5; i < 1100; i += 11 {
			want = append(want, entry("Stay", i))
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d Stay entries listed, want %d", round, len(got), len(want))
		}
		for i, e := range got {
			if string(e.Raw) != want[i] {
				t.Fatalf("round %d: entry %d is %s, want %s", round, i, e.Raw, want[i])
			}
		}
	}
	if removed.Load() == 0 {
		t.Error("the remover did not run alongside")
	}
}

// A bulk operation knows where its next entry is: its own removals shift
// the entries after them, and the next script looks there first instead
// of searching the list from its head (LPOS) for every entry.
func TestBulkOperationsDoNotSearch(t *testing.T) {
	// not parallel: it reads the server's command counters
	c, err := rdb.New(rdb.Options{URL: os.Getenv("RESQUE_GO_TEST_REDIS"), Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	lpos := func() int {
		v, err := c.Do(ctx, "INFO", "commandstats")
		if err != nil {
			t.Fatal(err)
		}
		var n int
		for _, line := range strings.Split(string(v.([]byte)), "\n") {
			if strings.HasPrefix(line, "cmdstat_lpos:") {
				fmt.Sscanf(line, "cmdstat_lpos:calls=%d", &n)
			}
		}
		return n
	}
	args := []any{c.Keys().Failed()}
	for i := 0; i < 300; i++ {
		args = append(args, fmt.Sprintf(`{"failed_at":"x","payload":{"class":"%s","args":[%d]},"exception":"E","error":"e","backtrace":[],"worker":"w","queue":"q"}`, []string{"A", "B", "C"}[i%3], i))
	}
	if _, err := c.Do(ctx, "RPUSH", args...); err != nil {
		t.Fatal(err)
	}
	s := New(c, nil)
	before := lpos()
	if r, err := s.RemoveMatching(ctx, failure.Filter{Class: "B"}); err != nil || r.Done != 100 {
		t.Fatalf("remove B: %+v %v", r, err)
	}
	if r, err := s.RetryMatching(ctx, failure.Filter{Class: "C"}); err != nil || r.Done != 100 {
		t.Fatalf("retry C: %+v %v", r, err)
	}
	if r, err := s.RemoveMatching(ctx, failure.Filter{}); err != nil || r.Done != 200 {
		t.Fatalf("remove all: %+v %v", r, err)
	}
	if n := lpos() - before; n != 0 {
		t.Errorf("%d LPOS searches for 400 changes to a list nobody else moved", n)
	}
}
