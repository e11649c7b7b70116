package delayed

import (
	"encoding/json"
	"errors"
	"time"
)

// ErrBadFilter is wrapped by the errors about a Filter that cannot be used.
var ErrBadFilter = errors.New("delayed: bad filter")

// ErrNotFound is wrapped by the error of queueing an item now that is no
// longer in its bucket (promoted or removed meanwhile): nothing was done.
var ErrNotFound = errors.New("delayed: no such delayed item")

// ErrNotJob is wrapped by the error of queueing an item now that is not a
// job a mover can promote (not a JSON object with a class and a queue; a
// mover records it in failed when it is due): nothing was done.
var ErrNotJob = errors.New("delayed: the item is not a job")

// Filter selects delayed items. The zero Filter selects every item.
type Filter struct {
	// From and To bound the due time, both included; zero means no bound.
	// Buckets are whole seconds: From is rounded up, To down.
	From, To time.Time
	// Queue, when not empty, is the item's "queue", compared exactly.
	Queue string
	// Class, when not empty, is the item's "class", compared exactly.
	Class string
	// Args, when not nil, is a JSON value: only items whose args are this
	// value exactly (the same text but for spacing and string escapes).
	// Needs Class. Without Scan the items are found through the
	// timestamps:<item> index, as resque-scheduler's remove_delayed finds
	// them: that needs Queue too, and finds the items written with class,
	// args and queue only (resque-scheduler, node-resque, resque-go's
	// plain jobs), at once however long the delayed queue is.
	Args []byte
	// Scan reads every bucket in the time range instead of the index: it
	// also finds items with args that carry fields of their own (an id,
	// as resque-go writes by default, resque-v3's fields) or were written
	// without the index (php-resque).
	Scan bool
}

// Item is one delayed item as read.
type Item struct {
	// At is the bucket's due time.
	At time.Time
	// Pos is the item's position in its bucket when read; 0 is promoted
	// first.
	Pos int
	// Queue, Class and Args are the item's fields (Args as stored).
	Queue string
	Class string
	Args  json.RawMessage
	// Raw is the item's bytes.
	Raw []byte
	// Err says why the item is not a JSON object with a class and a queue
	// (a mover records such an item in failed when it is due); only a time
	// range selects it.
	Err error
}

// Counts are what client.DelayedCount found.
type Counts struct {
	// Items counts the matching items.
	Items int64 `json:"items"`
	// Buckets counts the due times (buckets) that hold one or more.
	Buckets int64 `json:"buckets"`
}

// Removal says what client.RemoveDelayed or ClearDelayed did.
type Removal struct {
	// Removed counts the items deleted.
	Removed int64 `json:"removed"`
	// Unindexed counts the timestamps:<item> index entries deleted.
	Unindexed int64 `json:"unindexed"`
	// Unscheduled counts the buckets taken off delayed_queue_schedule
	// because they were, or were left, empty.
	Unscheduled int64 `json:"unscheduled"`
}

// Progress is reported by client.RemoveDelayed and ClearDelayed after
// each bucket.
type Progress struct {
	// Buckets is how many buckets the operation looks at (those in the time
	// range when it began, or those the index names).
	Buckets int64
	// Done counts the buckets finished.
	Done int64
	Removal
}

// QueuedNow says what client.QueueDelayedNow did.
type QueuedNow struct {
	// Queue is the queue the job was pushed to; with Unassigned (a
	// mass-queue job, which names none) it went to unassigned instead.
	Queue      string `json:"queue"`
	Unassigned bool   `json:"unassigned,omitempty"`
	// Payload is the job as pushed: the bytes a mover pushes.
	Payload []byte `json:"-"`
	// Left counts the items left in the bucket.
	Left int64 `json:"left"`
	// Unscheduled is true when the bucket was left empty and was taken
	// off delayed_queue_schedule.
	Unscheduled bool `json:"unscheduled"`
}
