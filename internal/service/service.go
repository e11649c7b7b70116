// Package service gives every long-lived loop one lifecycle shape:
// Start(ctx) runs it in a goroutine, Stop cancels it and waits. Both are
// idempotent and safe to call concurrently.
package service

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Runner runs one loop function at a time.
type Runner struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// Start runs fn(ctx) in a goroutine unless it is already running; it reports
// whether it started it. fn must return when ctx is done.
func (r *Runner) Start(ctx context.Context, fn func(ctx context.Context)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done != nil {
		select {
		case <-r.done:
		default:
			return false
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	r.cancel, r.done = cancel, done
	go func() {
		defer close(done)
		fn(ctx)
	}()
	return true
}

// Stop cancels the loop and waits for it to return.
func (r *Runner) Stop() {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// Done is closed when the current run returns (nil before any Start).
func (r *Runner) Done() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

// Sleep waits d or until ctx is done; it reports whether d passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Logger is the default every component's config gives a nil logger: l,
// or a disabled logger.
func Logger(l *zerolog.Logger) *zerolog.Logger {
	if l != nil {
		return l
	}
	nop := zerolog.Nop()
	return &nop
}

// Clock is the default every component's config gives a nil clock: now,
// or time.Now.
func Clock(now func() time.Time) func() time.Time {
	if now != nil {
		return now
	}
	return time.Now
}
