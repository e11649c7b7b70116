package web_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

// A lock taken by a real resque-go worker on a serial queue is listed
// with that worker as its holder while its job runs, not as stale, and
// is gone once the job ends.
func TestSerialLockOfARunningWorker(t *testing.T) {
	e := newEnv(t)
	started, release := make(chan struct{}), make(chan struct{})
	reg := worker.NewRegistry()
	reg.Register("Hold", func(ctx context.Context, _ *worker.Job) error {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	})
	n, err := node.New(node.Config{Redis: node.Redis{URL: os.Getenv(redisEnv), Namespace: e.ns}, Queues: "ser", Serial: []string{"ser"},
		Hostname: "serialhost"}, reg, node.WithTitle(nil), node.WithSlog(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Enqueue(ctx(), "ser", "Hold"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the job did not start")
	}
	type lock struct {
		Queue   string `json:"queue"`
		Stale   bool   `json:"stale"`
		Holders []struct {
			Worker string `json:"worker"`
			Class  string `json:"class"`
		} `json:"holders"`
	}
	var l struct{ Locks []lock }
	e.get("api/serial", viewerSecret).decode(t, &l)
	if len(l.Locks) != 1 || l.Locks[0].Queue != "ser" || l.Locks[0].Stale || len(l.Locks[0].Holders) != 1 || l.Locks[0].Holders[0].Class != "Hold" {
		t.Fatalf("while the job runs: %+v", l.Locks)
	}
	close(release)
	redistest.Eventually(t, 0, func() bool {
		e.get("api/serial", viewerSecret).decode(t, &l)
		return len(l.Locks) == 0
	}, "the lock released with its job's end")
}
