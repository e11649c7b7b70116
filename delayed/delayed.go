// Package delayed holds the types of the delayed queue in resque-scheduler's
// layout (docs/protocol.md#delayed-jobs): the Filter that selects delayed
// items, the Item as it is read back, and what a count or a removal
// reports. A program reads and changes the delayed queue through
// package client (DelayedJobs, DelayedCount, RemoveDelayed, ClearDelayed,
// EnqueueAt, EnqueueIn); resque-go's own mover promotes due jobs.
package delayed
