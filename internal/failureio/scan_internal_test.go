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

// A scan step reads no more than it is allowed, says where the next one
// starts, and, like List, lists each entry of the part it read once, in
// order, while another client removes entries near the head.
func TestScanStepIsBoundedAndConsistent(t *testing.T) {
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
	s := New(c, nil)
	s.batch = 10
	// bounded: 100 entries read, 9 Stay among them (5, 16, …, 93); a
	// limit stops it after its last match
	r, err := s.Scan(ctx, failure.Filter{Class: "Stay"}, 0, 100, 0)
	if err != nil || len(r.Entries) != 9 || r.From != 0 || r.Next != 100 || r.Total != 1100 {
		t.Fatalf("Scan(0, 100) = %d entries, from %d, next %d, total %d, %v", len(r.Entries), r.From, r.Next, r.Total, err)
	}
	r, err = s.Scan(ctx, failure.Filter{Class: "Stay"}, 100, 1000, 2)
	if err != nil || len(r.Entries) != 2 || r.Entries[0].Index != 104 || r.Next != 116 {
		t.Fatalf("Scan(100, 1000, limit 2) = %+v, %v", r, err)
	}
	r, err = s.Scan(ctx, failure.Filter{Class: "Stay"}, 5000, 100, 0)
	if err != nil || len(r.Entries) != 0 || r.Next != 1100 {
		t.Fatalf("Scan past the end = %+v, %v", r, err)
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
	for round := 0; round < 8; round++ {
		r, err := s.Scan(ctx, failure.Filter{Class: "Stay"}, 0, 2000, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Entries) != 100 {
			t.Fatalf("round %d: %d Stay entries listed, want 100", round, len(r.Entries))
		}
		for i, e := range r.Entries {
			if want := entry("Stay", 5+11*i); string(e.Raw) != want {
				t.Fatalf("round %d: entry %d is %s, want %s", round, i, e.Raw, want)
			}
		}
	}
	if removed.Load() == 0 {
		t.Error("the remover did not run alongside")
	}
}
