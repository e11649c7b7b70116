package rdb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// ClaimArgs describes one claim attempt.
type ClaimArgs struct {
	WorkerID string
	Host     string
	// Sources in priority order (queues already expanded); Queues is the
	// shorthand for sources that are all Resque queues.
	Sources []protocol.Source
	Queues  []string
	Now     time.Time
	// Token is the slot's serial-lock token and LockTTL the lock's time to
	// live (default 30 s); used only when a source is serial.
	Token   string
	LockTTL time.Duration
	// Cache, when set, keeps the keys and arguments this claim sends for
	// the next claim with the same arguments (see ClaimCache).
	Cache *ClaimCache
	// Limits, when set, are the caps and rates the claim honours for jobs
	// of plain queues (docs/limits.md); nil sends nothing of them.
	Limits *ClaimLimits
}

// ClaimCache keeps one slot's claim keys and arguments between its claims.
// A slot claims with the same worker id, sources and lock token job after
// job; while they, and the second of Now, stay the same, a claim sends what
// the last one built instead of laying it out again (a tenth of a busy
// worker's allocations). Not for concurrent use: one slot's claims follow
// one another. The zero value is empty.
type ClaimCache struct {
	workerID, host, token string
	ttl                   time.Duration
	queues                []string
	queueSrcs             []protocol.Source // queues as sources
	sources               []protocol.Source
	unix                  int64
	limits                *ClaimLimits // the limits the claim sends (a gated claim's change)
	keys, args            []any
	call                  batchCall // FinishAndClaim's, reused
}

// get returns the cached keys and arguments when they are a's.
func (cc *ClaimCache) get(a ClaimArgs) (keys, args []any, ok bool) {
	if cc.keys == nil || cc.workerID != a.WorkerID || cc.host != a.Host || cc.token != a.Token ||
		cc.ttl != a.LockTTL || cc.unix != a.Now.Unix() || cc.limits != a.Limits || (a.Sources == nil) != (cc.sources == nil) {
		return nil, nil, false
	}
	if a.Sources != nil {
		if !slices.Equal(a.Sources, cc.sources) {
			return nil, nil, false
		}
	} else if !slices.Equal(a.Queues, cc.queues) {
		return nil, nil, false
	}
	return cc.keys, cc.args, true
}

// put keeps a claim's keys and arguments (copies of a's lists: the caller
// may reuse them).
func (cc *ClaimCache) put(a ClaimArgs, keys, args []any) {
	*cc = ClaimCache{workerID: a.WorkerID, host: a.Host, token: a.Token, ttl: a.LockTTL, unix: a.Now.Unix(),
		limits: a.Limits, keys: keys, args: args}
	if a.Sources != nil {
		cc.sources = slices.Clone(a.Sources)
	} else {
		cc.queues = slices.Clone(a.Queues)
		cc.queueSrcs = protocol.QueueSources(cc.queues)
	}
}

func (a ClaimArgs) sources() []protocol.Source {
	if a.Sources != nil {
		return a.Sources
	}
	if cc := a.Cache; cc != nil && cc.queueSrcs != nil && slices.Equal(cc.queues, a.Queues) {
		return cc.queueSrcs
	}
	return protocol.QueueSources(a.Queues)
}

// ClaimResult is what a claim found. Exactly one of Paused, Empty or a job
// (Payload non-nil) holds.
type ClaimResult struct {
	Paused bool
	Empty  bool
	// Source is where the job came from; Queue is Source.Queue.
	Source  protocol.Source
	Queue   string
	Payload []byte
	// Resumed is set when worker:<id> already held this job: an earlier
	// claim ran but its reply was lost.
	Resumed bool
	// Seq identifies this claim; Finish needs it.
	Seq string
	// Attempts is the job's attempt counter (failed attempts so far) when
	// the claim read it: jobs in Ruby's exact form; -1 when not read.
	Attempts int
	// StatQueue names the job's queue in the per-host statistics
	// (queuestat:*): Queue, except for a job from a ring, which is counted
	// under the ring's name (a static pool, a unit), not under each batch.
	StatQueue string
	// WrongType names the sources (their Queue) the claim skipped because
	// their list's key holds another type, a key written by hand: the
	// claim went on to the sources after them (and a finish that rode with
	// it was recorded). Usually nil; set with a job or with Empty.
	WrongType []string
}

