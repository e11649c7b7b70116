package rdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Scripts of unique jobs; immutable once built.
var (
	enqueueUniqueScript = loadScript("enqueue_unique.lua", 5)
	uniqueClearScript   = loadScriptWith("unique_clear.lua", 3, "unique_release.lua")
)

// UniqueResult is what an enqueue of a unique job did.
type UniqueResult string

// Unique enqueue results (see enqueue_unique.lua).
const (
	UniqueQueued        UniqueResult = "queued"
	UniqueDeferred      UniqueResult = "deferred"
	UniqueDuplicate     UniqueResult = "duplicate"
	UniqueDeferredTaken UniqueResult = "deferred_taken"
)

// UniqueJob is a unique job to enqueue.
type UniqueJob struct {
	UID   string
	Queue string
	// Push is what goes to the queue (the payload), or, when DueAt > 0, the
	// delayed item filed at DueAt (Unix seconds).
	Push  []byte
	DueAt int64
	// Deferred is the payload to park while the uid's job runs (naming
	// its queue); nil when the job is not deferrable.
	Deferred []byte
	// Unassigned pushes Push to the head of the mass queues' unassigned
	// list (as producers LPUSH) instead of a queue; Queue is then unused.
	Unassigned bool
}

// EnqueueUnique enqueues a unique job in one step (docs/protocol.md#unique-jobs): pushed
// when its uid is free, parked when its uid's job is running and it is
// deferrable, refused otherwise.
func (c *Client) EnqueueUnique(ctx context.Context, j UniqueJob) (UniqueResult, error) {
	k := c.keys
	target, index, sched, member, ts := k.Queue(j.Queue), k.Queues(), k.Queues(), j.Queue, ""
	mode := ""
	switch {
	case j.Unassigned:
		target, mode = k.Unassigned(), "L"
	case j.DueAt > 0:
		target, index, sched = k.Delayed(j.DueAt), k.Timestamps(j.Push), k.DelayedSchedule()
		member, ts = protocol.DelayedMember(j.DueAt), fmt.Sprint(j.DueAt)
	}
	res, err := redis.String(c.eval(ctx, enqueueUniqueScript, k.UniqueState(j.UID), k.UniqueDeferred(j.UID),
		target, index, sched, j.Push, member, ts, j.Deferred, mode, delayedStateTTL(j.DueAt, time.Now())))
	if err != nil || res == string(UniqueDuplicate) || res == string(UniqueDeferredTaken) {
		// a refusal, or a failure, may come from a key of another type
		// (written by hand): say so rather than "already queued"
		if terr := c.uniqueKeyTypes(ctx, j.UID); terr != nil {
			return "", terr
		}
	}
	if err != nil {
		return "", fmt.Errorf("rdb: enqueue unique %q: %w", j.UID, err)
	}
	return UniqueResult(res), nil
}

// ErrUniqueKeyType is wrapped when a uid's state or deferred key holds
// another type than the string this protocol keeps there.
var ErrUniqueKeyType = errors.New("a unique key of another type")

// uniqueKeyTypes returns an error wrapping ErrUniqueKeyType that names the
// key of uid that is neither absent nor a string (one TYPE per key: only
// called on a refusal).
func (c *Client) uniqueKeyTypes(ctx context.Context, uid string) error {
	for _, key := range []string{c.keys.UniqueState(uid), c.keys.UniqueDeferred(uid)} {
		t, err := redis.String(c.do(ctx, "TYPE", key))
		if err == nil && t != "none" && t != "string" {
			return fmt.Errorf("%w: unique id %q: %s is a %s, not a string; nothing was written", ErrUniqueKeyType, uid, key, t)
		}
	}
	return nil
}

// delayedStateGrace is how long a delayed unique job's queued state
// outlives its due time (enqueue_unique.lua says why it expires at all).
const delayedStateGrace = 24 * time.Hour

func delayedStateTTL(dueAt int64, now time.Time) int64 {
	if dueAt <= 0 {
		return 0
	}
	return max(dueAt-now.Unix(), 0) + int64(delayedStateGrace/time.Second)
}

// UniqueInfo is one uid's unique state.
type UniqueInfo struct {
	UID      string
	State    string // queued, running (or what another runtime wrote); "" when absent
	Deferred []byte // the parked payload, nil when none
	// Err is set when this uid's keys could not be read (a key of another
	// type, written by hand); State and Deferred are then empty.
	Err error
}

// UniqueUIDs lists the uids that have a state key (SCAN).
func (c *Client) UniqueUIDs(ctx context.Context) ([]string, error) {
	keys, err := c.ScanKeys(ctx, c.keys.UniqueStatePattern())
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(keys))
	for _, key := range keys {
		if uid, ok := c.keys.ParseUniqueState(key); ok {
			out = append(out, uid)
		}
	}
	return out, nil
}

