package delayedio_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/protocol"
)

var ctx = context.Background()

// The eight args of the captured scenarios.
const (
	rubyArgs8 = `[1,"two",3.5,{"k":"v"},null,true,12345678901234567890,"unicode é ✓ <tag>&"]`
	nodeArgs8 = `[1,"two",3.5,{"k":"v"},null,true,12345678901234567000,"unicode é ✓ <tag>&"]` // JS numbers
)

// enqueuePlain is `resque-go enqueue --plain --at`: class and args only.
func (e *env) enqueuePlain(queue, class, args string, ts int64) {
	e.t.Helper()
	payload, err := protocol.NewPayload(class, []byte(args), protocol.EnqueueOptions{Plain: true})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := delayedio.EnqueueAt(ctx, e.c, queue, payload, time.Unix(ts, 0)); err != nil {
		e.t.Fatal(err)
	}
}

// resque-scheduler's delayed-enqueue scenario replayed with EnqueueAt gives
// every key byte for byte (items, timestamps: index keys and members, the
// schedule); its remove_delayed calls replayed with Remove (through the
// index) give its delayed-remove dump, except that the bucket left empty is
// taken off the schedule (remove_delayed leaves it for the scheduler).
func TestEnqueueAndRemoveMatchResqueScheduler(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.enqueuePlain("mail", "MailJob", rubyArgs8, 1795299965)
	e.enqueuePlain("mail", "NoArgsJob", `[]`, 1795299965)
	e.enqueuePlain("mail", "MailJob", `["in-600"]`, 1795296965)
	e.enqueuePlain("high", "MailJob", `["to-high"]`, 1795300025)
	if d := e.state().diff(fixtureState(t, fixtures.MustLoad("resque-scheduler-5.0.0", "delayed-enqueue"))); d != "" {
		t.Fatalf("after enqueue, against resque-scheduler's dump:\n%s", d)
	}

	// the args as an operator may type them: spaced, with JSON escapes
	typed := `[1, "two", 3.5, {"k": "v"}, null, true, 12345678901234567890, "unicode \u00e9 \u2713 <tag>&"]`
	r, err := delayedio.Remove(ctx, e.c, delayed.Filter{Class: "MailJob", Queue: "mail", Args: []byte(typed)}, nil)
	if err != nil || r != (delayed.Removal{Removed: 1, Unindexed: 1}) {
		t.Fatalf("remove args8: %+v, %v", r, err)
	}
	r, err = delayedio.Remove(ctx, e.c, delayed.Filter{Class: "MailJob", Queue: "mail", Args: []byte(`["in-600"]`)}, nil)
	if err != nil || r != (delayed.Removal{Removed: 1, Unindexed: 1, Unscheduled: 1}) {
		t.Fatalf("remove in-600: %+v, %v", r, err)
	}
	want := fixtureState(t, fixtures.MustLoad("resque-scheduler-5.0.0", "delayed-remove"))
	sched := want["delayed_queue_schedule"]
	if len(sched) != 3 || sched[0] != "1795296965 1795296965" {
		t.Fatalf("fixture schedule = %q", sched)
	}
	want["delayed_queue_schedule"] = sched[1:]
	if d := e.state().diff(want); d != "" {
		t.Fatalf("after remove, against resque-scheduler's dump:\n%s", d)
	}
}

// node-resque writes {"class","queue","args"}; the index lookup tries that
// order too, and Remove gives node-resque's own delDelayed result.
func TestRemoveNodeResqueItemsThroughIndex(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.load(fixtures.MustLoad("node-resque-9.7.1", "delayed-enqueue"))
	f := delayed.Filter{Class: "MailJob", Queue: "mail", Args: []byte(nodeArgs8)}
	if n, err := delayedio.Count(ctx, e.c, f); err != nil || n != (delayed.Counts{Items: 1, Buckets: 1}) {
		t.Fatalf("count: %+v, %v", n, err)
	}
	r, err := delayedio.Remove(ctx, e.c, f, nil)
	if err != nil || r != (delayed.Removal{Removed: 1, Unindexed: 1}) {
		t.Fatalf("remove: %+v, %v", r, err)
	}
	if d := e.state().diff(fixtureState(t, fixtures.MustLoad("node-resque-9.7.1", "delayed-remove"))); d != "" {
		t.Fatalf("against node-resque's delDelayed dump:\n%s", d)
	}
}

