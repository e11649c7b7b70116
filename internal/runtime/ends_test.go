package runtime_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// endsEnv is an env whose client writes events.
func endsEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	c, err := rdb.New(rdb.Options{URL: os.Getenv(redisEnv), Namespace: e.ns, ReadTimeout: 5 * time.Second, Events: rdb.EventsConfig{On: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e.client = c
	return e
}

// A hard stop's requeue frees the job's cap slot at once (not when its
// lease ends) and writes its requeued event.
func TestShutdownRequeueFreesCapAndWritesEvent(t *testing.T) {
	t.Parallel()
	e := endsEnv(t)
	running := make(chan struct{})
	e.reg.Register("Capped", func(ctx context.Context, j *worker.Job) error {
		close(running)
		<-ctx.Done()
		return ctx.Err()
	})
	const id = "0123456789abcdef0123456789abcdef"
	e.push("q", `{"class":"Capped","args":[],"id":"`+id+`"}`)
	l, err := protocol.ParseLimit("Capped=1")
	if err != nil {
		t.Fatal(err)
	}
	w := e.start(runtime.Config{Queues: "q", TermTimeout: 100 * time.Millisecond, Limits: []protocol.Limit{l}})
	<-running
	w.Shutdown()
	k := e.client.Keys()
	if q := e.list(k.Queue("q")); len(q) != 1 {
		t.Fatalf("queue after the hard stop: %v", q)
	}
	n, err := redis.Int(e.client.Do(context.Background(), "ZCARD", k.LimitBase(l.Name())+protocol.LimitHoldersSuffix))
	if err != nil || n != 0 {
		t.Errorf("holders after the requeue: %d %v", n, err)
	}
	evs, err := e.client.JobEvents(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ev := range evs {
		names = append(names, ev.Fields["event"])
	}
	if want := []string{"started", "requeued"}; !slices.Equal(names, want) {
		t.Errorf("events %v, want %v", names, want)
	}
}

// A parent interrupted by a hard stop with DirtyExitOnTerm ends failed,
// and its held child (on-parent-failure fail) fails with it.
func TestShutdownDirtyExitSettlesChildren(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	running := make(chan struct{})
	e.reg.Register("J", func(ctx context.Context, j *worker.Job) error {
		close(running)
		<-ctx.Done()
		return ctx.Err()
	})
	now := time.Now()
	enqueue := func(id string, parents []rdb.DepParent) {
		d := protocol.DepFields{OnParentFailure: protocol.OnParentFailureFail}
		for _, p := range parents {
			d.After = append(d.After, p.Name)
		}
		p, err := protocol.NewPayload("J", []byte(`[]`), protocol.EnqueueOptions{ID: id, Now: now, Deps: d})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.client.EnqueueDeps(ctx, rdb.DepJob{ID: id, Queue: "q", Payload: p, Policy: protocol.OnParentFailureFail, Parents: parents}, now); err != nil {
			t.Fatal(err)
		}
	}
	enqueue("parent", nil)
	enqueue("child", []rdb.DepParent{{Name: "parent"}})
	w := e.start(runtime.Config{Queues: "q", DirtyExitOnTerm: true})
	<-running
	w.Shutdown()
	if st, err := e.client.DepJob(ctx, "child"); err != nil || st.State != "failed" {
		t.Errorf("child: %+v %v", st, err)
	}
}