// StatName is StatQueue, or Queue when it is not set.
func (r ClaimResult) StatName() string {
	if r.StatQueue != "" {
		return r.StatQueue
	}
	return r.Queue
}

// ringRecordHead is a worker record's head after its queue, for a job from
// a ring (jobpath/claim.lua puts the queue in front).
func ringRecordHead(runAt string) string {
	return `,"run_at":` + string(protocol.MarshalString(runAt)) + `,"payload":`
}

// DefaultLockTTL is how long a serial lock outlives its holder's last
// refresh.
const DefaultLockTTL = 30 * time.Second

// Claim pops the first job in priority order and records it in worker:<id>
// in one step. The caller counts the dequeue (queuestat:*) itself.
func (c *Client) Claim(ctx context.Context, a ClaimArgs) (ClaimResult, error) {
	keys, args := c.claimKeysArgs(a)
	run := c.evalHot
	if c.events == nil && a.Limits == nil {
		run = c.evalHotCore
	}
	reply, err := run(ctx, c.claim, append(append([]any{len(keys)}, keys...), args...)...)
	if err != nil {
		return ClaimResult{}, fmt.Errorf("rdb: claim for %q: %w", a.WorkerID, err)
	}
	return parseClaim(a, reply)
}

func parseClaim(a ClaimArgs, reply any) (ClaimResult, error) {
	switch v := reply.(type) {
	case nil:
		return ClaimResult{Empty: true}, nil
	case int64:
		return ClaimResult{Paused: true}, nil
	case []any:
		if len(v) == 6 {
			// sources skipped for a key of another type (jobpath/claim.lua's
			// claim_wrongtype): rare, so parsed apart from the rest
			return parseWrongType(a, v)
		}
		if len(v) < 3 || len(v) > 5 {
			return ClaimResult{}, fmt.Errorf("rdb: claim reply has %d elements", len(v))
		}
		i, err := redis.Int(v[0], nil)
		if err != nil {
			return ClaimResult{}, fmt.Errorf("rdb: claim reply: %w", err)
		}
		body, err := redis.Bytes(v[1], nil)
		if err != nil {
			return ClaimResult{}, fmt.Errorf("rdb: claim reply: %w", err)
		}
		var seq string
		switch n := v[2].(type) {
		case int64:
			seq = strconv.FormatInt(n, 10)
		default:
			if seq, err = redis.String(v[2], nil); err != nil {
				return ClaimResult{}, fmt.Errorf("rdb: claim reply: %w", err)
			}
		}
		if i == 0 {
			rec, err := protocol.ParseWorkerRecord(body)
			if err != nil {
				return ClaimResult{}, fmt.Errorf("rdb: claim: held record of %q: %w", a.WorkerID, err)
			}
			return ClaimResult{Source: rec.SourceOf(), Queue: rec.Queue, Payload: rec.Payload, Resumed: true, Seq: seq, Attempts: -1}, nil
		}
		srcs := a.sources()
		if i < 1 || i > len(srcs) {
			return ClaimResult{}, fmt.Errorf("rdb: claim reply: source index %d out of range", i)
		}
		attempts := -1
		if len(v) >= 4 {
			if s, _ := redis.String(v[3], nil); s != "" {
				if attempts, err = strconv.Atoi(s); err != nil {
					attempts = -1
				}
			}
		}
		src := srcs[i-1]
		if len(v) == 5 {
			// from a ring: the job's source is the list it came from
			list, err := redis.String(v[4], nil)
			if err != nil || src.Ring == "" {
				return ClaimResult{}, fmt.Errorf("rdb: claim reply: ring list of source %d: %v", i, errOr(err, "not a ring"))
			}
			if src.Ring == protocol.RingStatic && !strings.Contains(list, ":") {
				// a batch's claim from a ring of several sources names
				// the source alone (finish_claim_batch.lua's
				// claim_static): source ids have no ':', lists' names do
				list = protocol.StaticSourcePrefix(src.Pool) + list
			}
			src = protocol.Source{Queue: src.Queue, List: list}
			if srcs[i-1].Ring == protocol.RingUnit {
				src.Queue = list
			}
		}
		return ClaimResult{Source: src, Queue: src.Queue, Payload: body, Seq: seq, Attempts: attempts, StatQueue: srcs[i-1].Queue}, nil
	}
	return ClaimResult{}, fmt.Errorf("rdb: claim: unexpected reply %T", reply)
}

