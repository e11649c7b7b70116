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
	eventually(t, "two refused finishes", func() bool {
		return strings.Count(logBuf.String(), "a key has the wrong type; retrying until it is fixed") >= 2
	})
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