// UniqueInfos reads the state and deferred payload of each uid in one
// pipeline. A uid whose keys cannot be read (Redis refuses the GET: a key
// of another type) gets its error in Err, and the others are read all the
// same; the error returned is the connection's.
func (c *Client) UniqueInfos(ctx context.Context, uids []string) ([]UniqueInfo, error) {
	if len(uids) == 0 {
		return nil, nil
	}
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("rdb: unique states: %w", err)
	}
	defer conn.Close()
	for _, uid := range uids {
		if err := conn.Send("GET", c.keys.UniqueState(uid)); err != nil {
			return nil, fmt.Errorf("rdb: unique states: %w", err)
		}
		if err := conn.Send("GET", c.keys.UniqueDeferred(uid)); err != nil {
			return nil, fmt.Errorf("rdb: unique states: %w", err)
		}
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("rdb: unique states: %w", err)
	}
	out := make([]UniqueInfo, len(uids))
	for i, uid := range uids {
		out[i].UID = uid
		st, err := redis.String(redis.ReceiveContext(conn, ctx))
		if err := uniqueReadErr(err); err != nil {
			if !IsReplyError(err) {
				return nil, fmt.Errorf("rdb: unique state of %q: %w", uid, err)
			}
			out[i].Err = fmt.Errorf("rdb: unique state of %q (%s): %w", uid, c.keys.UniqueState(uid), err)
		}
		d, derr := redis.Bytes(redis.ReceiveContext(conn, ctx))
		if derr := uniqueReadErr(derr); derr != nil {
			if !IsReplyError(derr) {
				return nil, fmt.Errorf("rdb: unique deferred of %q: %w", uid, derr)
			}
			if out[i].Err == nil {
				out[i].Err = fmt.Errorf("rdb: unique deferred of %q (%s): %w", uid, c.keys.UniqueDeferred(uid), derr)
			}
		}
		if out[i].Err == nil {
			out[i].State, out[i].Deferred = st, d
		}
	}
	return out, nil
}

// uniqueReadErr is err, but nil for a missing key.
func uniqueReadErr(err error) error {
	if errors.Is(err, redis.ErrNil) {
		return nil
	}
	return err
}

// IsReplyError reports whether err is an error reply from Redis (a
// command or script was refused, e.g. by a key of another type; the
// connection is fine).
func IsReplyError(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// ClearResult is what UniqueClear did.
type ClearResult string

// UniqueClear results (see unique_clear.lua).
const (
	ClearChanged  ClearResult = "changed"
	ClearAbsent   ClearResult = "absent"
	ClearCleared  ClearResult = "cleared"
	ClearReleased ClearResult = "released"
)

// UniqueClear deletes a uid's state, releasing its deferred job (if any)
// through the unique path. With ifState set it acts only while the state
// is still that value. by names who cleared (in a failed entry, when the
// deferred payload cannot be released).
func (c *Client) UniqueClear(ctx context.Context, uid, ifState, by string, now time.Time) (ClearResult, error) {
	k := c.keys
	res, err := redis.String(c.eval(ctx, uniqueClearScript, k.UniqueState(uid), k.UniqueDeferred(uid), k.Failed(),
		k.Prefix(), now.Unix(), protocol.FormatFailedAt(now), ifState, by))
	if err != nil {
		return "", fmt.Errorf("rdb: unique clear %q: %w", uid, err)
	}
	return ClearResult(res), nil
}

// RunningRecords returns the worker:<id> values of every registered worker
// that holds a job, in both registries (Resque's workers set and
// resque-go's own, when it is kept apart): who may be running a job.
func (c *Client) RunningRecords(ctx context.Context) ([][]byte, error) {
	ids := map[string]bool{}
	for _, sep := range []bool{false, true} {
		got, err := redis.Strings(c.do(ctx, "SMEMBERS", c.keys.SeparateRegistry(sep).Workers()))
		if err != nil {
			return nil, fmt.Errorf("rdb: workers: %w", err)
		}
		for _, id := range got {
			ids[id] = true
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, 0, len(ids))
	for id := range ids {
		args = append(args, c.keys.Worker(id))
	}
	vals, err := redis.ByteSlices(c.do(ctx, "MGET", args...))
	if err != nil {
		return nil, fmt.Errorf("rdb: worker records: %w", err)
	}
	out := vals[:0]
	for _, v := range vals {
		if v != nil {
			out = append(out, v)
		}
	}
	return out, nil
}

// UniqueUIDsStep is UniqueUIDs a bounded part at a time (ScanKeysStep).
func (c *Client) UniqueUIDsStep(ctx context.Context, cursor string, calls, count int) ([]string, string, error) {
	keys, next, err := c.ScanKeysStep(ctx, c.keys.UniqueStatePattern(), cursor, calls, count)
	if err != nil {
		return nil, "", err
	}
	out := make([]string, 0, len(keys))
	for _, key := range keys {
		if uid, ok := c.keys.ParseUniqueState(key); ok {
			out = append(out, uid)
		}
	}
	return out, next, nil
}
