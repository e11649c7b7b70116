// Package failureio operates on the failed list: list and show entries,
// retry them (Ruby's requeue: retried_at set, the original payload pushed
// back to its queue), remove and clear them. Every change to one entry
// re-checks its bytes in the same atomic step, so a list that moves
// underneath (workers appending, others removing) never makes it act on the
// wrong job.
package failureio
