package client

import (
	"errors"
	"strings"

	"github.com/resque-go/resque-go/internal/rdb"
)

// Errors of the plan methods. Each also matches the plan package's own
// sentinel with errors.Is (plan.ErrNotFound, plan.ErrExists).
var (
	// ErrNoSuchPlan: no plan has that id (also plan.ErrNotFound).
	ErrNoSuchPlan = errors.New("client: no such plan")
	// ErrPlanExists: AddPlan was given the id of an existing plan (also
	// plan.ErrExists); nothing was written.
	ErrPlanExists = errors.New("client: a plan with this id exists")
	// ErrNoSuchDelayedItem: QueueDelayedNow found the item no longer in
	// its bucket (promoted or removed meanwhile; also delayed.ErrNotFound);
	// nothing was enqueued.
	ErrNoSuchDelayedItem = errors.New("client: no such delayed item")
	// ErrNoSuchSchedule: no schedule in force has that name (also
	// schedule.ErrNotFound).
	ErrNoSuchSchedule = errors.New("client: no such schedule")
)

// adminError reads "client: <op>: <cause>", without the cause's own
// package prefix, and matches the cause (and the feature package's
// sentinels in it), the sentinels of this package it was given, and
// ErrRefused when Redis refused the connection.
type adminError struct {
	msg   string
	cause error
	also  []error
}

func (e *adminError) Error() string   { return e.msg }
func (e *adminError) Unwrap() []error { return append([]error{e.cause}, e.also...) }

func (e *adminError) Is(target error) bool {
	return target == ErrRefused && rdb.IsFatal(e.cause) && !errors.Is(e.cause, rdb.ErrBadURL)
}

// adminErr returns nil for nil, else cause under op, also matching the
// sentinels in also.
func adminErr(op string, cause error, also ...error) error {
	if cause == nil {
		return nil
	}
	msg := cause.Error()
	for _, pkg := range []string{"rdb", "plan", "delayed", "unique", "massqueue", "schedule", "failure", "stats"} {
		msg = strings.TrimPrefix(msg, pkg+": ")
	}
	return &adminError{msg: "client: " + op + ": " + msg, cause: cause, also: also}
}
