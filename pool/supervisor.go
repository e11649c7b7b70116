// Package pool reads the config of `resque-go pool` (resque-go's own format,
// a resque-pool file or the resque-v3 style) into a Config whose
// Config.Child is each worker's node.Config, and renders the status
// records the running managers publish (Record, RenderStatus,
// WriteStatusJSON). The supervisor itself runs through the resque-go
// binary (`resque-go pool`, or a binary that embeds the CLI through
// package app).
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
	// Recycled, for an exited child that recycled itself, is the limit it
	// reached (max_jobs, max_rss, max_age); it is started again at once.
	Recycled string
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
	Slot     int
	Queues   string
	PID      int // 0 while no process runs in the slot
	State    string
	Restarts int
	// Recycles counts the processes started after one recycled itself
	// (not in Restarts).
	Recycles  int
	StartedAt time.Time // of the current process; zero without one
	RestartAt time.Time // of a slot in backoff
	LastExit  string
	// LastExitReason is the last stderr line of the previous process.
	LastExitReason string
}

// itoa is strconv.Itoa.
func itoa(n int) string { return strconv.Itoa(n) }
