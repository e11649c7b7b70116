package delayedio_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/protocol"
)

// badSchedule writes the three entries that once stopped every promotion of
// the namespace: a schedule member that is not a time (and one that is a
// time written with a leading zero, whose bucket no mover could empty), a
// bucket delayed:150 of another type, and a due item (in bucket 160) whose
// queue key holds another type. Around them are good items due at 100, 150
// (another queue in bucket 160) and 200.
func (e *env) badSchedule() {
	e.t.Helper()
	k := e.c.Keys()
	e.do("ZADD", k.DelayedSchedule(), 5, "garbage", 6, "0120")
	e.enqueuePlain("q", "Early", "[1]", 100)
	e.do("SET", k.Delayed(150), "not a list")
	e.do("ZADD", k.DelayedSchedule(), 150, 150)
	e.enqueuePlain("broken", "ToBroken", "[2]", 160)
	e.enqueuePlain("q", "SameBucket", "[3]", 160)
	e.do("SET", k.Queue("broken"), "not a list")
	e.enqueuePlain("q", "Late", "[4]", 200)
}

// One bad entry never stops the mover: a schedule member that is not a
// time and a bucket of another type are taken off the schedule with a
// failed entry naming them (the key itself is kept), a due item whose queue
// key holds another type is recorded in failed with its payload and queue
// (retryable once the key is fixed), and every other due item is promoted
// in the same pass. Before, the pass stopped at the first of them, every
// second, and no job of the namespace was promoted again.
func TestMoverSetsBadEntriesAside(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.c.Keys()
	e.badSchedule()
	m, err := delayedio.NewMover(delayedio.MoverConfig{Client: e.c, Hostname: "h", WorkerID: "h:1:*", Now: func() time.Time { return time.Unix(300, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	n, err := m.Pass(ctx)
	if err != nil || n != 4 {
		t.Fatalf("moved %d (%v), want the 3 good items and the one recorded in failed", n, err)
	}
	q := e.strs("LRANGE", k.Queue("q"), 0, -1)
	if len(q) != 3 || !strings.Contains(q[0], "Early") || !strings.Contains(q[1], "SameBucket") || !strings.Contains(q[2], "Late") {
		t.Errorf("queue q = %v", q)
	}
	if s := e.strs("ZRANGE", k.DelayedSchedule(), 0, -1); len(s) != 0 {
		t.Errorf("schedule left: %v", s)
	}
	if v := e.do("GET", k.Delayed(150)); string(v.([]byte)) != "not a list" {
		t.Errorf("the bucket of another type was changed: %q", v)
	}
	failed := e.strs("LRANGE", k.Failed(), 0, -1)
	if len(failed) != 4 {
		t.Fatalf("failed = %v, want 4 entries", failed)
	}
	entries := map[string]protocol.FailedEntry{}
	for i, raw := range failed {
		fe := protocol.ParseFailedEntry(int64(i), []byte(raw))
		if fe.Unreadable {
			t.Fatalf("failed entry %d is not valid JSON: %s", i, raw)
		}
		for _, key := range []string{`"garbage"`, `"0120"`, k.Delayed(150), k.Queue("broken")} {
			if strings.Contains(fe.Error, key) {
				entries[key] = fe
			}
		}
	}
	for _, key := range []string{`"garbage"`, `"0120"`, k.Delayed(150)} {
		fe, ok := entries[key]
		if !ok || fe.Retryable() {
			t.Errorf("no failed entry naming %s, or it is retryable: %+v", key, fe)
		}
	}
	fe, ok := entries[k.Queue("broken")]
	if !ok || !fe.Retryable() || fe.Queue != "broken" || fe.Exception != protocol.ExcWrongType ||
		string(fe.PayloadBytes()) != `{"class":"ToBroken","args":[2]}` {
		t.Errorf("failed entry of the item for the broken queue: %+v", fe)
	}
	if n := e.do("EXISTS", k.Delayed(160)).(int64); n != 0 {
		t.Errorf("bucket 160 still holds %v", e.strs("LRANGE", k.Delayed(160), 0, -1))
	}
}

// A bucket whose items cannot even be recorded in failed (failed holds
// another type, and so does the items' queue) is left for the next pass,
// logged once a minute, not once a pass; the buckets after it are promoted
// in the same pass.
func TestMoverGoesOnPastBucketItCannotHandle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.c.Keys()
	e.enqueuePlain("broken", "Stuck", "[1]", 100)
	e.do("SET", k.Queue("broken"), "x")
	e.do("SET", k.Failed(), "x")
	e.enqueuePlain("q", "Later", "[2]", 200)
	var logs bytes.Buffer
	log := zerolog.New(&logs)
	m, _ := delayedio.NewMover(delayedio.MoverConfig{Client: e.c, Logger: &log, Now: func() time.Time { return time.Unix(300, 0) }})
	if n, err := m.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("moved %d (%v), want 1", n, err)
	}
	if n, err := m.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("second pass moved %d (%v), want 0", n, err)
	}
	if n := strings.Count(logs.String(), "cannot be promoted now"); n != 1 {
		t.Errorf("the stuck bucket was logged %d times in two passes, want once:\n%s", n, logs.String())
	}
	if q := e.strs("LRANGE", k.Queue("q"), 0, -1); len(q) != 1 {
		t.Errorf("queue q = %v", q)
	}
	if b := e.strs("LRANGE", k.Delayed(100), 0, -1); len(b) != 1 {
		t.Errorf("the stuck item left its bucket: %v", b)
	}
	e.do("DEL", k.Failed())
	if n, err := m.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("after failed was fixed: moved %d (%v), want 1", n, err)
	}
	if f := e.strs("LRANGE", k.Failed(), 0, -1); len(f) != 1 || !strings.Contains(f[0], k.Queue("broken")) {
		t.Errorf("failed = %v", f)
	}
}

