package worker

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// RetryError asks for the job to be retried. It counts as a failed attempt:
// once the class's attempts are used up the job goes to failed.
type RetryError struct {
	Err error
	// After is the delay before the retry; 0 uses the class's backoff.
	After time.Duration
}

func (e *RetryError) Error() string {
	if e.Err == nil {
		return "retry requested"
	}
	return e.Err.Error()
}

func (e *RetryError) Unwrap() error { return e.Err }

// Retry returns an error that asks for a retry after the given delay (0:
// the class's backoff policy).
func Retry(err error, after time.Duration) error { return &RetryError{Err: err, After: after} }

// RescheduleError ends the job successfully and queues the same payload to
// run again after After.
type RescheduleError struct{ After time.Duration }

func (e *RescheduleError) Error() string { return fmt.Sprintf("reschedule in %s", e.After) }

// Reschedule returns the error that reschedules the job after d (success).
func Reschedule(d time.Duration) error { return &RescheduleError{After: d} }

// RateLimitedError says the job could not run now because something it
// calls is rate limited: the same payload runs again after After, through
// the delayed queue, and the attempt is not counted as failed (the job's
// earlier failures still count). It is counted as processed, as a
// reschedule is.
type RateLimitedError struct{ After time.Duration }

func (e *RateLimitedError) Error() string { return fmt.Sprintf("rate limited: retry in %s", e.After) }

// DefaultRateLimitDelay is the delay of a rate-limited job that named none
// (an exec command's exit status ExitRateLimited alone, a 429 answer
// without Retry-After).
const DefaultRateLimitDelay = time.Minute

// RateLimited returns the error that puts the job back to run after d
// without counting a failed attempt; d <= 0 means DefaultRateLimitDelay.
func RateLimited(d time.Duration) error {
	if d <= 0 {
		d = DefaultRateLimitDelay
	}
	return &RateLimitedError{After: d}
}

// DiscardError ends the job deliberately without a retry or a failed
// entry; it counts as processed and is logged with its reason.
type DiscardError struct{ Reason string }

func (e *DiscardError) Error() string { return "discarded: " + e.Reason }

// Discard returns the error that discards the job.
func Discard(reason string) error { return &DiscardError{Reason: reason} }

// Backoff computes retry delays. The zero value retries at once.
type Backoff struct {
	// Base is the fixed delay, or the first delay of an exponential backoff.
	Base time.Duration
	// Exponential doubles Base for every failed attempt.
	Exponential bool
	// Max caps the delay (0: no cap).
	Max time.Duration
	// Jitter in [0,1] randomises the delay by up to that fraction, downwards.
	Jitter float64
}

// Delay is the wait before the retry that follows failed attempt n (1-based).
// rnd returns a number in [0,1).
func (b Backoff) Delay(attempt int, rnd func() float64) time.Duration {
	if b.Base <= 0 {
		return 0
	}
	d := float64(b.Base)
	if b.Exponential && attempt > 1 {
		d *= math.Pow(2, float64(attempt-1))
	}
	if b.Max > 0 && d > float64(b.Max) {
		d = float64(b.Max)
	}
	if b.Jitter > 0 && rnd != nil {
		j := math.Min(b.Jitter, 1)
		d -= d * j * rnd()
	}
	return time.Duration(d)
}

// RetryPolicy says how often a failing job runs and how long it waits.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts including the first (resque-v3's
	// fail_retries); 1 never retries. 0 means the worker's default.
	MaxAttempts int
	Backoff     Backoff
}

// DefaultMaxAttempts is resque-v3's fail_retries default.
const DefaultMaxAttempts = 3

// asRetry, asReschedule, asRateLimited and asDiscard unwrap the control errors.
func asRetry(err error) (*RetryError, bool) {
	var r *RetryError
	return r, errors.As(err, &r)
}

func asReschedule(err error) (*RescheduleError, bool) {
	var r *RescheduleError
	return r, errors.As(err, &r)
}

func asRateLimited(err error) (*RateLimitedError, bool) {
	var r *RateLimitedError
	return r, errors.As(err, &r)
}

func asDiscard(err error) (*DiscardError, bool) {
	var d *DiscardError
	return d, errors.As(err, &d)
}