// parseWrongType reads a claim reply that names the sources it skipped
// because their key holds another type: {i, payload, seq, attempts, list,
// skipped}, nil standing for what the claim lacks (all nil: no job).
func parseWrongType(a ClaimArgs, v []any) (ClaimResult, error) {
	idx, err := redis.Ints(v[5], nil)
	if err != nil {
		return ClaimResult{}, fmt.Errorf("rdb: claim reply: skipped sources: %w", err)
	}
	srcs := a.sources()
	names := make([]string, 0, len(idx))
	for _, i := range idx {
		if i < 1 || i > len(srcs) {
			return ClaimResult{}, fmt.Errorf("rdb: claim reply: skipped source %d out of range", i)
		}
		names = append(names, srcs[i-1].Queue)
	}
	res := ClaimResult{Empty: true}
	if v[0] != nil {
		job := v[:5]
		if job[4] == nil {
			job = job[:4]
		}
		if res, err = parseClaim(a, job); err != nil {
			return ClaimResult{}, err
		}
	}
	res.WrongType = names
	return res, nil
}

// OutcomeKind says how a job ended.
type OutcomeKind string

// Outcome kinds, as jobpath/finish.lua names them.
const (
	OutcomeOK         OutcomeKind = "ok"
	OutcomeFail       OutcomeKind = "fail"
	OutcomeRetry      OutcomeKind = "retry"
	OutcomeReschedule OutcomeKind = "reschedule"
	OutcomeDiscard    OutcomeKind = "discard"
)

// Outcome is how a job ended, for Finish.
type Outcome struct {
	// Seq is the claim being finished (ClaimResult.Seq).
	Seq  string
	Kind OutcomeKind
	// Class is the job's class; a false DirtyExit entry another runtime
	// wrote for this job is recognised by it (with the worker id and queue).
	Class string
	// Entry is the failed entry (OutcomeFail) or retries entry (OutcomeRetry).
	Entry []byte
	// Push is what goes back (OutcomeRetry, OutcomeReschedule): a payload
	// for Queue, or, when DueAt > 0, the delayed item.
	Push  []byte
	DueAt int64
	// JobID, with Status "v3:<status>" or "php:<code>", updates the job's
	// status key; NewJobID gets "waiting" when the retry is monitored.
	JobID    string
	Status   string
	NewJobID string
	// AttemptsDigest names the job's attempt counter (protocol.Keys.Attempts);
	// "" leaves every counter alone. Attempts > 0 sets it (a retry) for
	// AttemptsTTL; 0 deletes it (the job's attempts are over).
	AttemptsDigest string
	Attempts       int
	AttemptsTTL    time.Duration
	// Token, for a job from a serial source, is the slot's lock token: the
	// finish releases that source's lock if the slot still holds it.
	Token string
	// StatQueue, when set, names the queue in the queuestat counters
	// instead of the source's (ClaimResult.StatQueue).
	StatQueue string
	// UniqueID is the uid of a unique job (protocol.ParseUnique): the
	// finish moves its state on (docs/protocol.md#unique-jobs) in the same step.
	UniqueID string
	// Limits are the caps' slots the job holds (docs/limits.md): the
	// finish frees them and moves a parked job back where that leaves room.
	Limits []LimitHold
	Now    time.Time
	// Tags are the job's tags (protocol.Payload.Tags): a job that ends
	// (not a retry or reschedule) leaves their indexes; JobID names it.
	Tags []string
	// Attempt (1 = first) and Duration describe the attempt that ended,
	// for the events stream (Options.Events).
	Attempt  int
	Duration time.Duration
	// Cancelled says a fail is the end of a job cancelled by request or
	// USR1 (ResqueGo::Cancelled): its event is "cancelled" instead of
	// "failed". A cancelled job that is retried is an ordinary retry.
	Cancelled bool
	// DepsID, set only while dependencies are in use (Client.DepsInUse),
	// is the id of a job whose end is recorded for the jobs that may wait
	// for it (docs/dependencies.md); Group is the job's group (its
	// payload's "group"), counted at its end. A retry sends neither: the
	// job has not ended.
	DepsID, Group string
}

