// Package statsio reads a stats.Snapshot from Redis (Collect: the counters,
// queues and workers every Resque runtime writes, plus resque-go's runtime
// records) and keeps this process's runtime record fresh (Publisher).
package statsio
