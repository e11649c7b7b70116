package rdb

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Register records a worker slot (SADD workers, :started, heartbeat). With
// first=false it re-asserts the registration, keeping the original :started.
// It returns the heartbeat value written (from Redis TIME).
func (c *Client) Register(ctx context.Context, workerID string, started time.Time, interval time.Duration, first bool) (string, error) {
	k := c.keys
	flag := "0"
	if first {
		flag = "1"
	}
	secs := strconv.FormatFloat(interval.Seconds(), 'f', -1, 64)
	hb, err := redis.String(c.eval(ctx, c.register,
		k.Workers(), k.WorkerStarted(workerID), k.Heartbeats(), k.WorkerIntervals(), k.ClaimSeqs(),
		workerID, protocol.FormatStarted(started), secs, flag))
	if err != nil {
		return "", fmt.Errorf("rdb: register %q: %w", workerID, err)
	}
	return hb, nil
}

// Heartbeat writes the heartbeat of every slot of a process (workerIDs)
// in one step, and registers again any slot another runtime unregistered
// (then with :started = started). It returns the heartbeat value written and
// how many slots were registered again.
//
// It also reports how many attempt counters exist (protocol.Keys.AttemptsIndex).
func (c *Client) Heartbeat(ctx context.Context, workerIDs []string, started time.Time, interval time.Duration) (hb string, again, counters int, err error) {
	if len(workerIDs) == 0 {
		return "", 0, 0, nil
	}
	k := c.keys
	args := make([]any, 0, 1+4+len(workerIDs)+2+len(workerIDs))
	args = append(args, 4+len(workerIDs), k.Workers(), k.Heartbeats(), k.WorkerIntervals(), k.AttemptsIndex())
	for _, id := range workerIDs {
		args = append(args, k.WorkerStarted(id))
	}
	args = append(args, protocol.FormatStarted(started), strconv.FormatFloat(interval.Seconds(), 'f', -1, 64))
	for _, id := range workerIDs {
		args = append(args, id)
	}
	v, err := redis.Values(c.eval(ctx, c.heartbeat, args...))
	if err == nil && len(v) != 3 {
		err = fmt.Errorf("reply has %d elements", len(v))
	}
	if err != nil {
		return "", 0, 0, fmt.Errorf("rdb: heartbeat of %d slots: %w", len(workerIDs), err)
	}
	hb, _ = redis.String(v[0], nil)
	again, _ = redis.Int(v[1], nil)
	counters, _ = redis.Int(v[2], nil)
	return hb, again, counters, nil
}

// Unregister removes an idle slot's registration and per-worker stats. It
// returns ErrStillBusy when worker:<id> still
// holds a job, in which case nothing is removed.
func (c *Client) Unregister(ctx context.Context, workerID string) error {
	k := c.keys
	n, err := redis.Int(c.eval(ctx, c.unregister,
		k.Workers(), k.Worker(workerID), k.WorkerStarted(workerID),
		k.StatProcessedWorker(workerID), k.StatFailedWorker(workerID),
		k.Heartbeats(), k.WorkerIntervals(), k.ClaimSeqs(), workerID))
	if err != nil {
		return fmt.Errorf("rdb: unregister %q: %w", workerID, err)
	}
	if n == 0 {
		return ErrStillBusy
	}
	return nil
}

// ErrStillBusy is returned by Unregister when the slot still holds a job.
var ErrStillBusy = fmt.Errorf("rdb: worker still holds a job")

// WorkerSnapshot is the registry as one pipeline read it.
type WorkerSnapshot struct {
	Now        time.Time         // Redis TIME
	IDs        []string          // members of workers
	Heartbeats map[string]string // id -> heartbeat value
	Intervals  map[string]string // id -> resque-go heartbeat interval (s)
}

// Workers reads the worker set, heartbeats, our interval records and the
// server time in one round trip.
func (c *Client) Workers(ctx context.Context) (WorkerSnapshot, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return WorkerSnapshot{}, fmt.Errorf("rdb: workers: %w", err)
	}
	defer conn.Close()
	k := c.keys
	for _, cmd := range [][]any{{"TIME"}, {"SMEMBERS", k.Workers()}, {"HGETALL", k.Heartbeats()}, {"HGETALL", k.WorkerIntervals()}} {
		if err := conn.Send(cmd[0].(string), cmd[1:]...); err != nil {
			return WorkerSnapshot{}, fmt.Errorf("rdb: workers: %w", err)
		}
	}
	if err := conn.Flush(); err != nil {
		return WorkerSnapshot{}, fmt.Errorf("rdb: workers: %w", err)
	}
	var s WorkerSnapshot
	t, err := redis.Int64s(redis.ReceiveContext(conn, ctx))
	if err != nil || len(t) != 2 {
		return s, fmt.Errorf("rdb: workers: time: %w", err)
	}
	s.Now = time.Unix(t[0], t[1]*1000)
	if s.IDs, err = redis.Strings(redis.ReceiveContext(conn, ctx)); err != nil {
		return s, fmt.Errorf("rdb: workers: %w", err)
	}
	if s.Heartbeats, err = redis.StringMap(redis.ReceiveContext(conn, ctx)); err != nil {
		return s, fmt.Errorf("rdb: workers: %w", err)
	}
	if s.Intervals, err = redis.StringMap(redis.ReceiveContext(conn, ctx)); err != nil {
		return s, fmt.Errorf("rdb: workers: %w", err)
	}
	return s, nil
}

