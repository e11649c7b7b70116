package runtime

import (
	"errors"

	"github.com/resque-go/resque-go/worker"
)

// Context causes of a job the runtime stops.
var (
	errShutdown = errors.New("worker is shutting down")
	errUSR1     = errors.New("job cancelled by signal USR1")
)

// timeoutError is the context cause of a job that ran past its timeout.
type timeoutError struct{ limit string }

func (e timeoutError) Error() string { return "job exceeded its timeout of " + e.limit }

// asRetry, asReschedule, asRateLimited and asDiscard unwrap the control errors.
func asRetry(err error) (*worker.RetryError, bool) {
	var r *worker.RetryError
	return r, errors.As(err, &r)
}

func asReschedule(err error) (*worker.RescheduleError, bool) {
	var r *worker.RescheduleError
	return r, errors.As(err, &r)
}

func asRateLimited(err error) (*worker.RateLimitedError, bool) {
	var r *worker.RateLimitedError
	return r, errors.As(err, &r)
}

func asDiscard(err error) (*worker.DiscardError, bool) {
	var d *worker.DiscardError
	return d, errors.As(err, &d)
}

// policyFor returns the class's retry policy, defaults filled in.
func (c *Config) policyFor(class string) worker.RetryPolicy {
	p, ok := c.ClassRetry[class]
	if !ok {
		p = c.Retry
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = c.Retry.MaxAttempts
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = worker.DefaultMaxAttempts
	}
	return p
}
