package failureio_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resque-go/resque-go/failure"
	"github.com/resque-go/resque-go/internal/failureio"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
)

func movingEntry(class string, n int) string {
	return fmt.Sprintf(`{"failed_at":"2026/01/01 00:00:00 UTC","payload":{"class":"%s","args":[%d]},"exception":"E","error":"e","backtrace":[],"worker":"w","queue":"q"}`, class, n)
}

func movingPayload(class string, n int) string {
	return fmt.Sprintf(`{"class":"%s","args":[%d]}`, class, n)
}

// movers stand for the rest of the world: workers appending Keep entries at
// the tail, and another admin removing the first Keep entry near the head,
// which shifts the index of every entry after it.
type movers struct {
	stop   atomic.Bool
	wg     sync.WaitGroup
	pushed atomic.Int64 // Keep entries 100000, 100001, ...
	popped sync.Map     // raw entry -> true
	npop   atomic.Int64
}

func startMovers(t *testing.T, c *rdb.Client) *movers {
	m := &movers{}
	ctx := context.Background()
	key := c.Keys().Failed()
	m.wg.Add(2)
	go func() {
		defer m.wg.Done()
		for n := 100000; !m.stop.Load(); n++ {
			if _, err := c.Do(ctx, "RPUSH", key, movingEntry("Keep", n)); err != nil {
				t.Errorf("pusher: %v", err)
				return
			}
			m.pushed.Add(1)
		}
	}()
	go func() {
		defer m.wg.Done()
		for start := 0; !m.stop.Load(); {
			items, err := c.List(ctx, key, start, start+49)
			if err != nil {
				t.Errorf("remover: %v", err)
				return
			}
			i := 0
			for i < len(items) && !strings.Contains(string(items[i]), `"Keep"`) {
				i++
			}
			if i == len(items) { // no Keep entry in this page: look further
				start += 50
				if len(items) == 0 {
					start = 0
				}
				continue
			}
			start = 0
			n, err := c.Do(ctx, "LREM", key, 1, items[i])
			if err != nil {
				t.Errorf("remover: %v", err)
				return
			}
			if n == int64(1) {
				m.popped.Store(string(items[i]), true)
				m.npop.Add(1)
			}
		}
	}()
	t.Cleanup(m.halt)
	return m
}

func (m *movers) halt() { m.stop.Store(true); m.wg.Wait() }

// waitMoved returns once the list has moved under the caller again.
func (m *movers) waitMoved(t *testing.T, by int64) {
	t.Helper()
	p, q := m.npop.Load(), m.pushed.Load()
	redistest.Eventually(t, 0, func() bool { return m.npop.Load() >= p+by && m.pushed.Load() >= q+by }, "the list to move")
}

// While workers append entries and another admin removes entries near the
// head, three operators run at once: one retries and removes by index with
// indexes that went stale meanwhile, one retries every RetryAll entry, one
// removes every DropAll entry. Every selected entry is acted on exactly
// once; no other entry changes or vanishes; every requeued payload is one
// that was selected, once.
func TestOperatorsWhileTheListMoves(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	ctx := context.Background()
	classes := []string{"Keep", "RetryIdx", "RetryAll", "DropIdx", "DropAll"}
	for i := 0; i < 500; i++ {
		push(t, c, k.Failed(), movingEntry(classes[i%5], i))
	}
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s := failureio.New(c, func() time.Time { return at })
	retried := func(raw string) string {
		return strings.TrimSuffix(raw, "}") + `,"retried_at":"2026/11/22 10:00:00 UTC"}`
	}

	m := startMovers(t, c)
	m.waitMoved(t, 10)

	var retryAll, dropAll failure.Result
	var errAll, errDrop error
	var ops sync.WaitGroup
	ops.Add(2)
	go func() { defer ops.Done(); retryAll, errAll = s.RetryMatching(ctx, failure.Filter{Class: "RetryAll"}) }()
	go func() { defer ops.Done(); dropAll, errDrop = s.RemoveMatching(ctx, failure.Filter{Class: "DropAll"}) }()

	byIndex := func(class string, op func(context.Context, failure.Entry) error) map[string]bool {
		sel, _, err := s.List(ctx, failure.Filter{Class: class}, 5, 30)
		if err != nil || len(sel) != 30 {
			t.Fatalf("list %s: %d entries, %v", class, len(sel), err)
		}
		m.waitMoved(t, 5) // the indexes just read are stale now
		chosen := map[string]bool{}
		for _, e := range sel {
			if err := op(ctx, e); err != nil {
				t.Errorf("%s entry %d: %v", class, e.Index, err)
			}
			chosen[string(e.Raw)] = true
		}
		return chosen
	}
	retryIdx := byIndex("RetryIdx", s.Retry)
	dropIdx := byIndex("DropIdx", s.Remove)
	ops.Wait()
	m.halt()
	if errAll != nil || errDrop != nil {
		t.Fatalf("retry all: %v; remove all: %v", errAll, errDrop)
	}
	if retryAll != (failure.Result{Done: 100}) || dropAll != (failure.Result{Done: 100}) {
		t.Errorf("retry all %+v, remove all %+v; want 100 done each", retryAll, dropAll)
	}

	// the queue holds each selected payload once
	var want []string
	for i := 0; i < 500; i++ {
		if raw := movingEntry(classes[i%5], i); classes[i%5] == "RetryAll" || retryIdx[raw] {
			want = append(want, movingPayload(classes[i%5], i))
		}
	}
	got := strs(t, c, k.Queue("q"))
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requeued %d payloads, want the %d selected ones:\n got %q\nwant %q", len(got), len(want), got, want)
	}

	// the failed list holds exactly what it should
	expect := map[string]int{}
	for i := 0; i < 500; i++ {
		raw := movingEntry(classes[i%5], i)
		switch {
		case classes[i%5] == "Keep":
			if _, ok := m.popped.Load(raw); !ok {
				expect[raw]++
			}
		case classes[i%5] == "RetryAll" || retryIdx[raw]:
			expect[retried(raw)]++
		case classes[i%5] == "DropAll" || dropIdx[raw]:
		default:
			expect[raw]++
		}
	}
	for n := 100000; n < 100000+int(m.pushed.Load()); n++ {
		if raw := movingEntry("Keep", n); !func() bool { _, ok := m.popped.Load(raw); return ok }() {
			expect[raw]++
		}
	}
	for _, raw := range strs(t, c, k.Failed()) {
		if expect[raw] == 0 {
			t.Errorf("unexpected entry in failed (twice, or changed): %s", raw)
			continue
		}
		expect[raw]--
	}
	for raw, n := range expect {
		if n != 0 {
			t.Errorf("entry missing from failed: %s", raw)
		}
	}
	t.Logf("meanwhile %d entries appended, %d removed by the other admin", m.pushed.Load(), m.npop.Load())
	if len(retryIdx) != 30 || len(dropIdx) != 30 || m.npop.Load() < 10 {
		t.Errorf("selected %d + %d by index, %d removed by the other admin", len(retryIdx), len(dropIdx), m.npop.Load())
	}
}