// WorkerRecord returns the raw worker:<id> value, or nil when idle.
func (c *Client) WorkerRecord(ctx context.Context, workerID string) ([]byte, error) {
	v, err := redis.Bytes(c.do(ctx, "GET", c.keys.Worker(workerID)))
	if err == redis.ErrNil {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rdb: get worker %q: %w", workerID, err)
	}
	return v, nil
}

// AcquirePruneLock takes the lock Ruby Resque uses around pruning (SET NX EX).
func (c *Client) AcquirePruneLock(ctx context.Context, owner string, ttl time.Duration) (bool, error) {
	secs := int(ttl.Seconds())
	if secs < 1 {
		secs = 1
	}
	v, err := c.do(ctx, "SET", c.keys.PruneLock(), owner, "EX", secs, "NX")
	if err != nil {
		return false, fmt.Errorf("rdb: prune lock: %w", err)
	}
	return v != nil, nil
}

// PruneArgs describes a dead worker to prune.
type PruneArgs struct {
	WorkerID  string
	Heartbeat string          // the value judged dead ("" = none)
	Record    []byte          // the worker:<id> value read (nil = idle)
	Queue     string          // from Record
	Source    protocol.Source // from Record: where the job goes back
	Payload   []byte          // from Record
	// MaxRecoveries is how often the same payload is requeued before it is
	// recorded as failed instead; 0 always fails (Ruby's behaviour).
	MaxRecoveries int
	Failure       []byte // failed entry used when the job fails
	Host          string // for queuestat
	// End is what the held job settles (its caps' slots, its event and,
	// when it is recorded as failed, its dependants and group).
	End JobEnd
}

// PruneResult says what Prune did.
type PruneResult string

// Prune results.
const (
	PruneGone     PruneResult = "gone"
	PruneAlive    PruneResult = "alive"
	PruneIdle     PruneResult = "idle"
	PruneRequeued PruneResult = "requeued"
	PruneFailed   PruneResult = "failed"
)

// recoveryTTL bounds how long a recovery count is remembered.
const recoveryTTL = 7 * 24 * time.Hour

// Prune unregisters a dead worker and recovers its job in one step, only if
// its heartbeat and record are still what the caller saw.
func (c *Client) Prune(ctx context.Context, a PruneArgs) (PruneResult, error) {
	k := c.keys
	sum := sha1.Sum(a.Payload)
	src := a.Source
	if src.Queue == "" {
		src = protocol.QueueSource(a.Queue)
	}
	queueKey, recKey := k.SourceKey(src), k.Recoveries(hex.EncodeToString(sum[:]))
	if a.Record == nil {
		queueKey, recKey = k.Workers(), k.Workers() // unused by the script
	}
	stateKey, deferredKey, unique := k.Workers(), k.Workers(), ""
	if u, ok, _ := protocol.ParseUnique(a.Payload); ok && a.Record != nil {
		stateKey, deferredKey, unique = k.UniqueState(u.UID), k.UniqueDeferred(u.UID), "1"
	}
	ring, state, source, static := k.StaticWakeKeys(src)
	if !static || a.Record == nil {
		ring, state, source = k.Workers(), k.Workers(), "" // unused by the script
	}
	keys := []any{k.Workers(), k.Worker(a.WorkerID), k.WorkerStarted(a.WorkerID),
		k.StatProcessedWorker(a.WorkerID), k.StatFailedWorker(a.WorkerID),
		k.Heartbeats(), k.WorkerIntervals(), queueKey, recKey, k.Failed(),
		k.QueueStat(a.Host, protocol.QueueStatFailed, a.Queue), k.ClaimSeqs(), stateKey, deferredKey,
		ring, state}
	args := []any{a.WorkerID, a.Heartbeat, a.Record, a.Payload, a.MaxRecoveries, a.Failure,
		int(recoveryTTL.Seconds()), unique, source}
	if a.Record != nil {
		end := a.End
		if len(end.Limits) > 0 && end.Seq == "" {
			// the holds are named by the claim's sequence, which the
			// script checks has not moved (the record it reads)
			seq, err := redis.String(c.do(ctx, "HGET", k.ClaimSeqs(), a.WorkerID))
			if err != nil && !errors.Is(err, redis.ErrNil) {
				return "", fmt.Errorf("rdb: prune %q: %w", a.WorkerID, err)
			}
			end.Seq = seq
		}
		if end.Queue == "" {
			end.Queue = a.Queue
		}
		keys, args = c.appendEnds(keys, args, a.WorkerID, end)
	}
	res, err := redis.String(c.eval(ctx, c.prune, scriptKeysArgs(keys, args)...))
	if err != nil {
		return "", fmt.Errorf("rdb: prune %q: %w", a.WorkerID, err)
	}
	return PruneResult(res), nil
}
