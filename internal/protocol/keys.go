// Package protocol holds every piece of compatibility knowledge resque-go has:
// Redis key names, payload shapes, time formats and worker ids. It does no I/O.
package protocol

import (
	"strings"
	"time"
)

// DefaultNamespace is the key prefix Ruby Resque, php-resque and node-resque
// all use unless told otherwise.
const DefaultNamespace = "resque"

// V3Namespace is the namespace of resque-v3 (the PHP fork) deployments.
const V3Namespace = "resque-v3"

// Keys builds namespaced Redis key names. The zero value uses DefaultNamespace.
type Keys struct {
	ns       string
	separate bool
}

// NewKeys returns a key builder for namespace ns. A trailing ":" is dropped
// (php-resque's PREFIX is often given as "resque:"); an empty ns means
// DefaultNamespace. In V3Namespace the worker registry is separate (see
// SeparateRegistry).
func NewKeys(ns string) Keys {
	ns = strings.TrimSuffix(ns, ":")
	if ns == "" {
		ns = DefaultNamespace
	}
	return Keys{ns: ns, separate: ns == V3Namespace}
}

// SeparateRegistry returns k with resque-go's worker registry (the workers
// set and the heartbeat hash) kept under <ns>:resque-go: instead of where
// Resque runtimes read it. The resque-v3 PHP runtime parses every id in its
// workers set as host~pid~queue and signals the pid it finds: a resque-go
// id gives it no pid, and kill(0, sig) hits the v3 runtime's own process
// group. Worker records (worker:<id>), stats and queues stay shared.
func (k Keys) SeparateRegistry(on bool) Keys {
	k.separate = on
	return k
}

// IsSeparateRegistry reports whether the registry is kept apart.
func (k Keys) IsSeparateRegistry() bool { return k.separate }

// Namespace returns the namespace without a trailing colon.
func (k Keys) Namespace() string {
	if k.ns == "" {
		return DefaultNamespace
	}
	return k.ns
}

func (k Keys) key(parts ...string) string {
	return k.Namespace() + ":" + strings.Join(parts, ":")
}

// Queues is the set of known queue names.
func (k Keys) Queues() string { return k.key("queues") }

// Queue is the list holding the pending payloads of queue q.
func (k Keys) Queue(q string) string { return k.key("queue", q) }

// QueuePrefix is what Queue(q) puts before q; used to map keys back to names.
func (k Keys) QueuePrefix() string { return k.key("queue", "") }

// Workers is the set of registered worker ids.
func (k Keys) Workers() string {
	if k.separate {
		return k.key("resque-go", "workers")
	}
	return k.key("workers")
}

// Worker holds the job a worker is running (absent while idle).
func (k Keys) Worker(id string) string { return k.key("worker", id) }

// WorkerStarted holds a worker's registration time.
func (k Keys) WorkerStarted(id string) string { return k.key("worker", id, "started") }

// Heartbeats is the hash of worker id to last heartbeat time.
func (k Keys) Heartbeats() string {
	if k.separate {
		return k.key("resque-go", "workers", "heartbeat")
	}
	return k.key("workers", "heartbeat")
}

// StatProcessed is the global processed counter.
func (k Keys) StatProcessed() string { return k.key("stat", "processed") }

// StatFailed is the global failed counter.
func (k Keys) StatFailed() string { return k.key("stat", "failed") }

// StatRetries is the global retries counter.
func (k Keys) StatRetries() string { return k.key("stat", "retries") }

// StatProcessedWorker is a worker's own processed counter.
func (k Keys) StatProcessedWorker(id string) string { return k.key("stat", "processed", id) }

// StatFailedWorker is a worker's own failed counter.
func (k Keys) StatFailedWorker(id string) string { return k.key("stat", "failed", id) }

// Failed is the list of failure entries.
func (k Keys) Failed() string { return k.key("failed") }

// Retries is the list of retry records.
func (k Keys) Retries() string { return k.key("retries") }

// PauseAll pauses every worker when it holds "true".
func (k Keys) PauseAll() string { return k.key("pause-all-workers") }

// QueuePause pauses queue q while it exists, whatever it holds: the key
// resque-pause and resque-queue-control write ("true", no expiry) and read
// (any value counts), so a pause set from either side holds on both.
func (k Keys) QueuePause(q string) string { return k.key("pause", "queue", q) }

// QueuePausePrefix is what QueuePause(q) puts before q.
func (k Keys) QueuePausePrefix() string { return k.key("pause", "queue", "") }

