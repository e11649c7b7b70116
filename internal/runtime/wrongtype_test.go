package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// A job that fails while failed is a key of another type (written by hand)
// is neither lost nor run again: its slot keeps the job in worker:<id> and
// tries the finish again until someone fixes the key, then records it.
func TestFailedOfWrongTypeHoldsTheJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	if _, err := e.client.Do(e.ctx(), "SET", k.Failed(), "written by hand"); err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	ran := make(chan struct{}, 4)
	e.reg.Register("Boom", func(ctx context.Context, j *worker.Job) error {
		runs.Add(1)
		ran <- struct{}{}
		return errors.New("boom")
	})
	e.push("q", `{"class":"Boom","args":[1]}`)
	var rec recorder
	// held lists the worker records that hold the job
	held := func() []string {
		keys, err := redis.Strings(e.client.Do(e.ctx(), "KEYS", k.Worker("*")))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, key := range keys {
			if v, err := redis.String(e.client.Do(e.ctx(), "GET", key)); err == nil && strings.Contains(v, `"class":"Boom"`) {
				out = append(out, key)
			}
		}
		return out
	}
	// the worker's log, to see the refused finishes
	var logBuf lockedBuffer
	l := zerolog.New(io.MultiWriter(zerolog.NewTestWriter(t), &logBuf)).Level(zerolog.WarnLevel)
	e.start(runtime.Config{Queues: "q", Interval: 50 * time.Millisecond, OnFinish: rec.add, Retry: noRetry, Logger: &l})
	<-ran
	redistest.Eventually(t, 0, func() bool {
		return strings.Count(logBuf.String(), "a key has the wrong type; retrying until it is fixed") >= 2
	}, "two refused finishes")
	if recs := held(); len(recs) != 1 || runs.Load() != 1 {
		t.Fatalf("while the finish is refused: records %q, %d runs", recs, runs.Load())
	}
	if _, err := e.client.Do(e.ctx(), "DEL", k.Failed()); err != nil {
		t.Fatal(err)
	}
	done := rec.waitN(t, 1)
	if done[0].Outcome != "fail" {
		t.Fatalf("outcome %+v", done[0])
	}
	failed := e.list(k.Failed())
	if len(failed) != 1 {
		t.Fatalf("failed: %q", failed)
	}
	if f := decodeFailed(t, failed[0]); f.Error != "boom" || f.Queue != "q" {
		t.Errorf("failed entry: %+v", f)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the job ran %d times, want 1", n)
	}
	if n := e.counter(k.StatFailed()); n != 1 {
		t.Errorf("stat:failed = %d", n)
	}
}

// lockedBuffer is a bytes.Buffer for a logger and a test's reads at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A queue whose key holds another type does not stop the queues after it
// (-q b,a with queue:b a string: a drains, one job after the other, each
// end recorded with the next claim); the worker names it in its log once
// (not once a job) and in WrongTypeQueues, and never says a job's end was
// not recorded.
func TestQueueOfWrongTypeIsSkipped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.client.Keys()
	if _, err := e.client.Do(e.ctx(), "SET", k.Queue("b"), "x"); err != nil {
		t.Fatal(err)
	}
	e.reg.Register("J", func(ctx context.Context, j *worker.Job) error { return nil })
	const jobs = 20
	for i := 0; i < jobs; i++ {
		e.push("a", `{"class":"J","args":[]}`)
	}
	var rec recorder
	var logBuf lockedBuffer
	l := zerolog.New(io.MultiWriter(zerolog.NewTestWriter(t), &logBuf)).Level(zerolog.WarnLevel)
	w := e.start(runtime.Config{Queues: "b,a", Interval: 50 * time.Millisecond, OnFinish: rec.add, Logger: &l})
	done := rec.waitN(t, jobs)
	for _, f := range done {
		if f.Outcome != "ok" || f.Queue != "a" {
			t.Fatalf("finished %+v", f)
		}
	}
	if n, err := e.client.Int(e.ctx(), k.StatProcessed()); err != nil || n != jobs {
		t.Errorf("stat:processed %d (%v), want %d", n, err, jobs)
	}
	if got := w.WrongTypeQueues(); len(got) != 1 || got[0] != "b" {
		t.Errorf("WrongTypeQueues %q, want [b]", got)
	}
	out := logBuf.String()
	if n := strings.Count(out, "queue key holds another type"); n != 1 || !strings.Contains(out, `"key":"`+k.Queue("b")+`"`) {
		t.Errorf("the log names the queue %d times (want once, with its key):\n%s", n, out)
	}
	for _, bad := range []string{"could not record", "claim failed", "refused the job's end"} {
		if strings.Contains(out, bad) {
			t.Errorf("the log says %q:\n%s", bad, out)
		}
	}
	if v, err := redis.String(e.client.Do(e.ctx(), "GET", k.Queue("b"))); err != nil || v != "x" {
		t.Errorf("queue:b became %q (%v)", v, err)
	}
}
