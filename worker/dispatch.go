package worker

import (
	"context"
	"runtime/debug"
	"strconv"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Middleware wraps every handler of a registry: logging, tracing, panics
// of your own, per-class limits. It gets the job the handler will get.
type Middleware func(next HandlerFunc) HandlerFunc

// Use adds middleware; the first added is the outermost. It applies to
// every handler, registered before or after, and to the fallback.
func (r *Registry) Use(mw ...Middleware) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.middleware = append(r.middleware, mw...)
}

// Resolve is the one dispatch of a job, shared by the runtime's slots and
// fork children: the job's handler (by Class, then a Rails ActiveJob
// wrapper's job_class, then the fallback) wrapped in the registry's
// middleware, or a ResqueGo::NoHandler *Error. Run what it returns with Call.
func (r *Registry) Resolve(job *Job) (HandlerFunc, error) {
	h, ok := r.lookup(job)
	if !ok {
		return nil, &Error{Exception: protocol.ExcNoHandler, Backtrace: []string{},
			Message: "no handler registered for class " + strconv.Quote(job.Class) + " (register one in Go, or run with --exec '" + job.Class + "=command')"}
	}
	r.mu.RLock()
	mws := r.middleware
	r.mu.RUnlock()
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h, nil
}

// Call runs h on job, turning a panic into a ResqueGo::Panic *Error whose
// backtrace is the goroutine's stack.
func Call(ctx context.Context, h HandlerFunc, job *Job) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError(v, debug.Stack())
		}
	}()
	return h(ctx, job)
}
