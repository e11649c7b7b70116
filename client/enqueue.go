package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/tracing"
	"github.com/resque-go/resque-go/internal/uniqueio"
	"github.com/resque-go/resque-go/unique"
)

// JobInfo describes a job the client wrote.
type JobInfo struct {
	// ID is the payload's "id" (32 lowercase hex, or the one given with
	// the ID option); "" for a Plain job and for a delayed job written
	// without WithID, which have none (as Ruby's jobs have none).
	ID    string
	Queue string
	Class string
	// Payload is the bytes written: the job's payload for a job pushed to
	// its queue; for a delayed job, the delayed item in resque-scheduler's
	// layout ("class", "args", "queue", then the job's other fields),
	// which a mover turns back into the payload when it is due.
	Payload []byte
	// DueAt is when a delayed job becomes due, rounded up to the second
	// (the delayed queue's resolution); zero for a job pushed at once.
	DueAt time.Time
	// Deferred is set for a unique job (Unique) that met its uid's job
	// running: it is parked and released when that job succeeds, after
	// its DeferrableBy. Payload is then what was parked.
	Deferred bool
	// DepState is set for a job with parents or in a group
	// (docs/dependencies.md): queued (pushed to its queue), held (waiting
	// for Waiting parents), failed or dropped (a parent had already
	// failed).
	DepState string
	Waiting  int
}

// Option changes how EnqueueRaw writes a job.
type Option interface{ apply(*enqueueOptions) }

type enqueueOptions struct {
	plain  bool
	withID bool
	id     string
	at     time.Time
	in     time.Duration
	hasIn  bool
	unique protocol.Unique
	tags   []string
	events bool
	deps   protocol.DepFields
}

type optionFunc func(*enqueueOptions)

func (f optionFunc) apply(o *enqueueOptions) { f(o) }

// Plain writes only "class" and "args", byte-identical to Ruby's
// Resque.enqueue (and, delayed, to resque-scheduler's enqueue_at): no id,
// no queue_time. Args must then be an array, as Ruby always writes.
func Plain() Option { return optionFunc(func(o *enqueueOptions) { o.plain = true }) }

// ID sets the job's "id" instead of a random one (not with Plain). For a
// delayed job it implies WithID.
func ID(id string) Option { return optionFunc(func(o *enqueueOptions) { o.id = id }) }

// WithID gives a delayed job (At, In) an "id" and a "queue_time" from the
// start, as a job pushed at once has: JobInfo.ID names it and the promoted
// job keeps it. The cost: the delayed item is then no longer
// {"class","args","queue"}, so resque-scheduler's remove_delayed and
// find_delayed_selection, resque-web's "Cancel Job" and the timestamps:
// lookup by class and args cannot find it (`resque-go delayed remove
// --scan` can). Without it a delayed job (not Unique) is written
// byte-identical to resque-scheduler's enqueue_at and has no id, as
// Ruby's jobs have none. A job pushed at once always has an id unless
// Plain.
func WithID() Option { return optionFunc(func(o *enqueueOptions) { o.withID = true }) }

// At delays the job until t through the delayed queue (see EnqueueAt). A
// zero t means no delay. A time before 1970 or after year 9999 is refused
// (ErrInvalid).
func At(t time.Time) Option {
	return optionFunc(func(o *enqueueOptions) { o.at, o.hasIn = t, false })
}

// In delays the job by d through the delayed queue (see EnqueueIn). A d
// over 100 years is refused (ErrInvalid).
func In(d time.Duration) Option {
	return optionFunc(func(o *enqueueOptions) { o.in, o.hasIn = d, true })
}

// Unique makes the job unique (docs/protocol.md#unique-jobs, the resque-v3 "unique"
// field): at most one job with uid is queued or running. An enqueue that
// meets one is refused with ErrDuplicate and writes nothing, unless the job
// is deferrable (DeferrableBy) and the other job is running: it is then
// parked (JobInfo.Deferred) and released when that job succeeds.
func Unique(uid string) Option {
	return optionFunc(func(o *enqueueOptions) { o.unique.UID = uid })
}

// DeferrableBy makes a Unique job deferrable: parked while its uid's job
// runs, then enqueued d after that job succeeds (0: at once). d is
// rounded down to whole seconds, the field's unit; over 100 years it is
// refused (ErrInvalid). It needs Unique.
func DeferrableBy(d time.Duration) Option {
	return optionFunc(func(o *enqueueOptions) {
		o.unique.Deferrable, o.unique.DeferrableBy = true, int64(d/time.Second)
	})
}

// Tags tags the job (repeatable; at most 16 in all, each 1 to 200 bytes
// without spaces): an extra payload field, "tags", that Ruby, PHP and Node
// workers ignore, and the job's id in each tag's index until the job ends
// (JobsByTag). Not with Plain, At, In or Unique.
func Tags(tags ...string) Option {
	return optionFunc(func(o *enqueueOptions) { o.tags = append(o.tags, tags...) })
}

