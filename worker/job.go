// Package worker is what a Resque job means to a Go program: the handler
// Registry with its middleware, the Job a handler gets, the errors that
// choose a job's end (Error, Retry, Reschedule, Discard), retry policies, the
// one dispatch every runtime shares (Resolve, Call), and handler
// constructors that run a job elsewhere: a command (ExecHandler), an HTTP
// endpoint (HTTPHandler) or a child process (ForkHandler, RunChild). The
// runtime that claims and runs jobs is internal (internal/runtime); programs
// run one with package node or app.
package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Job is one job as a handler sees it.
type Job struct {
	// Queue the job was claimed from.
	Queue string
	// Class is the payload's "class" (for ActiveJob wrappers, still the wrapper).
	Class string
	// ID is the payload's "id" when present.
	ID string
	// Args is the raw JSON of "args", unchanged (nil when absent).
	Args json.RawMessage
	// Payload is the raw payload exactly as it was queued.
	Payload []byte
	// WorkerID is the id of the slot running the job.
	WorkerID string
	// Attempt is 1 for a first run, failCount+1 for a retried resque-v3 job.
	Attempt int

	fields map[string]json.RawMessage // the payload's top-level fields
}

// NewJob returns the Job a runtime hands to a handler: j, with Field
// reading fields, the payload's top-level fields as decoded (nil: none).
// Handlers never need it; a Job built without it has no fields.
func NewJob(j Job, fields map[string]json.RawMessage) *Job {
	j.fields = fields
	return &j
}

// DecodeArgs decodes Args into v with numbers kept exact (json.Number when v
// holds interface values).
func (j *Job) DecodeArgs(v any) error {
	if len(j.Args) == 0 {
		return fmt.Errorf("worker: job %s has no args", j.Class)
	}
	dec := json.NewDecoder(bytes.NewReader(j.Args))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("worker: decode args of %s: %w", j.Class, err)
	}
	return nil
}

// Field returns the raw JSON of any top-level payload field (nil if absent).
func (j *Job) Field(name string) json.RawMessage { return j.fields[name] }

// HandlerFunc runs one job. Returning nil marks success; an error marks a
// failure recorded in the failed list. ctx is cancelled on a hard stop, on
// the job timeout and on USR1; handlers should return promptly then.
type HandlerFunc func(ctx context.Context, job *Job) error

// Registry maps job classes to handlers. It is safe for concurrent use.
type Registry struct {
	mu         sync.RWMutex
	handlers   map[string]HandlerFunc
	fallback   HandlerFunc
	middleware []Middleware
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{handlers: map[string]HandlerFunc{}} }

// Register sets the handler of class. A later call for the same class wins.
func (r *Registry) Register(class string, h HandlerFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handlers[class] = h
}

// SetFallback sets the handler for classes with no handler of their own
// (the "*=command" exec form).
func (r *Registry) SetFallback(h HandlerFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fallback = h
}

// Classes lists the registered classes, sorted.
func (r *Registry) Classes() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.handlers))
	for c := range r.handlers {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Empty reports whether the registry has no handler at all.
func (r *Registry) Empty() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.handlers) == 0 && r.fallback == nil
}

// lookup finds the handler for a job: its class, then the ActiveJob
// job_class inside a Rails wrapper, then the fallback.
func (r *Registry) lookup(job *Job) (HandlerFunc, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if h, ok := r.handlers[job.Class]; ok {
		return h, true
	}
	// HandlerClass reads only the class and the args of the view.
	if inner := (&protocol.Payload{Class: job.Class, Args: job.Args}).HandlerClass(); inner != "" {
		if h, ok := r.handlers[inner]; ok {
			return h, true
		}
	}
	if r.fallback != nil {
		return r.fallback, true
	}
	return nil, false
}
