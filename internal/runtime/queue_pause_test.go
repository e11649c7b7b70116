package runtime_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// takenBy counts the jobs a handler ran per queue.
type takenBy struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *takenBy) add(q string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[q]++
}

func (c *takenBy) get(q string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[q]
}

// A paused queue gets no new claim once the worker has read the pause,
// while another queue keeps flowing; the job running when the pause came
// finishes; after the resume the queue drains. The pause is set both ways:
// by PauseQueue, and by hand as resque-queue-control writes it; and for a
// glob spec, on the list the worker expanded.
func TestQueuePauseStopsOneQueue(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"PauseQueue", "ruby", "glob"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			var taken takenBy
			running, release := make(chan struct{}), make(chan struct{})
			e.reg.Register("Slow", func(ctx context.Context, j *worker.Job) error {
				taken.add(j.Queue)
				close(running)
				<-release
				return nil
			})
			e.reg.Register("Job", func(ctx context.Context, j *worker.Job) error {
				taken.add(j.Queue)
				return nil
			})
			e.push("a", `{"class":"Slow","args":[]}`)
			// b is in the queues set before the start, for the glob
			if _, err := e.client.Do(e.ctx(), "SADD", e.client.Keys().Queues(), "b"); err != nil {
				t.Fatal(err)
			}
			spec := "a,b"
			if how == "glob" {
				spec = "*"
			}
			w := e.start(runtime.Config{Queues: spec, Concurrency: 2})
			<-running

			paused := time.Now()
			if how == "ruby" {
				// ResqueQueueControlHelper.pause: redis.set "pause:queue:#{queue}", true
				if _, err := e.client.Do(e.ctx(), "SET", e.ns+":pause:queue:a", "true"); err != nil {
					t.Fatal(err)
				}
			} else if err := e.client.PauseQueue(e.ctx(), "a"); err != nil {
				t.Fatal(err)
			}
			redistest.Eventually(t, 0, func() bool {
				return slices.Equal(w.PausedQueues(), []string{"a"})
			}, "the worker to read the pause")
			t.Logf("pause seen by the worker after %v", time.Since(paused))

			for range 5 {
				e.push("a", `{"class":"Job","args":[]}`)
				e.push("b", `{"class":"Job","args":[]}`)
			}
			close(release) // the running job finishes; its finish claims the next job
			redistest.Eventually(t, 0, func() bool { return taken.get("b") == 5 }, "queue b to drain")
			// more claims from b, after the running job ended
			for range 3 {
				e.push("b", `{"class":"Job","args":[]}`)
			}
			redistest.Eventually(t, 0, func() bool { return taken.get("b") == 8 }, "queue b to drain again")
			if n := taken.get("a"); n != 1 {
				t.Errorf("jobs taken from paused queue a = %d, want 1 (the one running when it was paused)", n)
			}
			if q := e.list(e.client.Keys().Queue("a")); len(q) != 5 {
				t.Errorf("queue a holds %d jobs while paused, want 5", len(q))
			}

			if resumed, err := e.client.ResumeQueue(e.ctx(), "a"); err != nil || !resumed {
				t.Fatalf("ResumeQueue = %v, %v", resumed, err)
			}
			redistest.Eventually(t, 0, func() bool { return taken.get("a") == 6 }, "queue a to drain after the resume")
			if got := w.PausedQueues(); len(got) != 0 {
				t.Errorf("PausedQueues after the resume = %v", got)
			}
		})
	}
}

// A worker whose every queue is paused takes nothing and claims nothing
// until one is resumed; with Drain it stops, as a Ruby worker with
// INTERVAL=0 and resque-pause does.
func TestQueuePauseEveryQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var taken takenBy
	e.reg.Register("Job", func(ctx context.Context, j *worker.Job) error {
		taken.add(j.Queue)
		return nil
	})
	if err := e.client.PauseQueue(e.ctx(), "a"); err != nil {
		t.Fatal(err)
	}
	e.push("a", `{"class":"Job","args":[]}`)
	w := e.start(runtime.Config{Queues: "a", Concurrency: 3})
	if got := w.PausedQueues(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("PausedQueues at start = %v, want [a]: a queue paused before the start gets no claim", got)
	}
	e.push("a", `{"class":"Job","args":[]}`)
	if _, err := e.client.ResumeQueue(e.ctx(), "a"); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool { return taken.get("a") == 2 }, "both jobs to run after the resume")

	d := newEnv(t)
	if err := d.client.PauseQueue(d.ctx(), "a"); err != nil {
		t.Fatal(err)
	}
	d.push("a", `{"class":"Job","args":[]}`)
	dw := d.start(runtime.Config{Queues: "a", Drain: true})
	select {
	case <-dw.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("a draining worker whose only queue is paused did not stop")
	}
	if q := d.list(d.client.Keys().Queue("a")); len(q) != 1 {
		t.Errorf("paused queue after a drain = %d jobs, want 1", len(q))
	}
}

// A worker whose every queue is paused does not claim in a loop: over two
// reads of the pause keys (about 2 s) its slots run the claim script at
// most a few times, on a server of its own so that nothing else counts.
func TestQueuePauseEveryQueueIdles(t *testing.T) {
	t.Parallel()
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	e := newEnvURL(t, srv.URL())
	e.reg.Register("Job", func(ctx context.Context, j *worker.Job) error { return nil })
	if err := e.client.PauseQueue(e.ctx(), "a"); err != nil {
		t.Fatal(err)
	}
	e.push("a", `{"class":"Job","args":[]}`)
	w := e.start(runtime.Config{Queues: "a", Concurrency: 4})
	if got := w.PausedQueues(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("PausedQueues = %v, want [a]", got)
	}
	claims0, reads0 := cmdCalls(t, e, "evalsha", "fcall", "eval"), cmdCalls(t, e, "exists")
	redistest.Eventually(t, 0, func() bool { return cmdCalls(t, e, "exists") >= reads0+2 }, "two reads of the pause key")
	if n := cmdCalls(t, e, "evalsha", "fcall", "eval") - claims0; n > 4 {
		t.Errorf("%d claim scripts ran while the worker's only queue was paused, want none", n)
	}
	if q := e.list(e.client.Keys().Queue("a")); len(q) != 1 {
		t.Errorf("paused queue holds %d jobs, want 1", len(q))
	}
}

// cmdCalls sums the calls of the named commands in INFO commandstats.
func cmdCalls(t *testing.T, e *env, names ...string) int64 {
	t.Helper()
	v, err := e.client.Do(e.ctx(), "INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, line := range strings.Split(string(v.([]byte)), "\r\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok || !slices.Contains(names, strings.TrimPrefix(name, "cmdstat_")) {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(val, "calls="), ",")
		n, _ := strconv.ParseInt(calls, 10, 64)
		sum += n
	}
	return sum
}