// ErrRecordRemoved is returned by Finish when the job's end was recorded
// but worker:<id> had been removed while the job ran by another runtime (Ruby
// Resque's or php-resque's startup prune of same-host ids): the worker id
// must be registered again at once. ErrDirtyExitRemoved (which wraps it)
// says the false Resque::DirtyExit entry Ruby wrote for the job was removed.
var (
	ErrRecordRemoved    = errors.New("rdb: worker record was removed by another runtime while the job ran; its end was recorded")
	ErrDirtyExitRemoved = fmt.Errorf("%w (the false Resque::DirtyExit entry was removed)", ErrRecordRemoved)
)

// Finish clears worker:<id> and writes the counters, the failed or retries
// entry, the re-enqueued payload and the job status of a finished job in one
// step. It returns ErrNotOwned when the claim is no longer this slot's (the
// end is not recorded), and ErrRecordRemoved or ErrDirtyExitRemoved when it
// was recorded although another runtime had unregistered the worker.
func (c *Client) Finish(ctx context.Context, workerID, host string, src protocol.Source, o Outcome) error {
	keys, args := c.finishKeysArgs(workerID, host, src, o)
	run := c.evalHot
	if c.coreOutcome(o) {
		run = c.evalHotCore
	}
	n, err := redis.Int(run(ctx, c.finish, append(append([]any{len(keys)}, keys...), args...)...))
	return c.nameBlocked(ctx, host, src, o, finishResult(workerID, n, err))
}

// ErrKeyType is wrapped by a finish that wrote nothing because a key the
// job goes to (failed, retries, its source, the delayed queue or one of
// their indexes) holds another type, a key written by hand: the job stays
// in worker:<id>, and the same finish succeeds once the key is fixed.
var ErrKeyType = errors.New("a key the job's end goes to holds another type; nothing written, the job stays in its worker record until the key is fixed")

// nameBlocked adds to an ErrKeyType from a finish the key that holds the
// wrong type (one TYPE per candidate key: only on that error).
func (c *Client) nameBlocked(ctx context.Context, host string, src protocol.Source, o Outcome, err error) error {
	if !errors.Is(err, ErrKeyType) {
		return err
	}
	k := c.keys
	type want struct{ key, typ string }
	var ws []want
	switch o.Kind {
	case OutcomeFail:
		ws = append(ws, want{k.Failed(), "list"})
	case OutcomeRetry, OutcomeReschedule:
		if o.Kind == OutcomeRetry {
			ws = append(ws, want{k.Retries(), "list"})
		}
		if o.DueAt > 0 {
			ws = append(ws, want{k.Delayed(o.DueAt), "list"}, want{k.Timestamps(o.Push), "set"}, want{k.DelayedSchedule(), "zset"})
		} else {
			ws = append(ws, want{k.SourceKey(src), "list"}, want{k.Queues(), "set"})
			if ring, state, _, static := k.StaticWakeKeys(src); static {
				ws = append(ws, want{ring, "list"}, want{state, "hash"})
			}
		}
	}
	for _, w := range ws {
		t, terr := redis.String(c.do(ctx, "TYPE", w.key))
		if terr == nil && t != "none" && t != w.typ {
			return fmt.Errorf("%w: %s holds a %s, not a %s", err, w.key, t, w.typ)
		}
	}
	// fixed since, or the push failed for another reason
	return fmt.Errorf("%w (no such key found now)", err)
}

