package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// Middleware wraps every handler, the first added outermost, and sees the
// job; a handler registered after Use is wrapped too.
func TestRegistryMiddleware(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	var trace []string
	add := func(s string) {
		mu.Lock()
		trace = append(trace, s)
		mu.Unlock()
	}
	e.reg.Use(func(next worker.HandlerFunc) worker.HandlerFunc {
		return func(ctx context.Context, j *worker.Job) error {
			add("outer:" + j.Class)
			return next(ctx, j)
		}
	}, func(next worker.HandlerFunc) worker.HandlerFunc {
		return func(ctx context.Context, j *worker.Job) error {
			add("inner")
			if err := next(ctx, j); err != nil {
				return errors.New("wrapped: " + err.Error())
			}
			return nil
		}
	})
	e.reg.Register("Boom", func(ctx context.Context, j *worker.Job) error {
		add("handler")
		return errors.New("boom")
	})
	var rec recorder
	e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Retry: noRetry})
	e.push("q", `{"class":"Boom","args":[]}`)
	done := rec.waitN(t, 1)
	if done[0].Error != "wrapped: boom" {
		t.Errorf("error = %q", done[0].Error)
	}
	if got := strings.Join(trace, ","); got != "outer:Boom,inner,handler" {
		t.Errorf("trace = %s", got)
	}
}