// Items the index cannot find (an id of their own; php-resque writes no
// index) are found by Scan; the index lookup leaves them alone.
func TestScanFindsItemsOutsideTheIndex(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.load(fixtures.MustLoad("php-resque-resque-master", "delayed-enqueue"))
	withID, err := protocol.NewPayload("Mail_Job", []byte(`[["in-600"]]`), protocol.EnqueueOptions{ID: "abc"})
	if err != nil {
		t.Fatal(err)
	}
	if err := delayedio.EnqueueAt(ctx, e.c, "mail", withID, time.Unix(1795297065, 0)); err != nil {
		t.Fatal(err)
	}
	f := delayed.Filter{Class: "Mail_Job", Queue: "mail", Args: []byte(`[["in-600"]]`)}
	if n, err := delayedio.Count(ctx, e.c, f); err != nil || n.Items != 0 {
		t.Fatalf("index count: %+v, %v", n, err)
	}
	f.Scan = true
	items, err := delayedio.List(ctx, e.c, f, 0, 0)
	if err != nil || len(items) != 2 || items[0].Pos != 0 || items[1].Pos != 1 || !strings.Contains(string(items[1].Raw), `"id":"abc"`) {
		t.Fatalf("scan list: %+v, %v", items, err)
	}
	// PHP escapes é as \u00e9: the same args for the comparison
	f.Args = []byte(`[[1,"two",3.5,{"k":"v"},null,true,1.2345678901234567e+19,"unicode é ✓ <tag>&"]]`)
	if n, err := delayedio.Count(ctx, e.c, f); err != nil || n != (delayed.Counts{Items: 1, Buckets: 1}) {
		t.Fatalf("scan count of the PHP item: %+v, %v", n, err)
	}
	f.Args = []byte(`[["in-600"]]`)
	r, err := delayedio.Remove(ctx, e.c, f, nil)
	if err != nil || r != (delayed.Removal{Removed: 2, Unindexed: 1, Unscheduled: 1}) {
		t.Fatalf("scan remove: %+v, %v", r, err)
	}
	if left := e.state(); len(left) != 2 || len(left["delayed:1795300065"]) != 1 {
		t.Errorf("left: %v", left)
	}
}