// QueuePausePattern matches every QueuePause key (SCAN MATCH).
func (k Keys) QueuePausePattern() string { return k.key("pause", "queue", "*") }

// QueuePauseValue is what resque-pause and resque-queue-control write
// (Ruby's true, as redis-rb sends it).
const QueuePauseValue = "true"

// PruneLock is the lock Ruby Resque and resque-go take while pruning dead workers.
func (k Keys) PruneLock() string { return k.key("pruning_dead_workers_in_progress") }

// Queue statistics names, as in the resque-v3 layout.
const (
	QueueStatDequeued       = "dequeued"
	QueueStatQueueTime      = "queue_time"
	QueueStatProcessed      = "processed"
	QueueStatProcessingTime = "processing_time"
	QueueStatFailed         = "failed"
	QueueStatRetries        = "retries"
)

// QueueStat is a per-host, per-queue counter: queuestat:<host>:<stat>:<queue>.
func (k Keys) QueueStat(host, stat, q string) string { return k.key("queuestat", host, stat, q) }

// WorkerIntervals is resque-go's own hash of worker id to heartbeat interval in
// seconds. Its presence marks an id as a resque-go worker, whose death can be
// judged from its own interval instead of Ruby's 300 s.
func (k Keys) WorkerIntervals() string { return k.key("resque-go", "heartbeat_interval") }

// SetAside is resque-go's hash of the keys written by hand (of another
// type, or holding a value no resque-go process writes) that a worker's
// step set aside, each with when and what: field the key, value
// {"at":<Unix seconds>,"what":"..."}. It holds at most SetAsideMax keys
// and expires SetAsideTTL after its last write.
func (k Keys) SetAside() string { return k.key("resque-go", "set_aside") }

// OwnPrefix is what follows the namespace in resque-go's own keys.
func (k Keys) OwnPrefix() string { return k.key("resque-go", "")[len(k.key()):] }

// SetAsideMax and SetAsideTTL bound the SetAside hash.
const (
	SetAsideMax = 100
	SetAsideTTL = 24 * time.Hour
)

// Recoveries counts how often a payload (by SHA-1 of its bytes) was recovered
// from a dead worker, so a poison job does not loop forever.
func (k Keys) Recoveries(sha1hex string) string { return k.key("resque-go", "recovered", sha1hex) }

// JobStatus is the status key of a tracked job.
func (k Keys) JobStatus(id string) string { return k.key("job", id, "status") }

// QueueStatPattern matches every queuestat key (for SCAN).
func (k Keys) QueueStatPattern() string { return k.key("queuestat", "*") }

// ParseQueueStat splits a queuestat key into host, stat and queue. Host names
// have no ":"; stat names are fixed words; the queue is the rest.
func (k Keys) ParseQueueStat(key string) (host, stat, queue string, ok bool) {
	rest, ok := strings.CutPrefix(key, k.key("queuestat", ""))
	if !ok {
		return "", "", "", false
	}
	parts := strings.SplitN(rest, ":", 3)
	if len(parts) != 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// JobStatusPrefix is JobStatus(id) without "<id>:status", for the claim
// script, which learns the id only after the pop.
func (k Keys) JobStatusPrefix() string { return k.key("job", "") }

// ClaimSeqs is resque-go's hash of worker id to the sequence number of its
// latest claim: a finish acts only on the claim it was given.
func (k Keys) ClaimSeqs() string { return k.key("resque-go", "claim_seq") }

// HotFunctions records the function libraries of resque-go's per-job
// scripts (library name -> Unix time of its last FUNCTION LOAD), so that
// libraries of old versions can be deleted.
func (k Keys) HotFunctions() string { return k.key("resque-go", "functions") }

// Attempts counts the failed attempts of a job that is being retried, by
// AttemptsDigest. The count lives outside the payload
// because resque-scheduler, resque-web's "Queue now" and Ruby's
// Failure.requeue rebuild a job from class and args alone (resque-retry keeps
// its counter in a side key for the same reason).
func (k Keys) Attempts(digest string) string { return k.key("resque-go", "attempts", digest) }

// AttemptsIndex is a sorted set of the attempt counters that exist (member:
// the counter's key, score: when it expires, Unix seconds). While it is
// empty, claims need not look for a counter at all.
func (k Keys) AttemptsIndex() string { return k.key("resque-go", "attempts_index") }

// AttemptsPrefix is Attempts(digest) without the digest, for the claim
// script, which learns the job only after the pop.
func (k Keys) AttemptsPrefix() string { return k.key("resque-go", "attempts", "") }
