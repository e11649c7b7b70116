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

// resolve is the one dispatch of a decoded job, shared by slots and fork
// children: its handler wrapped in the registry's middleware, or the
// ResqueGo::NoHandler failure.
func (r *Registry) resolve(p *protocol.Payload) (HandlerFunc, error) {
	h, ok := r.lookup(p)
	if !ok {
		return nil, &Error{Exception: protocol.ExcNoHandler, Backtrace: []string{},
			Message: "no handler registered for class " + strconv.Quote(p.Class) + " (register one in Go, or run with --exec '" + p.Class + "=command')"}
	}
	r.mu.RLock()
	mws := r.middleware
	r.mu.RUnlock()
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h, nil
}

// call runs h, turning a panic into a ResqueGo::Panic error with its stack.
func call(ctx context.Context, h HandlerFunc, job *Job) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError(v, debug.Stack())
		}
	}()
	return h(ctx, job)
}
