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
	// process, under the lock SerialLock(Queue) (protocol.md 9).
	Serial bool
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
func (s Source) IsQueue() bool { return s.List == "" }

// String names the source in logs: the queue, or queue@list.
func (s Source) String() string {
	if s.IsQueue() {
		return s.Queue
	}
	return s.Queue + "@" + s.List
}

// SourceKey is the list a source's jobs are in.
func (k Keys) SourceKey(s Source) string {
	if s.IsQueue() {
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
