package protocol

import "strings"

// Source is where a job is claimed from and where it goes back to when it
// is requeued, retried at once or recovered from a dead worker: a Resque
// queue (queue:<q>), or another list of payloads under the namespace (a
// mass-queue pool's static list, a committed batch).
//
// Queue is the name the job reports wherever Resque tools show a queue: the
// worker record's "queue", failed entries, statistics. List, when set, is
// the list's key without the namespace; empty means queue:<Queue>.
type Source struct {
	Queue string
	List  string
	// Serial: at most one job of this source runs at a time across every
	// process, under the lock SerialLock(Queue) (docs/protocol.md#serial-queues).
	Serial bool
	// Ring, when set, makes the source a ring of lists (mass queues,
	// docs/massqueue.md#static-pools): RingStatic serves a static pool's per-source FIFOs
	// round-robin (weighted, with per-source limits and pause), RingUnit a
	// batch pool unit's batches. Pool names the pool, Unit the unit. A job
	// claimed from a ring reports the list it came from as its source
	// (Queue and List of the claim's result), so finish, retry, requeue
	// and recovery put it back into that list.
	Ring RingKind
	Pool string
	Unit string
}

// RingKind is the kind of a ring source.
type RingKind string

// Ring kinds.
const (
	RingStatic RingKind = "static"
	RingUnit   RingKind = "unit"
)

// StaticPoolSource is the ring of static pool p: its jobs report the queue
// static:queue:<p> (StaticQueueName).
func StaticPoolSource(p string) Source {
	return Source{Queue: StaticQueueName(p), Ring: RingStatic, Pool: p}
}

// UnitSource is the ring of a batch pool's unit: its jobs report their
// batch's list, committed:<batch_id>, as their queue.
func UnitSource(pool, unit string) Source {
	return Source{Queue: "pool:" + pool + ":" + unit, Ring: RingUnit, Pool: pool, Unit: unit}
}

// QueueSource is the Resque queue q.
func QueueSource(q string) Source { return Source{Queue: q} }

// QueueSources maps queue names to their sources.
func QueueSources(qs []string) []Source {
	out := make([]Source, len(qs))
	for i, q := range qs {
		out[i] = QueueSource(q)
	}
	return out
}

// SerialLock is the lock of serial queue q: a random token, SET NX PX.
func (k Keys) SerialLock(q string) string { return k.key("queuedata", q, "lock") }

// IsQueue reports whether s is a plain Resque queue.
func (s Source) IsQueue() bool { return s.List == "" && s.Ring == "" }

// String names the source in logs: the queue, queue@list, or the ring
// (static:<pool>, unit:<pool>/<unit>).
func (s Source) String() string {
	switch {
	case s.Ring == RingStatic:
		return "static:" + s.Pool
	case s.Ring == RingUnit:
		return "unit:" + s.Pool + "/" + s.Unit
	case s.IsQueue():
		return s.Queue
	}
	return s.Queue + "@" + s.List
}

// SourceKey is the list a source's jobs are in; for a ring, the ring.
func (k Keys) SourceKey(s Source) string {
	switch {
	case s.Ring == RingStatic:
		return k.StaticRing(s.Pool)
	case s.Ring == RingUnit:
		return k.UnitQueues(s.Pool, s.Unit)
	case s.IsQueue():
		return k.Queue(s.Queue)
	}
	return k.key(s.List)
}

// RecordSourceSuffix is what the worker record carries after its payload
// for a job from s: nothing for a queue (the record stays Ruby's
// {"queue","run_at","payload"}), or ,"source":"<list>" so recovery knows
// which list the job goes back to.
func RecordSourceSuffix(s Source) string {
	if s.IsQueue() {
		return ""
	}
	return `,"source":` + string(MarshalString(s.List))
}

// ValidList reports whether name can be a source list: a non-empty key
// suffix that is not a Resque queue key.
func ValidList(name string) bool {
	return name != "" && !strings.HasPrefix(name, "queue:")
}

// StaticSourceOf reports the static pool and the source id of s when s is
// one source's FIFO in a static pool (the source a job claimed from the
// pool's ring reports): a job that goes back there must put the source
// back on the pool's ring.
func StaticSourceOf(s Source) (pool, source string, ok bool) {
	if s.Ring != "" {
		return "", "", false
	}
	pool, ok = strings.CutPrefix(s.Queue, StaticQueueName(""))
	if !ok || pool == "" {
		return "", "", false
	}
	source, ok = strings.CutPrefix(s.List, StaticSourcePrefix(pool))
	if !ok || source == "" || strings.Contains(source, ":") {
		return "", "", false
	}
	return pool, source, true
}

// StaticWakeKeys returns the ring and state keys of a static pool source's
// FIFO and the source id (jobpath/effect_wake.lua), or ok false for any other
// source.
func (k Keys) StaticWakeKeys(s Source) (ring, state, source string, ok bool) {
	pool, source, ok := StaticSourceOf(s)
	if !ok {
		return "", "", "", false
	}
	return k.StaticRing(pool), k.StaticState(pool), source, true
}

// UnitTurns is resque-go's hash of a batch pool unit's weighted turns:
// batch id -> claims its batch has had in a row (a source with weight w
// keeps its batch for w claims).
func (k Keys) UnitTurns(pool, unit string) string {
	return k.key("resque-go", "unit_turns", pool, unit)
}

// MassDeferred is resque-go's zset of released deferred unique mass jobs
// waiting out their deferrableBy (payload -> due, Unix seconds): a mass
// job has no queue to be delayed in, so allocators move each to unassigned
// when it is due. unique_release.lua builds the same name from the
// namespace prefix.
func (k Keys) MassDeferred() string { return k.key("resque-go", "mass", "deferred") }
