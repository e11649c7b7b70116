// Package scheduleio fires the schedules of package schedule. Only the
// master fires, elected with resque-scheduler's own lock (same key, value,
// TTL and renewal), so Ruby's resque-scheduler and resque-go schedulers on
// one Redis elect one master between them. Each (schedule, slot) is
// enqueued at most once, also across master changes: the slot is checked
// and recorded in the same atomic step as the push. Inspect reads what
// `resque-go schedule list` shows.
package scheduleio