// Two operators retrying the same entry at once (two resque-web tabs):
// one succeeds, the other is told the entry is gone; the job is queued once.
func TestRetrySameEntryTwiceAtOnce(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		push(t, c, k.Failed(), movingEntry("A", i))
	}
	s := failureio.New(c, nil)
	entries, _, err := s.List(ctx, failure.Filter{}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, 2*len(entries))
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Retry(ctx, entries[i/2])
		}()
	}
	wg.Wait()
	for i := 0; i < len(errs); i += 2 {
		a, b := errs[i], errs[i+1]
		if (a == nil) == (b == nil) || !errors.Is(errors.Join(a, b), failure.ErrGone) {
			t.Errorf("entry %d: %v and %v; want one success and one ErrGone", i/2, a, b)
		}
	}
	if n, err := c.Len(ctx, k.Queue("q")); err != nil || n != 20 {
		t.Errorf("queue has %d jobs (%v), want 20", n, err)
	}
}

// Byte-identical entries (the same job failing twice within a second on one
// worker) are distinct entries: a bulk retry requeues each once, and a
// removal by index removes one of them, never both.
func TestIdenticalEntries(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	ctx := context.Background()
	same := movingEntry("Dup", 1)
	push(t, c, k.Failed(), same, movingEntry("Other", 2), same, same)
	s := failureio.New(c, nil)
	e, err := s.Get(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(ctx, e); err != nil {
		t.Fatal(err)
	}
	if got := strs(t, c, k.Failed()); len(got) != 3 || got[0] != same || got[2] != same {
		t.Errorf("after removing one copy: %q", got)
	}
	r, err := s.RetryMatching(ctx, failure.Filter{Class: "Dup"})
	if err != nil || r != (failure.Result{Done: 2}) {
		t.Errorf("retry Dup: %+v %v", r, err)
	}
	if got := strs(t, c, k.Queue("q")); len(got) != 2 || got[0] != movingPayload("Dup", 1) || got[1] != got[0] {
		t.Errorf("queue = %q", got)
	}
	r, err = s.Clear(ctx, failure.Filter{Class: "Dup"})
	if err != nil || r != (failure.Result{Done: 2}) {
		t.Errorf("clear Dup: %+v %v", r, err)
	}
	if got := strs(t, c, k.Failed()); len(got) != 1 || got[0] != movingEntry("Other", 2) {
		t.Errorf("after clearing Dup: %q", got)
	}
	r, err = s.Clear(ctx, failure.Filter{})
	if err != nil || r != (failure.Result{Done: 1}) {
		t.Errorf("clear: %+v %v", r, err)
	}
	if n, err := c.Len(ctx, k.Failed()); err != nil || n != 0 {
		t.Errorf("failed has %d entries after clear (%v)", n, err)
	}
}
