package runtime_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/recovery"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// In the resque-v3 namespace the v3 PHP runtime parses every id in its
// workers set as host~pid~queue and signals the pid it finds (a resque-go id
// gives it none: kill(0, sig) hits its own process group). resque-go keeps
// its registry apart there; jobs, records and stats stay shared, and dead
// resque-go workers are still found and their jobs recovered.
func TestV3NamespaceKeepsRegistryApart(t *testing.T) {
	t.Parallel()
	if k := protocol.NewKeys(protocol.V3Namespace); !k.IsSeparateRegistry() ||
		k.Workers() != "resque-v3:resque-go:workers" || k.Heartbeats() != "resque-v3:resque-go:workers:heartbeat" {
		t.Fatalf("resque-v3 keys: %q %q", k.Workers(), k.Heartbeats())
	}
	if k := protocol.NewKeys("resque"); k.IsSeparateRegistry() || k.Workers() != "resque:workers" {
		t.Fatalf("resque keys: %q", k.Workers())
	}
	ns := redistest.Namespace(t)
	c, err := rdb.New(rdb.Options{URL: os.Getenv(redisEnv), Namespace: ns, SeparateRegistry: true, ReadTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e := &env{t: t, client: c, reg: worker.NewRegistry(), ns: ns}
	done := make(chan struct{})
	e.reg.Register("Hold", func(ctx context.Context, j *worker.Job) error {
		<-done
		return nil
	})
	w := e.start(runtime.Config{Queues: "q", PID: 999999, HeartbeatInterval: time.Second})
	if got := e.members(ns + ":workers"); len(got) != 0 {
		t.Errorf("%s:workers = %v, want nothing a v3 runtime could parse", ns, got)
	}
	if got := e.members(c.Keys().Workers()); len(got) != 1 || got[0] != w.IDs()[0] {
		t.Errorf("registry = %v", got)
	}
	// a dead resque-go worker (pid 999999 is gone) is pruned from the separate registry
	e.push("q", `{"class":"Hold","args":[]}`)
	redistest.Eventually(t, 0, func() bool { return e.get(c.Keys().Worker(w.IDs()[0])) != "" }, "job claimed")
	close(done)
	rec, err := recovery.New(recovery.Config{Client: c, Hostname: "testhost", PID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Prune(e.ctx()); err != nil {
		t.Fatal(err)
	}
}
