package runtime_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// A mass job retried with a backoff goes back to its own list at once: from
// the delayed queue it would be promoted to queue:committed:<id>, a list no
// worker serves (found by the chaos ledger). Every attempt runs, the last
// failure is in failed, and nothing waits in the delayed queue or in a
// queue:<mass list>.
func TestMassRetryStaysInItsList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	const batch = "s1:imp:0000abcd"
	do := func(args ...any) any {
		t.Helper()
		v, err := e.client.Do(e.ctx(), args[0].(string), args[1:]...)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	do("LPUSH", k.Committed(batch), `{"class":"Boom","sourceId":"s1","name":"imp","args":[1],"id":"j1","queue_time":1.5}`)
	do("LPUSH", k.UnitQueues("imports", "n1-0"), batch)
	attempts := make(chan int, 8)
	e.reg.Register("Boom", func(ctx context.Context, j *worker.Job) error {
		attempts <- j.Attempt
		return errors.New("always")
	})
	var rec recorder
	e.start(runtime.Config{Queues: "mass", Sources: []protocol.Source{protocol.UnitSource("imports", "n1-0")}, Interval: 50 * time.Millisecond, OnFinish: rec.add,
		Retry: worker.RetryPolicy{MaxAttempts: 3, Backoff: worker.Backoff{Base: time.Hour}}})
	done := rec.waitN(t, 3)
	if done[0].Outcome != "retry" || done[1].Outcome != "retry" || done[2].Outcome != "fail" {
		t.Fatalf("outcomes %+v", done)
	}
	for i := 1; i <= 3; i++ {
		if a := <-attempts; a != i {
			t.Errorf("attempt %d ran as Job.Attempt %d", i, a)
		}
	}
	if n := len(e.list(k.Failed())); n != 1 {
		t.Errorf("%d failed entries, want 1", n)
	}
	if n := do("ZCARD", k.DelayedSchedule()).(int64); n != 0 {
		t.Errorf("%d delayed timestamps: a mass retry went through the delayed queue", n)
	}
	if n := do("EXISTS", k.Queue(protocol.CommittedPrefix+batch)).(int64); n != 0 {
		t.Error("a mass retry waits in queue:committed:<id>")
	}
}
