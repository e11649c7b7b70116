// Package delayed is the delayed queue in resque-scheduler's layout: enqueue
// a job to run at a time, and the mover that promotes due jobs to their
// queues. Any number of movers (resque-go processes, resque-scheduler) may
// run at once: each item is moved by one compare-and-pop step.
package delayed
