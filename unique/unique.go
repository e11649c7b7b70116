// Package unique holds the types of the unique-job state machine of
// docs/protocol.md#unique-jobs, shared with the resque-v3 PHP fork: at most
// one job per uid is queued or running; a deferrable job that meets its
// uid running is parked and released when that job succeeds.
//
// The transitions of a running job happen inside the worker's claim and
// finish steps, so a job that is not unique pays nothing for them. A
// program enqueues unique jobs and lists, shows and clears uids through
// package client (client.Unique, UniqueIDs, UniqueID, ClearUnique).
package unique

import (
	"errors"
	"time"
)

// ErrDuplicate is returned when a job's uid is taken: a job with that uid
// is queued, or running and the new job is not deferrable, or running with
// a deferred job already parked (the first one wins). Nothing was written.
var ErrDuplicate = errors.New("unique: the unique id is taken (its job is queued, or running with no room to defer this one); nothing was written")

// Result is what an enqueue did with a unique job.
type Result string

// Results of enqueueing a unique job.
const (
	// Queued: the uid was free; the job is in its queue (or delayed).
	Queued Result = "queued"
	// Deferred: the uid's job is running; this job is parked and released
	// when that job succeeds, after its deferrableBy seconds.
	Deferred Result = "deferred"
)

// Job is a unique job to enqueue.
type Job struct {
	Queue   string
	Payload []byte // carries the "unique" field (docs/protocol.md#unique-jobs)
	// DueAt, when not zero, files the job in the delayed queue (rounded up
	// to the second); the uid is queued from now on.
	DueAt time.Time
}

// Info is one uid's state.
type Info struct {
	UID string `json:"uid"`
	// State is queued or running (or what another runtime wrote there);
	// "" when the uid is free.
	State string `json:"state"`
	// Deferred is the parked payload, nil when none.
	Deferred []byte `json:"-"`
	// Problem, when not empty, says why the uid's keys cannot be read
	// (a key of another type, written by hand); State and Deferred are
	// then empty. A listing reports such a uid and goes on.
	Problem string `json:"problem,omitempty"`
}

// ClearResult says what client.ClearUnique did.
type ClearResult string

// Clear results.
const (
	ClearAbsent   ClearResult = "absent"   // nothing was there
	ClearCleared  ClearResult = "cleared"  // the state was deleted
	ClearReleased ClearResult = "released" // deleted, and the deferred job released
)
