package node_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

// A serial queue must be named in the queue list (a glob cannot be serial).
func TestSerialQueuesMustBeNamed(t *testing.T) {
	t.Parallel()
	ok := node.Config{Queues: "critical,reports,*", Serial: []string{"reports"}}
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate(%+v) = %v", ok, err)
	}
	for _, bad := range []node.Config{
		{Queues: "critical,*", Serial: []string{"reports"}},
		{Queues: "critical,rep*", Serial: []string{"rep*"}},
	} {
		err := bad.Validate()
		if !errors.Is(err, node.ErrConfig) || !strings.Contains(err.Error(), "Config.Serial") {
			t.Errorf("Validate(%+v) = %v, want a Config.Serial config error", bad, err)
		}
	}
}

// A node's Serial setting reaches its slots: 4 slots over a serial queue
// never run two of its jobs at once, and run them in order.
func TestSerialQueueThroughNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	running, most, order := 0, 0, []string{}
	reg := worker.NewRegistry()
	reg.Register("S", func(ctx context.Context, j *worker.Job) error {
		mu.Lock()
		running++
		most = max(most, running)
		order = append(order, string(j.Args))
		mu.Unlock()
		<-time.After(5 * time.Millisecond) // the job's work
		mu.Lock()
		running--
		mu.Unlock()
		return nil
	})
	cfg := e.config("s")
	cfg.Concurrency, cfg.Serial = 4, []string{"s"}
	n, err := node.New(cfg, reg, node.WithLogger(zerolog.New(e.log)), node.WithTitle(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	k := e.client.Keys()
	const jobs = 20
	for i := range jobs {
		e.do("RPUSH", k.Queue("s"), fmt.Sprintf(`{"class":"S","args":[%d]}`, i))
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) == jobs && running == 0
	}, "every serial job ran")
	n.Stop()
	mu.Lock()
	defer mu.Unlock()
	if most != 1 {
		t.Errorf("%d serial jobs ran at once", most)
	}
	for i, a := range order {
		if a != fmt.Sprintf("[%d]", i) {
			t.Fatalf("order %v, want FIFO", order)
		}
	}
}