// List, Count, Remove with a filter skip the bad entries; Clear takes
// them off the schedule (the keys of another type are kept). Before, each
// failed on the member that is not a time, so the tool could not repair it.
func TestAdminSkipsOrClearsBadEntries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.c.Keys()
	e.badSchedule()
	items, err := delayedio.List(ctx, e.c, delayed.Filter{}, 0, 0)
	if err != nil || len(items) != 4 {
		t.Fatalf("list: %d items (%v), want 4", len(items), err)
	}
	if n, err := delayedio.Count(ctx, e.c, delayed.Filter{}); err != nil || n.Items != 4 || n.Buckets != 3 {
		t.Fatalf("count: %+v (%v)", n, err)
	}
	if n, err := delayedio.Count(ctx, e.c, delayed.Filter{Class: "Late"}); err != nil || n.Items != 1 {
		t.Fatalf("count by class: %+v (%v)", n, err)
	}
	if r, err := delayedio.Remove(ctx, e.c, delayed.Filter{Class: "Early"}, nil); err != nil || r.Removed != 1 {
		t.Fatalf("remove by class: %+v (%v)", r, err)
	}
	if n := e.do("ZCARD", k.DelayedSchedule()).(int64); n != 5 {
		t.Fatalf("a filtered remove touched the bad entries: %d left on the schedule", n)
	}
	r, err := delayedio.Clear(ctx, e.c, nil)
	if err != nil || r.Removed != 3 {
		t.Fatalf("clear: %+v (%v)", r, err)
	}
	if s := e.strs("ZRANGE", k.DelayedSchedule(), 0, -1); len(s) != 0 {
		t.Errorf("schedule left after clear: %v", s)
	}
	if v := e.do("GET", k.Delayed(150)); string(v.([]byte)) != "not a list" {
		t.Errorf("clear changed the bucket of another type: %q", v)
	}
}
