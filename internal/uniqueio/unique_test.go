package uniqueio_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/uniqueio"
	"github.com/resque-go/resque-go/unique"
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

func do(t *testing.T, c *rdb.Client, cmd string, args ...any) any {
	t.Helper()
	v, err := c.Do(context.Background(), cmd, args...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func payload(t *testing.T, uid string, n int, deferrable bool) []byte {
	t.Helper()
	p, err := protocol.NewPayload("Job", []byte(fmt.Sprintf("[%d]", n)), protocol.EnqueueOptions{
		Unique: protocol.Unique{UID: uid, Deferrable: deferrable}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// 100 producers racing on one uid: exactly one job is queued, every other
// enqueue is refused with ErrDuplicate.
func TestConcurrentEnqueuesGiveOneJob(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	queued, dups := 0, 0
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := uniqueio.Enqueue(context.Background(), c, unique.Job{Queue: "q", Payload: payload(t, "U", i, i%2 == 0)})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && res == unique.Queued:
				queued++
			case errors.Is(err, unique.ErrDuplicate):
				dups++
			default:
				t.Errorf("enqueue %d = %q, %v", i, res, err)
			}
		}()
	}
	wg.Wait()
	if queued != 1 || dups != 99 {
		t.Errorf("queued %d, duplicates %d; want 1 and 99", queued, dups)
	}
	if n := do(t, c, "LLEN", c.Keys().Queue("q")).(int64); n != 1 {
		t.Errorf("queue holds %d jobs, want 1", n)
	}
	if s, _ := do(t, c, "GET", c.Keys().UniqueState("U")).([]byte); string(s) != "queued" {
		t.Errorf("state = %q, want queued", s)
	}
	if do(t, c, "EXISTS", c.Keys().UniqueDeferred("U")).(int64) != 0 {
		t.Error("a job was parked although the uid's job is only queued, not running")
	}
}

// A delayed unique job takes the uid at once and is filed in the delayed
// queue in resque-scheduler's layout.
func TestDelayedUniqueJob(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	due := time.Unix(2000000000, 0)
	p := payload(t, "D", 1, false)
	if res, err := uniqueio.Enqueue(context.Background(), c, unique.Job{Queue: "q", Payload: p, DueAt: due}); err != nil || res != unique.Queued {
		t.Fatalf("enqueue = %q, %v", res, err)
	}
	item, _ := protocol.DelayedItem(p, "q")
	if got, _ := do(t, c, "LINDEX", k.Delayed(due.Unix()), 0).([]byte); string(got) != string(item) {
		t.Errorf("delayed item = %s, want %s", got, item)
	}
	if do(t, c, "SISMEMBER", k.Timestamps(item), protocol.DelayedMember(due.Unix())).(int64) != 1 {
		t.Error("timestamps index missing")
	}
	if _, err := uniqueio.Enqueue(context.Background(), c, unique.Job{Queue: "q", Payload: payload(t, "D", 2, false)}); !errors.Is(err, unique.ErrDuplicate) {
		t.Errorf("second enqueue = %v, want ErrDuplicate", err)
	}
	// a promoter that drops the unique field (resque-scheduler) would leave
	// the state queued for ever: it expires a day after the job is due
	ttl := do(t, c, "TTL", k.UniqueState("D")).(int64)
	if want := due.Unix() - time.Now().Unix() + 86400; ttl < want-60 || ttl > want+60 {
		t.Errorf("TTL of the delayed job's state = %d, want about %d", ttl, want)
	}
}

// Clear frees a uid and releases its parked job instead of dropping it; a
// parked job that names no queue goes to failed.
func TestClearReleasesDeferred(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	ctx := context.Background()
	do(t, c, "SET", k.UniqueState("C"), "running")
	parked := payload(t, "C", 7, true)
	if res, err := uniqueio.Enqueue(ctx, c, unique.Job{Queue: "q", Payload: parked}); err != nil || res != unique.Deferred {
		t.Fatalf("enqueue while running = %q, %v", res, err)
	}
	infos, err := uniqueio.List(ctx, c)
	if err != nil || len(infos) != 1 || infos[0].UID != "C" || infos[0].State != "running" || infos[0].Deferred == nil {
		t.Fatalf("List = %+v, %v", infos, err)
	}
	res, err := uniqueio.Clear(ctx, c, "C", "test", time.Now())
	if err != nil || res != unique.ClearReleased {
		t.Fatalf("Clear = %q, %v", res, err)
	}
	item, _ := protocol.DelayedItem(parked, "q")
	if got, _ := do(t, c, "LINDEX", k.Queue("q"), 0).([]byte); string(got) != string(item) {
		t.Errorf("released job = %s, want %s", got, item)
	}
	if s, _ := do(t, c, "GET", k.UniqueState("C")).([]byte); string(s) != "queued" {
		t.Errorf("state after release = %q, want queued (the released job waits)", s)
	}
	// garbage parked by hand: recorded in failed, never dropped
	do(t, c, "SET", k.UniqueState("G"), "running")
	do(t, c, "SET", k.UniqueDeferred("G"), "not json")
	if res, err := uniqueio.Clear(ctx, c, "G", "test", time.Now()); err != nil || res != unique.ClearReleased {
		t.Fatalf("Clear G = %q, %v", res, err)
	}
	entry, _ := do(t, c, "LINDEX", k.Failed(), 0).([]byte)
	var fe struct {
		Payload   string `json:"payload"`
		Exception string `json:"exception"`
	}
	if err := json.Unmarshal(entry, &fe); err != nil || fe.Payload != "not json" || fe.Exception == "" {
		t.Errorf("failed entry %s: %v", entry, err)
	}
	if res, _ := uniqueio.Clear(ctx, c, "nope", "test", time.Now()); res != unique.ClearAbsent {
		t.Errorf("Clear of a free uid = %q, want absent", res)
	}
}

// The sweep frees a running uid that no registered worker holds, only
// after the grace period, and leaves held ones alone.
func TestSweeperFreesOrphanedRunningState(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	ctx := context.Background()
	now := time.Unix(1700000000, 0)
	s, err := uniqueio.NewSweeper(uniqueio.SweeperConfig{Client: c, Owner: "me", Grace: time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	do(t, c, "SET", k.UniqueState("orphan"), "running")
	do(t, c, "SET", k.UniqueState("held"), "running")
	do(t, c, "SET", k.UniqueState("waiting"), "queued")
	do(t, c, "SADD", k.Workers(), "host:1:q")
	do(t, c, "SET", k.Worker("host:1:q"), `{"queue":"q","run_at":"2026-01-01T00:00:00Z","payload":{"class":"Job","args":[],"unique":{"uid":"held"}}}`)
	parked := `{"class":"Job","args":[9],"queue":"q","unique":{"uid":"orphan","deferrableBy":0}}`
	do(t, c, "SET", k.UniqueDeferred("orphan"), parked)
	if n, err := s.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("first pass freed %d, %v; want 0 (grace)", n, err)
	}
	now = now.Add(2 * time.Minute)
	if n, err := s.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("second pass freed %d, %v; want 1", n, err)
	}
	if got, _ := do(t, c, "LINDEX", k.Queue("q"), 0).([]byte); string(got) != parked {
		t.Errorf("the orphan's parked job = %s, want it released", got)
	}
	for uid, want := range map[string]string{"orphan": "queued", "held": "running", "waiting": "queued"} {
		if got, _ := do(t, c, "GET", k.UniqueState(uid)).([]byte); string(got) != want {
			t.Errorf("state of %s = %q, want %q", uid, got, want)
		}
	}
}

// One uid the sweep cannot read or clear (a key of another type, written
// by hand) does not stop the sweep: the other orphaned uids are freed, and
// the pass's error names the bad one's key.
func TestSweeperGoesOnPastABadUID(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	ctx := context.Background()
	now := time.Unix(1700000000, 0)
	s, err := uniqueio.NewSweeper(uniqueio.SweeperConfig{Client: c, Owner: "me", Grace: time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	// a state key of another type: unreadable
	do(t, c, "HSET", k.UniqueState("a-hash"), "f", "v")
	// a deferred key of another type: the clear fails on it
	do(t, c, "SET", k.UniqueState("b-list"), "running")
	do(t, c, "RPUSH", k.UniqueDeferred("b-list"), "x")
	do(t, c, "SET", k.UniqueState("orphan"), "running")
	if _, err := s.Pass(ctx); err == nil || !strings.Contains(err.Error(), k.UniqueState("a-hash")) {
		t.Fatalf("first pass: %v; want an error naming %s", err, k.UniqueState("a-hash"))
	}
	now = now.Add(2 * time.Minute)
	n, err := s.Pass(ctx)
	if n != 1 || err == nil || !strings.Contains(err.Error(), "b-list") {
		t.Fatalf("second pass freed %d, %v; want 1 freed and an error naming b-list", n, err)
	}
	if v := do(t, c, "EXISTS", k.UniqueState("orphan")); v != int64(0) {
		t.Errorf("the orphan's state is still there")
	}
}

// ErrDuplicate says what the README says it means: the uid is taken and
// nothing was written (a user reading the message needs no other doc).
func TestErrDuplicateSaysTakenAndNothingWritten(t *testing.T) {
	msg := unique.ErrDuplicate.Error()
	for _, want := range []string{"unique id is taken", "nothing was written"} {
		if !strings.Contains(msg, want) {
			t.Errorf("ErrDuplicate = %q; want it to say %q", msg, want)
		}
	}
}
