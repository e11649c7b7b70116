// Package massio is the Redis side of package massqueue: producers (static
// jobs, batches), routes and source settings (weight, limit, pause), the
// status, the Allocator and the unit Heartbeat.
package massio
