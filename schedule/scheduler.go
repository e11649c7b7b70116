package schedule

import (
	"errors"
	"time"
)

// ErrNotFound is wrapped by the error about a schedule name that no
// schedule in force has (client.QueueScheduleNow).
var ErrNotFound = errors.New("schedule: no such schedule")

// PassResult is what one pass did.
type PassResult struct {
	Master bool
	Fired  int
}

// Status is a scheduler's state, for stats.
type Status struct {
	Master   bool
	LockKey  string
	Value    string // this scheduler's lock value
	LastPass time.Time
	// NextSlot is the earliest upcoming slot of the active entries (zero
	// when none, or not master).
	NextSlot time.Time
	Entries  int
	// Fired is how many jobs this scheduler enqueued since it started.
	Fired int64
	// Errors are the persistent schedules that cannot be used, by name.
	Errors map[string]error
}

// Overview is what client.Schedules reads: the master lock and the schedules a
// scheduler with the same settings would fire.
type Overview struct {
	LockKey string `json:"lock_key"`
	// Master is the lock's value ("<hostname>:<pid>"), "" when no
	// scheduler is master; MasterTTL what is left of it.
	Master    string        `json:"master"`
	MasterTTL time.Duration `json:"-"`
	Schedules []Info        `json:"schedules"`
	// Errors are persistent schedules that cannot be used, by name.
	Errors []BadSchedule `json:"errors"`
}

// Info is one schedule with what is recorded of it.
type Info struct {
	Entry
	// LastEnqueuedAt is resque-scheduler's last_enqueued_at (Time#to_s),
	// written by Ruby and resque-go schedulers alike.
	LastEnqueuedAt string `json:"last_enqueued_at,omitempty"`
	// LastSlot is the last slot resque-go enqueued (zero: none).
	LastSlot time.Time `json:"-"`
	// Next is the next slot after the time of the reading (zero: none).
	Next time.Time `json:"-"`
}

// BadSchedule is a persistent schedule that cannot be used.
type BadSchedule struct {
	Name  string `json:"name"`
	Error string `json:"error"`
}