// WithEvent appends the job's enqueued event to the events stream
// (docs/events.md) in the same step as the push. Not with Plain, At, In
// or Unique. With After or AfterGroup, a job whose parents have all
// succeeded already is pushed at once: its released event follows.
func WithEvent() Option { return optionFunc(func(o *enqueueOptions) { o.events = true }) }

// Enqueue pushes a job for class onto queue, to be run as soon as a worker
// is free. args are JSON-encoded as the job's argument array (numbers
// exact, <, > and & written as they are); a json.RawMessage argument is
// taken as is. The payload is what php-resque and resque-go write:
// {"class","args","id","queue_time"}; Ruby, PHP and Node workers all read
// it. The queue is added to the queues set, as every Resque producer does.
func (c *Client) Enqueue(ctx context.Context, queue, class string, args ...any) (JobInfo, error) {
	raw, err := encodeArgs(args)
	if err != nil {
		return JobInfo{}, err
	}
	return c.EnqueueRaw(ctx, queue, class, raw)
}

// EnqueueAt is Enqueue for a job due at t, through the delayed queue in
// resque-scheduler's layout (delayed_queue_schedule, delayed:<ts>,
// timestamps:<item>). The item is byte-identical to what
// resque-scheduler's enqueue_at writes ({"class","args","queue"}, no id:
// JobInfo.ID is ""), so Ruby's tools find and cancel it; EnqueueRaw with
// WithID gives it an id instead. A mover promotes it to its queue when due: every
// `resque-go work` runs one unless --mover=false, and resque-scheduler is
// one too; until then the job is in no queue. t is rounded up to the second; a t in the past is due at once.
func (c *Client) EnqueueAt(ctx context.Context, t time.Time, queue, class string, args ...any) (JobInfo, error) {
	raw, err := encodeArgs(args)
	if err != nil {
		return JobInfo{}, err
	}
	if t.IsZero() {
		return JobInfo{}, invalidf("EnqueueAt needs a time (use Enqueue for no delay)")
	}
	return c.EnqueueRaw(ctx, queue, class, raw, At(t))
}

// EnqueueIn is EnqueueAt for the time d from now (the client's clock).
func (c *Client) EnqueueIn(ctx context.Context, d time.Duration, queue, class string, args ...any) (JobInfo, error) {
	raw, err := encodeArgs(args)
	if err != nil {
		return JobInfo{}, err
	}
	return c.EnqueueRaw(ctx, queue, class, raw, In(d))
}

// EnqueueRaw pushes a job whose args are JSON text: an array (one element
// per argument, as Ruby writes) or an object (kept as is, as php-resque
// and resque-v3 write it); empty means []. A lone value such as 5 is
// refused (ErrInvalid), as `resque-go enqueue --args` refuses it. The text
// is compacted, numbers kept exact. With At or In the job goes through the
// delayed queue.
func (c *Client) EnqueueRaw(ctx context.Context, queue, class string, argsJSON []byte, opts ...Option) (JobInfo, error) {
	var o enqueueOptions
	for _, opt := range opts {
		opt.apply(&o)
	}
	if err := checkJob(queue, class, argsJSON, o); err != nil {
		return JobInfo{}, err
	}
	now := c.now()
	due := o.at
	if o.hasIn {
		due = now.Add(o.in)
	}
	// A delayed job is written as resque-scheduler writes it (class and
	// args, no id), so its remove_delayed and resque-web find it, unless
	// the caller asks for an id.
	plain := o.plain || !due.IsZero() && o.unique.UID == "" && !o.withID && o.id == ""
	eo := protocol.EnqueueOptions{Plain: plain, Now: now, ID: o.id, Unique: o.unique, Tags: o.tags, Deps: o.deps}
	if !plain {
		// the caller's span, if any, as Ruby's OpenTelemetry instrumentation
		// writes it; a plain payload stays class and args only
		eo.Traceparent, eo.Tracestate = tracing.Inject(ctx)
	}
	payload, err := protocol.NewPayload(class, argsJSON, eo)
	if err != nil {
		return JobInfo{}, invalidf("%v", err)
	}
	info := JobInfo{Queue: queue, Class: class, Payload: payload}
	if p, err := protocol.DecodePayload(payload); err == nil {
		info.ID = p.ID
	}
	if o.unique.UID != "" {
		return c.enqueueUnique(ctx, info, due)
	}
	if o.hasDeps() {
		return c.enqueueDeps(ctx, info, o)
	}
	if len(o.tags) > 0 || o.events {
		err := c.rdb.EnqueueTracked(ctx, rdb.TrackedJob{Queue: queue, Class: class, ID: info.ID, Payload: payload,
			Tags: o.tags, Event: o.events, Now: now})
		if err != nil {
			return JobInfo{}, wrap("enqueue", err)
		}
		return info, nil
	}
	if due.IsZero() {
		if err := c.rdb.Enqueue(ctx, queue, payload); err != nil {
			return JobInfo{}, wrap("enqueue", err)
		}
		return info, nil
	}
	item, err := protocol.DelayedItem(payload, queue)
	if err != nil {
		return JobInfo{}, invalidf("%v", err)
	}
	if err := delayedio.EnqueueAt(ctx, c.rdb, queue, payload, due); err != nil {
		return JobInfo{}, wrap("enqueue at", err)
	}
	info.Payload, info.DueAt = item, dueSecond(due)
	return info, nil
}

