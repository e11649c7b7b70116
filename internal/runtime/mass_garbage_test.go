package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/massqueue"
	"github.com/resque-go/resque-go/worker"
)

// A static payload in the producers' shape that is not JSON further on is
// routed by the allocator (which reads only its first fields) and fails at
// its worker as a BadPayload: a valid-JSON entry in failed under its
// pool's queue; the source's next job runs.
func TestStaticGarbageFailsAtWorker(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	cfg, err := massqueue.ParseConfig([]byte("pools: {static: {general: {worker_count: 1}}}\nmapping: {static: {default: {default: general}}}\n"), "h")
	if err != nil {
		t.Fatal(err)
	}
	a, err := massio.NewAllocator(massio.AllocatorConfig{Client: e.client, Config: cfg, Hostname: "h", WorkerID: "h:1:mass-allocator"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{`{"class":"Good","sourceId":"s1","name":"n","args":[1,}`, `{"class":"Good","sourceId":"s1","name":"n","args":["after"]}`} {
		if _, err := e.client.Do(e.ctx(), "LPUSH", k.Unassigned(), p); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := a.Pass(context.Background()); err != nil || st.Static.Moved != 2 {
		t.Fatalf("allocation: %+v %v", st, err)
	}
	e.reg.Register("Good", func(ctx context.Context, j *worker.Job) error { return nil })
	var rec recorder
	e.start(runtime.Config{Queues: "static", Sources: []protocol.Source{protocol.StaticPoolSource("general")}, Interval: 50 * time.Millisecond,
		OnFinish: rec.add, Retry: noRetry})
	done := rec.waitN(t, 2)
	if done[0].Outcome != "fail" || done[0].Exception != protocol.ExcBadPayload || done[1].Outcome != "ok" {
		t.Fatalf("outcomes: %+v", done)
	}
	failed := e.list(k.Failed())
	if len(failed) != 1 {
		t.Fatalf("failed: %q", failed)
	}
	if f := decodeFailed(t, failed[0]); f.Exception != protocol.ExcBadPayload || f.Queue != "static:queue:general" {
		t.Errorf("failed entry: %+v", f)
	}
}
