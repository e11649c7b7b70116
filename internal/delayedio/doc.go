// Package delayedio is the Redis side of package delayed: enqueue a job to
// run at a time, list, count and remove delayed items, and the Mover that
// promotes due jobs to their queues. Any number of movers (resque-go
// processes, resque-scheduler) may run at once: each item is moved by one
// compare-and-pop step.
package delayedio