func (c *Client) enqueueUnique(ctx context.Context, info JobInfo, due time.Time) (JobInfo, error) {
	res, err := uniqueio.Enqueue(ctx, c.rdb, unique.Job{Queue: info.Queue, Payload: info.Payload, DueAt: due})
	if errors.Is(err, unique.ErrDuplicate) {
		return JobInfo{}, err
	}
	if err != nil {
		return JobInfo{}, wrap("enqueue unique", err)
	}
	if !due.IsZero() || res == unique.Deferred {
		if info.Payload, err = protocol.DelayedItem(info.Payload, info.Queue); err != nil {
			return JobInfo{}, invalidf("%v", err)
		}
	}
	if !due.IsZero() && res == unique.Queued {
		info.DueAt = dueSecond(due)
	}
	info.Deferred = res == unique.Deferred
	return info, nil
}

// dueSecond rounds t up to the second, as delayed.EnqueueAt files it.
func dueSecond(t time.Time) time.Time {
	ts := t.Unix()
	if t.Nanosecond() > 0 {
		ts++
	}
	return time.Unix(ts, 0)
}

// checkJob refuses what no worker could run, before anything is written.
func checkJob(queue, class string, args []byte, o enqueueOptions) error {
	if err := protocol.ValidateQueueName(queue); err != nil {
		return invalidf("%v", err)
	}
	if class == "" || !utf8.ValidString(class) || !utf8.ValidString(queue) {
		return invalidf("class must be non-empty and class and queue valid UTF-8")
	}
	if o.plain && o.id != "" {
		return invalidf("Plain writes only class and args: it takes no ID")
	}
	if o.plain && o.withID {
		return invalidf("Plain writes only class and args: it takes no WithID")
	}
	if o.plain && o.unique.UID != "" {
		return invalidf("Plain writes only class and args: it takes no Unique")
	}
	if (len(o.tags) > 0 || o.events) && (o.plain || o.unique.UID != "" || o.hasIn || !o.at.IsZero()) {
		return invalidf("Tags and WithEvent go with an immediate enqueue: not with Plain, At, In or Unique")
	}
	for _, t := range o.tags {
		if err := protocol.CheckTag(t); err != nil {
			return invalidf("%v", err)
		}
	}
	if len(o.tags) > protocol.MaxTags {
		return invalidf("%d tags: at most %d", len(o.tags), protocol.MaxTags)
	}
	if err := checkDeps(o); err != nil {
		return err
	}
	if o.unique.Deferrable && o.unique.UID == "" {
		return invalidf("DeferrableBy needs Unique")
	}
	if o.unique.DeferrableBy < 0 {
		return invalidf("DeferrableBy must not be negative")
	}
	// bounded (protocol.MaxDelay, MaxTimestamp): a larger value would be
	// written as a float and refused by Redis when the job is released
	if err := protocol.CheckDelaySeconds("DeferrableBy", float64(o.unique.DeferrableBy)); o.unique.Deferrable && err != nil {
		return invalidf("%v", err)
	}
	if err := protocol.CheckDelay("In", o.in); o.hasIn && o.in > 0 && err != nil {
		return invalidf("%v", err) // a negative one is a time in the past: due at once
	}
	if err := protocol.CheckDue("At", o.at); !o.hasIn && !o.at.IsZero() && err != nil {
		return invalidf("%v", err)
	}
	if o.unique.UID != "" && !utf8.ValidString(o.unique.UID) {
		return invalidf("the unique id must be valid UTF-8")
	}
	// Workers refuse payloads that are not valid UTF-8 (Ruby's and PHP's
	// JSON parsers cannot read them): such a job would only fail.
	if !utf8.Valid(args) {
		return invalidf("args are not valid UTF-8")
	}
	args = bytes.TrimSpace(args)
	switch {
	case len(args) == 0:
		return nil
	case !json.Valid(args):
		return invalidf("args are not valid JSON")
	case args[0] == '[':
		return nil
	case args[0] == '{' && o.plain:
		return invalidf("Plain writes args as Ruby's Resque.enqueue does, always an array: pass the object as one argument, [%s]", clip(args))
	case args[0] == '{':
		return nil
	}
	return invalidf("args %s: want a JSON array of arguments (or an object); for one argument write [%s]", clip(args), clip(args))
}

// encodeArgs writes args as a JSON array without HTML escaping, the way
// Ruby and Node write <, > and &.
func encodeArgs(args []any) ([]byte, error) {
	if args == nil {
		args = []any{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return nil, invalidf("args: %v", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// clip shortens b for a message.
func clip(b []byte) string {
	const max = 80
	if len(b) <= max {
		return string(b)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return string(b[:cut]) + "..."
}