// List and Count by time range, queue and class; oldest bucket first, FIFO
// inside; a garbage item is shown with its error and matched by time only.
func TestListCountShowFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.enqueuePlain("a", "X", `[1]`, 300)
	e.enqueuePlain("a", "Y", `[2]`, 100)
	e.enqueuePlain("b", "X", `[3]`, 100)
	e.enqueuePlain("a", "X", `[4]`, 200)
	e.enqueuePlain("a", "X", `[5]`, 100)
	k := e.c.Keys()
	e.do("RPUSH", k.Delayed(200), "garbage {")

	args := func(items []delayed.Item) string {
		var out []string
		for _, it := range items {
			if it.Err != nil {
				out = append(out, fmt.Sprintf("%d:bad", it.At.Unix()))
				continue
			}
			out = append(out, fmt.Sprintf("%d:%s%s", it.At.Unix(), it.Class, it.Args))
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		f    delayed.Filter
		want string
	}{
		{delayed.Filter{}, "100:Y[2] 100:X[3] 100:X[5] 200:X[4] 200:bad 300:X[1]"},
		{delayed.Filter{From: time.Unix(150, 0), To: time.Unix(299, 999)}, "200:X[4] 200:bad"},
		{delayed.Filter{From: time.Unix(199, 1)}, "200:X[4] 200:bad 300:X[1]"}, // From rounds up
		{delayed.Filter{Queue: "a", Class: "X"}, "100:X[5] 200:X[4] 300:X[1]"},
		{delayed.Filter{Class: "X", Queue: "a", Args: []byte(`[4]`)}, "200:X[4]"},
		{delayed.Filter{Class: "X", Args: []byte(` [ 3 ] `), Scan: true}, "100:X[3]"},
	} {
		items, err := delayedio.List(ctx, e.c, c.f, 0, 0)
		if err != nil || args(items) != c.want {
			t.Errorf("List(%+v) = %s (%v), want %s", c.f, args(items), err, c.want)
		}
		n, err := delayedio.Count(ctx, e.c, c.f)
		buckets := map[string]bool{}
		for _, w := range strings.Fields(c.want) {
			buckets[strings.Split(w, ":")[0]] = true
		}
		if err != nil || n.Items != int64(len(strings.Fields(c.want))) || n.Buckets != int64(len(buckets)) {
			t.Errorf("Count(%+v) = %+v (%v)", c.f, n, err)
		}
	}
	if items, err := delayedio.List(ctx, e.c, delayed.Filter{}, 2, 2); err != nil || args(items) != "100:X[5] 200:X[4]" {
		t.Errorf("offset 2 limit 2: %s (%v)", args(items), err)
	}
	items, err := delayedio.Bucket(ctx, e.c, time.Unix(200, 500))
	if err != nil || args(items) != "200:X[4] 200:bad" || items[1].Pos != 1 || string(items[1].Raw) != "garbage {" {
		t.Errorf("Bucket(200) = %s (%v)", args(items), err)
	}
	for _, f := range []delayed.Filter{
		{Args: []byte(`[1]`)},                         // no class
		{Class: "X", Args: []byte(`[1]`)},             // index without queue
		{Class: "X", Queue: "a", Args: []byte(`[1`)},  // bad JSON
		{From: time.Unix(10, 0), To: time.Unix(9, 0)}, // reversed
	} {
		if _, err := delayedio.Count(ctx, e.c, f); !errors.Is(err, delayed.ErrBadFilter) {
			t.Errorf("Count(%+v): %v, want ErrBadFilter", f, err)
		}
		if _, err := delayedio.Remove(ctx, e.c, f, nil); !errors.Is(err, delayed.ErrBadFilter) {
			t.Errorf("Remove(%+v): %v, want ErrBadFilter", f, err)
		}
	}
	// remove by time range takes the garbage too; the rest stays in order
	r, err := delayedio.Remove(ctx, e.c, delayed.Filter{From: time.Unix(200, 0), To: time.Unix(200, 0)}, nil)
	if err != nil || r != (delayed.Removal{Removed: 2, Unindexed: 1, Unscheduled: 1}) { // the garbage had no index entry
		t.Fatalf("remove 200: %+v, %v", r, err)
	}
	if items, _ := delayedio.List(ctx, e.c, delayed.Filter{}, 0, 0); args(items) != "100:Y[2] 100:X[3] 100:X[5] 300:X[1]" {
		t.Errorf("after remove: %s", args(items))
	}
}

// A long bucket with many items to remove takes the read-and-rewrite path
// of the script: the others keep their order and index entries.
func TestRemoveManyFromLongBucket(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fill("q", "Keep", 0, 1500, 1500, 500)
	e.fill("q", "Drop", 0, 1500, 1500, 500) // appended to the same bucket
	k := e.c.Keys()
	var progress []delayed.Progress
	r, err := delayedio.Remove(ctx, e.c, delayed.Filter{Class: "Drop"}, func(p delayed.Progress) { progress = append(progress, p) })
	if err != nil || r != (delayed.Removal{Removed: 1500, Unindexed: 1500}) {
		t.Fatalf("remove: %+v, %v", r, err)
	}
	if len(progress) != 1 || progress[0].Buckets != 1 || progress[0].Done != 1 || progress[0].Removed != 1500 {
		t.Errorf("progress = %+v", progress)
	}
	left := e.strs("LRANGE", k.Delayed(500), 0, -1)
	if len(left) != 1500 {
		t.Fatalf("%d left", len(left))
	}
	for i, item := range left {
		if want := fmt.Sprintf(`{"class":"Keep","args":[%d],"queue":"q"}`, i); item != want {
			t.Fatalf("left[%d] = %s, want %s", i, item, want)
		}
	}
	if keys, _ := e.c.ScanKeys(ctx, e.ns+":timestamps:*Drop*"); len(keys) != 0 {
		t.Errorf("%d Drop index keys left", len(keys))
	}
	if keys, _ := e.c.ScanKeys(ctx, e.ns+":timestamps:*Keep*"); len(keys) != 1500 {
		t.Errorf("%d Keep index keys left, want 1500", len(keys))
	}
}

