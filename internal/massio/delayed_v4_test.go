package massio_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/failureio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// v4DelayedItem is what resqu-client (the resque v4 PHP producer) writes
// with Client::enqueueDelayed: BaseJob::toString, json_encode of class,
// args, sourceId, name (PHP escapes / and \), RPUSHed to delayed:<ts> with
// a ZADD to delayed_queue_schedule; no id, no queue_time, no queue, no
// timestamps: index.
const v4DelayedItem = `{"class":"\\Example\\JobWrapper","args":{"url":"https:\/\/example.com\/a"},"sourceId":"u145680","name":"\\Example\\Jobs\\MailJob"}`

func (e *env) v4EnqueueDelayed(ts int64) {
	e.t.Helper()
	e.do("RPUSH", e.ns+":delayed:"+strconv.FormatInt(ts, 10), v4DelayedItem)
	e.do("ZADD", e.ns+":delayed_queue_schedule", ts, ts)
}

// checkV4Payload: the job a v4 delayed item becomes keeps the producer's
// fields and bytes, and gains an id and a queue_time as resqu-client's
// UnassignedJob has.
func checkV4Payload(t *testing.T, raw string) {
	t.Helper()
	var f map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &f); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if len(f["id"]) != 34 || len(f["queue_time"]) == 0 || string(f["sourceId"]) != `"u145680"` || f["queue"] != nil {
		t.Errorf("promoted payload %s", raw)
	}
	if want := v4DelayedItem[:len(v4DelayedItem)-1]; raw[:len(want)] != want {
		t.Errorf("promoted payload %s does not start with the producer's bytes %s", raw, want)
	}
}

// A due resqu-client delayed job (no queue, a sourceId and a name) is
// promoted into the mass-queue path (LPUSH unassigned, as the v4 server
// routes it) and from there allocated to its static pool, once; nothing
// goes to failed and no queue is invented.
func TestV4DelayedJobIsPromotedToUnassigned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.v4EnqueueDelayed(1700000000)
	e.do("LPUSH", e.ns+":unassigned", `{"class":"J","sourceId":"s0","name":"n","id":"first","queue_time":1.5}`)
	m, err := delayedio.NewMover(delayedio.MoverConfig{Client: e.c, Now: func() time.Time { return time.Unix(1700000000, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := m.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("mover pass: %d %v", n, err)
	}
	if n := e.int("LLEN", e.ns+":failed"); n != 0 {
		t.Fatalf("failed: %q", e.strs("LRANGE", e.ns+":failed", 0, -1))
	}
	if n := e.int("EXISTS", e.ns+":queues"); n != 0 {
		t.Errorf("queues: %q", e.strs("SMEMBERS", e.ns+":queues"))
	}
	un := e.strs("LRANGE", e.ns+":unassigned", 0, -1)
	if len(un) != 2 || sourceOf(t, []byte(un[1])) != "s0" {
		t.Fatalf("unassigned (the promoted job behind the one queued before it): %q", un)
	}
	checkV4Payload(t, un[0])
	if n := e.int("EXISTS", e.ns+":delayed_queue_schedule", e.ns+":delayed:1700000000"); n != 0 {
		t.Error("the delayed item is still in the delayed queue")
	}
	if n, err := m.Pass(ctx); err != nil || n != 0 {
		t.Fatalf("second mover pass moved %d (%v)", n, err)
	}
	a := e.allocator(mustConfig(t, staticConfig), newClock())
	e.allocate(a)
	if got := e.queued("general", "u145680"); len(got) != 1 || got[0] != un[0] {
		t.Errorf("general/u145680: %q, want the promoted job", got)
	}
	// a worker of the pool runs it, once
	w := e.worker(0, protocol.StaticPoolSource("general"))
	ran := 0
	for {
		res, ok := w.claim()
		if !ok {
			break
		}
		if string(res.Payload) == un[0] {
			ran++
		}
		w.finish(res, rdb.OutcomeOK)
	}
	if ran != 1 {
		t.Errorf("the promoted job ran %d times", ran)
	}
}

// A resqu-client delayed job that an older resque-go recorded in failed
// (a BadPayload entry without a queue) is retried through unassigned, as a
// failed mass job is, with an id added.
func TestFailedV4DelayedJobIsRetriedThroughUnassigned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	f := protocol.Failure{FailedAt: time.Unix(1700000000, 0), Payload: []byte(v4DelayedItem), Exception: protocol.ExcBadPayload,
		Error: "delayed item cannot be promoted: bad payload: delayed item has no queue", Backtrace: []string{}, Worker: "h:1:mover"}
	e.do("RPUSH", e.ns+":failed", f.Encode())
	store := failureio.New(e.c, func() time.Time { return time.Unix(1700000100, 0) })
	entry, err := store.Get(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Retry(ctx, entry); err != nil {
		t.Fatalf("retry: %v", err)
	}
	un := e.strs("LRANGE", e.ns+":unassigned", 0, -1)
	if len(un) != 1 {
		t.Fatalf("unassigned: %q", un)
	}
	checkV4Payload(t, un[0])
	if n := e.int("EXISTS", e.ns+":queues", e.ns+":queue:"); n != 0 {
		t.Error("the retry named a queue")
	}
	a := e.allocator(mustConfig(t, staticConfig), newClock())
	e.allocate(a)
	if got := e.queued("general", "u145680"); len(got) != 1 {
		t.Errorf("general/u145680: %q", got)
	}
}
