// Package pool is the process supervisor behind `resque-go pool`: it reads a
// config file (resque-go's own format, a resque-pool file or the resque-v3
// style), keeps one worker process running per configured slot, restarts
// what dies with a capped backoff, converges on a new config, and stops the
// children gracefully (QUIT) or hard (TERM, then KILL after a deadline).
//
// Children are the same binary started as `<binary> work --node-config-fd
// 3`, each handed its node.Config (Config.Child) whole through a pipe, so a
// binary that embeds the CLI with its own Go handlers supervises children
// that have them. The package does not
// touch signals of its own process: internal/cli maps them to Stop,
// Shutdown, Reload and Signal.
package pool

import (
	"strconv"
	"time"
)

// EventKind names what happened.
type EventKind string

// Events reported to Params.OnEvent.
const (
	EventStarted  EventKind = "started"  // a child started (PID)
	EventExited   EventKind = "exited"   // a child exited (PID, Err)
	EventRetiring EventKind = "retiring" // a child was told to QUIT by a reload (PID)
	EventPruned   EventKind = "pruned"   // a pruning pass ran (Err)
	EventReloaded EventKind = "reloaded" // a new config is in effect
	EventStopped  EventKind = "stopped"  // every child is gone; the supervisor is done
)

// Event is one lifecycle event.
type Event struct {
	Kind   EventKind
	PID    int
	Queues string
	Err    error
	// Reason is the last line an exited child wrote to stderr.
	Reason string
}

// Manager states, as in the status record.
const (
	StateRunning     = "running"
	StateQuitting    = "quitting"
	StateTerminating = "terminating"
)

// Child states, as in the status record.
const (
	ChildRunning   = "running"
	ChildBackoff   = "backoff"
	ChildCrashLoop = "crashloop"
	ChildStopping  = "stopping"
)

// MetricsError is returned by New when the manager cannot serve /metrics
// on Params.MetricsAddr (the address is taken, say).
type MetricsError struct{ Err error }

func (e *MetricsError) Error() string { return "pool: cannot serve metrics: " + e.Err.Error() }
func (e *MetricsError) Unwrap() error { return e.Err }

// Status is the supervisor's state as the status record publishes it.
type Status struct {
	State     string
	StartedAt time.Time
	Children  []ChildStatus
}

// ChildStatus is one slot.
type ChildStatus struct {
	Slot      int
	Queues    string
	PID       int // 0 while no process runs in the slot
	State     string
	Restarts  int
	StartedAt time.Time // of the current process; zero without one
	RestartAt time.Time // of a slot in backoff
	LastExit  string
	// LastExitReason is the last stderr line of the previous process.
	LastExitReason string
}

// itoa is strconv.Itoa.
func itoa(n int) string { return strconv.Itoa(n) }