// Clear removes every bucket, index entry and schedule entry (a stale
// schedule entry with no bucket too) and counts them.
func TestClear(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fill("q", "J", 0, 1200, 2, 1000)    // 600 buckets: more than one schedule page
	e.enqueuePlain("q", "J", `[0]`, 1000) // a second copy in the same bucket
	e.do("ZADD", e.c.Keys().DelayedSchedule(), 5, 5)
	var last delayed.Progress
	r, err := delayedio.Clear(ctx, e.c, func(p delayed.Progress) { last = p })
	if err != nil || r != (delayed.Removal{Removed: 1201, Unindexed: 1200, Unscheduled: 601}) {
		t.Fatalf("clear: %+v, %v", r, err)
	}
	if last.Buckets != 601 || last.Done != 601 {
		t.Errorf("last progress %+v", last)
	}
	if s := e.state(); len(s) != 0 {
		t.Errorf("left after clear: %d keys", len(s))
	}
}

// Remove while movers promote the same buckets: every matching item is
// either removed or promoted, once; the others are all promoted.
func TestRemoveWhileMoversPromote(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fill("q", "Drop", 0, 1000, 50, 100)
	e.fill("q", "Keep", 1000, 1000, 50, 100)
	var wg sync.WaitGroup
	var removed delayed.Removal
	var rerr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		removed, rerr = delayedio.Remove(ctx, e.c, delayed.Filter{Class: "Drop", Queue: "q"}, nil)
	}()
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, _ := delayedio.NewMover(delayedio.MoverConfig{Client: e.c, Now: func() time.Time { return time.Unix(10000, 0) }})
			if _, err := m.Pass(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if rerr != nil {
		t.Fatal(rerr)
	}
	counts := e.argCounts("q")
	for i := 0; i < 2000; i++ {
		n := counts[i]
		switch {
		case i >= 1000 && n != 1:
			t.Fatalf("Keep %d promoted %d times", i, n)
		case i < 1000 && n > 1:
			t.Fatalf("Drop %d promoted %d times", i, n)
		}
	}
	promotedDrops := len(counts) - 1000
	if int64(promotedDrops)+removed.Removed != 1000 {
		t.Errorf("drops: %d promoted + %d removed, want 1000", promotedDrops, removed.Removed)
	}
	if s := e.state(); len(s) != 0 {
		t.Errorf("left: %v", s)
	}
	t.Logf("removed %d drops, movers promoted %d", removed.Removed, promotedDrops)
}

// Clear while movers promote the same due buckets (the head moves under
// the trimming, which reads the bucket again): every item is promoted once
// or removed, nothing is left.
func TestClearWhileMoversPromote(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fill("q", "J", 0, 1200, 600, 100) // two long buckets
	var wg sync.WaitGroup
	var removed delayed.Removal
	var rerr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		removed, rerr = delayedio.Clear(ctx, e.c, nil)
	}()
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, _ := delayedio.NewMover(delayedio.MoverConfig{Client: e.c, Now: func() time.Time { return time.Unix(10000, 0) }})
			if _, err := m.Pass(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if rerr != nil {
		t.Fatal(rerr)
	}
	counts := e.argCounts("q")
	for i, n := range counts {
		if n != 1 {
			t.Fatalf("item %d promoted %d times", i, n)
		}
	}
	if int64(len(counts))+removed.Removed != 1200 || removed.Unindexed != removed.Removed {
		t.Errorf("%d promoted + %+v, want 1200 in all", len(counts), removed)
	}
	if s := e.state(); len(s) != 0 {
		t.Errorf("left: %d keys", len(s))
	}
	t.Logf("cleared %d, movers promoted %d", removed.Removed, len(counts))
}

// Removing a whole long bucket (from its head, a chunk per step) removes
// every copy of a repeated item and its index entry once.
func TestRemoveWholeLongBucket(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fill("q", "J", 0, 2500, 2500, 100)
	e.enqueuePlain("q", "J", `[7]`, 100) // a copy in the last chunk
	e.enqueuePlain("q", "K", `[1]`, 200) // another bucket, not in range
	r, err := delayedio.Remove(ctx, e.c, delayed.Filter{To: time.Unix(150, 0)}, nil)
	if err != nil || r != (delayed.Removal{Removed: 2501, Unindexed: 2500, Unscheduled: 1}) {
		t.Fatalf("remove: %+v, %v", r, err)
	}
	if s := e.state(); len(s) != 3 || len(s["delayed:200"]) != 1 {
		t.Errorf("left: %v", s)
	}
}
