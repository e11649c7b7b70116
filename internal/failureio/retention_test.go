package failureio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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

// trimEntry is a failed entry of job n with failed_at as given ("" for none).
func trimEntry(n int, failedAt string) string {
	at := ""
	if failedAt != "" {
		at = fmt.Sprintf(`"failed_at":%q,`, failedAt)
	}
	return fmt.Sprintf(`{%s"payload":{"class":"Job","args":[%d]},"exception":"E","error":"e","backtrace":[],"worker":"w","queue":"q"}`, at, n)
}

// readArchive returns the archived entries (compact JSON) by list.
func readArchive(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			List       string          `json:"list"`
			ArchivedAt string          `json:"archived_at"`
			Entry      json.RawMessage `json:"entry"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("archive line %q: %v", sc.Text(), err)
		}
		if _, err := time.Parse(time.RFC3339, l.ArchivedAt); err != nil {
			t.Fatalf("archive line %q: archived_at: %v", sc.Text(), err)
		}
		out[l.List] = append(out[l.List], string(l.Entry))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func newTrimmer(t *testing.T, c *rdb.Client, cfg failureio.TrimmerConfig) *failureio.Trimmer {
	t.Helper()
	cfg.Client = c
	if cfg.Owner == "" {
		cfg.Owner = "host:1:q"
	}
	cfg.Pause = time.Millisecond
	tr, err := failureio.NewTrimmer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Count limits keep the newest entries (the tail) of failed and retries,
// in steps, and the archive holds exactly the removed entries, in order.
func TestTrimByCount(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	var want []string
	for i := 0; i < 250; i++ {
		e := trimEntry(i, "2026/01/01 00:00:00 UTC")
		push(t, c, k.Failed(), e)
		push(t, c, k.Retries(), e)
		want = append(want, e)
	}
	archive := filepath.Join(t.TempDir(), "trimmed.jsonl")
	tr := newTrimmer(t, c, failureio.TrimmerConfig{Step: 30,
		Retention: failure.Retention{FailedMax: 100, RetriesMax: 40, Archive: archive}})
	res, err := tr.Pass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Removed != 150 || res[1].Removed != 210 {
		t.Fatalf("results %+v, want 150 removed from failed, 210 from retries", res)
	}
	if got := strs(t, c, k.Failed()); strings.Join(got, "\n") != strings.Join(want[150:], "\n") {
		t.Fatalf("failed keeps %d entries, want the newest 100", len(got))
	}
	if got := strs(t, c, k.Retries()); strings.Join(got, "\n") != strings.Join(want[210:], "\n") {
		t.Fatalf("retries keeps %d entries, want the newest 40", len(got))
	}
	arch := readArchive(t, archive)
	if strings.Join(arch["failed"], "\n") != strings.Join(want[:150], "\n") ||
		strings.Join(arch["retries"], "\n") != strings.Join(want[:210], "\n") {
		t.Fatalf("archive holds %d failed and %d retries entries, want the 150 and 210 removed, in order",
			len(arch["failed"]), len(arch["retries"]))
	}
	// nothing more to do
	if res, err := tr.Pass(context.Background()); err != nil || res[0].Removed+res[1].Removed != 0 {
		t.Fatalf("second pass: %+v, %v", res, err)
	}
}

// An age limit removes the entries older than it, whatever the writer's
// time format (Ruby's, php-resque's RFC 3339 and chrisboulton's date()),
// up to the first younger one; an entry with no readable failed_at is kept
// and counted.
func TestTrimByAge(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	old := []string{
		trimEntry(0, "2026/10/01 00:00:00 UTC"),           // Ruby Resque
		trimEntry(1, "2026-10-02T00:00:00+02:00"),         // php-resque 1.3+
		trimEntry(2, "Sat Oct 03 00:00:00 UTC 2026"),      // php-resque (chrisboulton)
		trimEntry(3, "Sun Oct 04 2026 00:00:00 GMT+0000"), // node-resque
	}
	undated := []string{trimEntry(4, ""), trimEntry(5, "last tuesday"), `not json`}
	young := []string{
		trimEntry(6, "2026/11/20 00:00:00 UTC"),
		trimEntry(7, "2026/10/01 00:00:00 UTC"), // old, but after a young one: kept
	}
	for _, e := range []string{old[0], undated[0], old[1], undated[1], old[2], undated[2], old[3], young[0], young[1]} {
		push(t, c, k.Failed(), e)
	}
	archive := filepath.Join(t.TempDir(), "trimmed.jsonl")
	tr := newTrimmer(t, c, failureio.TrimmerConfig{Step: 2, Now: func() time.Time { return now },
		Retention: failure.Retention{FailedMaxAge: 30 * 24 * time.Hour, Archive: archive}})
	res, err := tr.Pass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Removed != 4 || res[0].Undated != 3 {
		t.Fatalf("results %+v, want 4 removed, 3 undated", res)
	}
	got := strs(t, c, k.Failed())
	if want := append(append([]string{}, undated...), young...); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("failed holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if arch := readArchive(t, archive); strings.Join(arch["failed"], "\n") != strings.Join(old, "\n") {
		t.Fatalf("archive holds %q, want the 4 old entries", arch["failed"])
	}
}

// While an operator retries entries near the head, the trimmer trims the
// same entries by age: no entry is both requeued and removed in its
// unretried form, and every job ends requeued, trimmed and archived, or
// still in the list.
func TestTrimWhileRetrying(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	ctx := context.Background()
	const n = 600
	for i := 0; i < n; i++ {
		push(t, c, k.Failed(), trimEntry(i, "2026/01/01 00:00:00 UTC"))
	}
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	removed := map[string]bool{} // entries the trimmer removed, as they were
	archive := filepath.Join(t.TempDir(), "trimmed.jsonl")
	tr := newTrimmer(t, c, failureio.TrimmerConfig{Step: 7, Now: func() time.Time { return now },
		Retention: failure.Retention{FailedMaxAge: 24 * time.Hour, Archive: archive},
		OnTrim: func(_ string, rm [][]byte) {
			mu.Lock()
			defer mu.Unlock()
			for _, e := range rm {
				removed[string(e)] = true
			}
		}})

	s := failureio.New(c, func() time.Time { return now })
	var stop atomic.Bool
	var retried atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			head, _, err := s.List(ctx, failure.Filter{}, 0, 20)
			if err != nil {
				t.Errorf("list: %v", err)
				return
			}
			if len(head) == 0 {
				return
			}
			e := head[rand.IntN(len(head))]
			if e.RetriedAt != "" {
				continue
			}
			if err := s.Retry(ctx, e); err == nil {
				retried.Add(1)
			}
		}
	}()
	// passes until the list is empty (retried entries are trimmed too)
	for pass := 0; ; pass++ {
		if _, err := tr.Pass(ctx); err != nil {
			t.Fatal(err)
		}
		if left, err := c.Len(ctx, k.Failed()); err != nil || left == 0 {
			break
		}
		if pass > 1000 {
			t.Fatal("the list never emptied")
		}
	}
	stop.Store(true)
	wg.Wait()
	if retried.Load() == 0 {
		t.Fatal("no retry ran during the trim: the test proved nothing")
	}

	requeued := map[int]bool{}
	for _, p := range strs(t, c, k.Queue("q")) {
		var v struct{ Args []int }
		if err := json.Unmarshal([]byte(p), &v); err != nil || len(v.Args) != 1 {
			t.Fatalf("queued payload %q", p)
		}
		if requeued[v.Args[0]] {
			t.Fatalf("job %d requeued twice", v.Args[0])
		}
		requeued[v.Args[0]] = true
	}
	archived := map[string]bool{}
	for _, e := range readArchive(t, archive)["failed"] {
		archived[e] = true
	}
	for e := range removed {
		if !archived[e] {
			t.Errorf("removed without an archive line: %s", e)
		}
	}
	trimmedFirst := 0
	for i := 0; i < n; i++ {
		orig := trimEntry(i, "2026/01/01 00:00:00 UTC")
		switch {
		case requeued[i] && removed[orig]:
			t.Errorf("job %d both requeued and trimmed before its retry", i)
		case !requeued[i] && !removed[orig]:
			t.Errorf("job %d lost: neither requeued nor trimmed", i)
		case removed[orig]:
			trimmedFirst++
		}
	}
	t.Logf("%d retried, %d trimmed unretried, %d entries removed in all", retried.Load(), trimmedFirst, len(removed))
}

// Of two trimmers on one namespace, one holds the lease and trims; the
// other waits.
func TestTrimmerLease(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	for i := 0; i < 50; i++ {
		push(t, c, k.Failed(), trimEntry(i, "2026/01/01 00:00:00 UTC"))
	}
	type tally struct{ passes, held, removed atomic.Int64 }
	var tallies [2]tally
	var trimmers []*failureio.Trimmer
	for i := range tallies {
		tl := &tallies[i]
		tr := newTrimmer(t, c, failureio.TrimmerConfig{Owner: fmt.Sprintf("host:%d:q", i+1), Interval: time.Second,
			Retention: failure.Retention{FailedMax: 10},
			OnPass: func(held bool, res []failureio.TrimResult) {
				tl.passes.Add(1)
				if held {
					tl.held.Add(1)
				}
				for _, r := range res {
					tl.removed.Add(int64(r.Removed))
				}
			}})
		trimmers = append(trimmers, tr)
	}
	for _, tr := range trimmers {
		tr.Start(context.Background())
	}
	redistest.Eventually(t, 0, func() bool {
		return tallies[0].passes.Load() >= 3 && tallies[1].passes.Load() >= 3
	}, "three passes of each trimmer")
	for _, tr := range trimmers {
		tr.Stop()
	}
	if h0, h1 := tallies[0].held.Load(), tallies[1].held.Load(); (h0 == 0) == (h1 == 0) {
		t.Fatalf("passes that held the lease: %d and %d, want one trimmer only", h0, h1)
	}
	if r := tallies[0].removed.Load() + tallies[1].removed.Load(); r != 40 {
		t.Fatalf("removed %d entries, want 40", r)
	}
	if n, _ := c.Len(context.Background(), k.Failed()); n != 10 {
		t.Fatalf("failed holds %d entries, want 10", n)
	}
}