func finishResult(workerID string, n int, err error) error {
	if err != nil {
		return fmt.Errorf("rdb: finish for %q: %w", workerID, err)
	}
	switch n {
	case 0:
		return ErrNotOwned
	case 1:
		return nil
	case 2:
		return ErrDirtyExitRemoved
	case 3:
		return ErrRecordRemoved
	case 6:
		return fmt.Errorf("rdb: finish for %q: %w", workerID, ErrKeyType)
	}
	return fmt.Errorf("rdb: finish for %q: unexpected reply %d", workerID, n)
}

// FinishAndClaim is Finish followed by Claim in one step and one round
// trip. finishErr is Finish's result (nil or ErrNotOwned); err reports a
// failed call, after which it is safe to call FinishAndClaim again with the
// same arguments: a finish that already ran is not repeated, and a job
// claimed meanwhile is returned again (Resumed).
func (c *Client) FinishAndClaim(ctx context.Context, workerID, host string, src protocol.Source, o Outcome, a ClaimArgs) (finishErr error, res ClaimResult, err error) {
	ck, ca := c.claimKeysArgs(a)
	var raw any
	if c.batch != nil && a.WorkerID == workerID {
		var call *batchCall
		if a.Cache != nil {
			// the slot's own: nothing touches a call once it is answered
			call = &a.Cache.call
		} else {
			call = new(batchCall)
		}
		*call = batchCall{workerID: workerID, host: host, src: src, o: o, ck: ck, ca: ca, sources: claimSources(ca)}
		c.batch.do(call)
		raw, err = call.reply, call.err
	} else {
		raw, err = c.finishClaimOne(ctx, workerID, host, src, o, ck, ca)
	}
	finishErr, res, err = parseFinishClaim(workerID, a, raw, err)
	return finishErr, res, c.nameBlocked(ctx, host, src, o, err)
}

// parseFinishClaim reads finish_claim.lua's reply (or a slot's part of
// finish_claim_batch.lua's).
func parseFinishClaim(workerID string, a ClaimArgs, raw any, err error) (finishErr error, res ClaimResult, _ error) {
	reply, err := redis.Values(raw, err)
	if err != nil {
		return nil, ClaimResult{}, fmt.Errorf("rdb: finish and claim for %q: %w", workerID, err)
	}
	if len(reply) != 2 {
		return nil, ClaimResult{}, fmt.Errorf("rdb: finish and claim: reply has %d elements", len(reply))
	}
	n, err := redis.Int(reply[0], nil)
	if err != nil {
		return nil, ClaimResult{}, fmt.Errorf("rdb: finish and claim for %q: finish reply: %w", workerID, err)
	}
	if finishErr = finishResult(workerID, n, nil); finishErr != nil && !errors.Is(finishErr, ErrNotOwned) && !errors.Is(finishErr, ErrRecordRemoved) {
		return nil, ClaimResult{}, finishErr
	}
	res, err = parseClaim(a, reply[1])
	return finishErr, res, err
}

// Requeue pushes a job a slot holds back to the head of its source and
// clears worker:<id>, releasing a serial source's lock held with token,
// and the caps' slots and event of end (the job is put back, not ended). It
// returns ErrNotOwned when worker:<id> was already gone.
func (c *Client) Requeue(ctx context.Context, workerID string, src protocol.Source, payload []byte, token string, end JobEnd) error {
	lock := c.keys.SourceKey(src)
	if src.Serial {
		lock = c.keys.SerialLock(src.Queue)
	} else {
		token = ""
	}
	stateKey, unique := lock, ""
	if u, ok, _ := protocol.ParseUnique(payload); ok {
		stateKey, unique = c.keys.UniqueState(u.UID), "1"
	}
	ring, state, source, static := c.keys.StaticWakeKeys(src)
	if !static {
		ring, state = lock, lock // unused by the script
	}
	end.DepsID, end.Group = "", "" // put back: not ended
	keys, args := c.appendEnds([]any{c.keys.Worker(workerID), c.keys.SourceKey(src), c.keys.ClaimSeqs(), lock,
		stateKey, ring, state}, []any{payload, workerID, token, unique, source}, workerID, end)
	n, err := redis.Int(c.eval(ctx, c.requeue, scriptKeysArgs(keys, args)...))
	if err != nil {
		return fmt.Errorf("rdb: requeue for %q: %w", workerID, err)
	}
	if n == 0 {
		return ErrNotOwned
	}
	return nil
}

