package failureio_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resque-go/resque-go/failure"
	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/failureio"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
)

const redisEnv = "RESQUE_GO_TEST_REDIS"

func TestMain(m *testing.M) { os.Exit(redistest.Main(m, redisEnv)) }

func newClient(t *testing.T) *rdb.Client {
	t.Helper()
	c, err := rdb.New(rdb.Options{URL: os.Getenv(redisEnv), Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func strs(t *testing.T, c *rdb.Client, key string) []string {
	t.Helper()
	items, err := c.List(context.Background(), key, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(items))
	for i, b := range items {
		out[i] = string(b)
	}
	return out
}

func push(t *testing.T, c *rdb.Client, key string, items ...string) {
	t.Helper()
	for _, it := range items {
		if _, err := c.Do(context.Background(), "RPUSH", key, it); err != nil {
			t.Fatal(err)
		}
	}
}

// Entries written by Ruby, php-resque and node-resque all list with their
// fields; garbage lists as unreadable instead of failing the listing.
func TestListEntriesOfEveryOrigin(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	want := map[string]string{} // class -> exception
	for _, src := range [][2]string{{"ruby-resque-3.0.0", "FailJob"}, {"php-resque-chrisboulton", "Fail_Job"},
		{"php-resque-resque-master", "Fail_Job"}, {"node-resque-9.7.1", "FailJob"}} {
		push(t, c, c.Keys().Failed(), fixtures.MustLoad(src[0], "failure").List("resque:failed")...)
		want[src[1]] = ""
	}
	push(t, c, c.Keys().Failed(), "not json")
	s := failureio.New(c, nil)
	entries, total, err := s.List(context.Background(), failure.Filter{}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if total != 5 || len(entries) != 5 {
		t.Fatalf("total %d, %d entries", total, len(entries))
	}
	for _, e := range entries[:4] {
		if _, ok := want[e.Class]; !ok || e.Queue != "mail" || e.Error != "boom <1>" || len(e.Backtrace) == 0 || e.FailedAt == "" || e.Worker == "" {
			t.Errorf("entry %d: %+v", e.Index, e)
		}
	}
	if !entries[4].Unreadable {
		t.Errorf("garbage entry: %+v", entries[4])
	}
	php, _, _ := s.List(context.Background(), failure.Filter{Class: "Fail_Job", Exception: "Exc"}, 0, 0)
	if len(php) != 2 || php[0].Index != 1 {
		t.Errorf("filtered: %+v", php)
	}
	page, _, _ := s.List(context.Background(), failure.Filter{}, 1, 2)
	if len(page) != 2 || page[0].Index != 1 || page[1].Index != 2 {
		t.Errorf("offset 1 limit 2: %+v", page)
	}
}

// Retry has Ruby's effect (fixtures ruby-resque-3.0.0 failure ->
// failure-requeue): retried_at appended to the entry, the payload pushed to
// its queue. Remove then deletes the entry (failure-remove).
func TestRetryAndRemoveLikeRuby(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	before := fixtures.MustLoad("ruby-resque-3.0.0", "failure").List("resque:failed")[0]
	after := fixtures.MustLoad("ruby-resque-3.0.0", "failure-requeue")
	push(t, c, k.Failed(), before)
	at := time.Date(2026, 11, 21, 21, 23, 50, 0, time.UTC)
	s := failureio.New(c, func() time.Time { return at })
	e, err := s.Get(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Retry(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if got := strs(t, c, k.Failed()); len(got) != 1 || got[0] != after.List("resque:failed")[0] {
		t.Errorf("entry after retry:\n got %q\nwant %q", got, after.List("resque:failed")[0])
	}
	if got := strs(t, c, k.Queue("mail")); len(got) != 1 || got[0] != after.List("resque:queue:mail")[0] {
		t.Errorf("queue after retry = %q, want %q", got, after.List("resque:queue:mail"))
	}
	e, _ = s.Get(context.Background(), 0)
	if e.RetriedAt != "2026/11/21 21:23:50 UTC" {
		t.Errorf("retried_at = %q", e.RetriedAt)
	}
	if err := s.Remove(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	if got := strs(t, c, k.Failed()); len(got) != 0 {
		t.Errorf("failed after remove = %v", got)
	}
	if err := s.Remove(context.Background(), e); !errors.Is(err, failure.ErrGone) {
		t.Errorf("removing it again: %v, want ErrGone", err)
	}
}

// A bad payload recorded as a JSON string is retried as its original text;
// an entry without a queue is not retryable.
func TestRetryOddEntries(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	push(t, c, k.Failed(),
		`{"failed_at":"x","payload":"not json {","exception":"ResqueGo::BadPayload","error":"e","backtrace":[],"worker":"w","queue":"q"}`,
		`{"failed_at":"x","payload":{"class":"A","args":[]},"exception":"E","error":"e","backtrace":[],"worker":"w"}`)
	s := failureio.New(c, nil)
	r, err := s.RetryMatching(context.Background(), failure.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Done != 1 || r.Skipped != 1 {
		t.Errorf("result %+v", r)
	}
	if got := strs(t, c, k.Queue("q")); len(got) != 1 || got[0] != "not json {" {
		t.Errorf("queue = %q", got)
	}
}

// While producers append entries and another client removes entries at the
// head, retries and removals by index and by filter act on exactly the
// entries selected: none twice, none that was not selected, none lost.
func TestOperationsWhileTheListMoves(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	entry := func(class string, n int) string {
		return fmt.Sprintf(`{"failed_at":"2026/01/01 00:00:00 UTC","payload":{"class":"%s","args":[%d]},"exception":"E","error":"e","backtrace":[],"worker":"w","queue":"q"}`, class, n)
	}
	for i := 0; i < 300; i++ {
		push(t, c, k.Failed(), entry([]string{"Keep", "Retry", "Drop"}[i%3], i))
	}
	// Movers: append new Keep entries at the tail and pop Keep entries that
	// reach the head (putting them aside), as other tools would.
	var stop atomic.Bool
	var wg sync.WaitGroup
	var popped sync.Map
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 1000; !stop.Load(); i++ {
			// not push: t.Fatal must not be called outside the test goroutine
			if _, err := c.Do(context.Background(), "RPUSH", k.Failed(), entry("Keep", i)); err != nil {
				t.Errorf("pusher: %v", err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for !stop.Load() {
			v, err := c.Do(context.Background(), "LINDEX", k.Failed(), 0)
			if err != nil || v == nil || !strings.Contains(string(v.([]byte)), `"Keep"`) {
				continue
			}
			if n, err := c.Do(context.Background(), "LREM", k.Failed(), 1, v); err == nil && n == int64(1) {
				popped.Store(string(v.([]byte)), true)
			}
		}
	}()
	s := failureio.New(c, nil)
	rr, err := s.RetryMatching(context.Background(), failure.Filter{Class: "Retry"})
	if err != nil {
		t.Fatal(err)
	}
	// by index: pick the first few Drop entries as they are now
	drops, _, err := s.List(context.Background(), failure.Filter{Class: "Drop"}, 0, 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range drops {
		if err := s.Remove(context.Background(), e); err != nil {
			t.Fatalf("remove %d: %v", e.Index, err)
		}
	}
	dr, err := s.RemoveMatching(context.Background(), failure.Filter{Class: "Drop"})
	if err != nil {
		t.Fatal(err)
	}
	stop.Store(true)
	wg.Wait()
	if rr.Done != 100 || rr.Gone != 0 || dr.Done+len(drops) != 100 {
		t.Errorf("retried %+v, removed %d + %+v", rr, len(drops), dr)
	}
	queued := strs(t, c, k.Queue("q"))
	seen := map[string]int{}
	for _, p := range queued {
		var v struct {
			Class string
			Args  []int
		}
		_ = json.Unmarshal([]byte(p), &v)
		if v.Class != "Retry" {
			t.Errorf("a %s job was retried", v.Class)
		}
		seen[fmt.Sprint(v.Args)]++
	}
	if len(queued) != 100 || len(seen) != 100 {
		t.Errorf("%d jobs requeued, %d distinct; want 100", len(queued), len(seen))
	}
	keep, retried := 0, 0
	for _, raw := range strs(t, c, k.Failed()) {
		e := failure.Parse(0, []byte(raw))
		switch e.Class {
		case "Keep":
			keep++
		case "Retry":
			if e.RetriedAt == "" {
				t.Errorf("a Retry entry without retried_at: %s", raw)
			}
			retried++
		case "Drop":
			t.Errorf("a Drop entry survived: %s", raw)
		}
	}
	poppedRetry := 0
	popped.Range(func(key, _ any) bool {
		if strings.Contains(key.(string), `"Retry"`) {
			poppedRetry++
		}
		return true
	})
	if retried+poppedRetry != 100 {
		t.Errorf("%d retried entries left in failed, want 100", retried)
	}
	if keep == 0 {
		t.Error("no Keep entry left: the movers did not run alongside")
	}
}