// Enqueue pushes a payload to a queue and records the queue name, as every
// Resque producer does.
func (c *Client) Enqueue(ctx context.Context, queue string, payload []byte) error {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return fmt.Errorf("rdb: enqueue to %q: %w", queue, err)
	}
	defer conn.Close()
	if err := conn.Send("SADD", c.keys.Queues(), queue); err != nil {
		return fmt.Errorf("rdb: enqueue to %q: %w", queue, err)
	}
	if _, err := redis.DoContext(conn, ctx, "RPUSH", c.keys.Queue(queue), payload); err != nil {
		return fmt.Errorf("rdb: enqueue to %q: %w", queue, err)
	}
	return nil
}

// KnownQueues returns the members of the queues set.
func (c *Client) KnownQueues(ctx context.Context) ([]string, error) {
	qs, err := redis.Strings(c.do(ctx, "SMEMBERS", c.keys.Queues()))
	if err != nil {
		return nil, fmt.Errorf("rdb: queues: %w", err)
	}
	return qs, nil
}

// WaitQueue blocks until queue q is non-empty or timeout passes, without
// taking anything: BLMOVE of the list onto itself (RIGHT to RIGHT) returns
// the last item and leaves the list as it was. It reports whether q had a job.
func (c *Client) WaitQueue(ctx context.Context, q string, timeout time.Duration) (bool, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return false, fmt.Errorf("rdb: wait on %q: %w", q, err)
	}
	defer conn.Close()
	key := c.keys.Queue(q)
	// the connection's read timeout bounds the blocked read: block for less
	if limit := c.timeout - time.Second; timeout > limit && limit > 0 {
		timeout = limit
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+c.timeout)
	defer cancel()
	v, err := redis.DoContext(conn, ctx, "BLMOVE", key, key, "RIGHT", "RIGHT",
		strconv.FormatFloat(timeout.Seconds(), 'f', 3, 64))
	if err != nil {
		return false, fmt.Errorf("rdb: wait on %q: %w", q, err)
	}
	return v != nil, nil
}

// Attempts returns the attempt counter of a job (protocol.Keys.Attempts):
// how many of its attempts failed, as far as the counter knows; 0 when
// there is none.
func (c *Client) Attempts(ctx context.Context, digest string) (int, error) {
	n, err := redis.Int(c.do(ctx, "GET", c.keys.Attempts(digest)))
	if errors.Is(err, redis.ErrNil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("rdb: attempts of %s: %w", digest, err)
	}
	return n, nil
}

// ReplaceRecord overwrites worker:<id> with record if it still exists (the
// slot still holds its job).
func (c *Client) ReplaceRecord(ctx context.Context, workerID string, record []byte) error {
	if _, err := c.do(ctx, "SET", c.keys.Worker(workerID), record, "XX"); err != nil {
		return fmt.Errorf("rdb: replace record of %q: %w", workerID, err)
	}
	return nil
}

// RefreshLock extends serial queue q's lock by ttl if token still holds it;
// it reports whether it did.
func (c *Client) RefreshLock(ctx context.Context, q, token string, ttl time.Duration) (bool, error) {
	n, err := redis.Int(c.eval(ctx, c.refreshLock, c.keys.SerialLock(q), token, ttl.Milliseconds()))
	if err != nil {
		return false, fmt.Errorf("rdb: refresh lock of %q: %w", q, err)
	}
	return n == 1, nil
}
