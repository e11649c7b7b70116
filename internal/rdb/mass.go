package rdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Producer scripts of mass queues (docs/protocol.md#mass-queues), as resqu-client runs them;
// immutable once built.
var (
	massBatchInitScript   = loadScript("mass_batch_init.lua", 1)
	massBatchCommitScript = loadScript("mass_batch_commit.lua", 4)
	massBatchCreateScript = loadScript("mass_batch_create.lua", 2)
	massBatchPushScript   = loadScript("mass_batch_push.lua", 3)
)

// Errors of batch building.
var (
	// ErrBatchExists: the first push found the batch's list already there.
	ErrBatchExists = errors.New("rdb: batch list already exists")
	// ErrBatchMissing: the uncommitted list is gone (never pushed to,
	// expired, or already committed).
	ErrBatchMissing = errors.New("rdb: uncommitted batch does not exist (never pushed to, expired, or committed)")
	// ErrBatchCommitted: committed:<id> already exists.
	ErrBatchCommitted = errors.New("rdb: batch is already committed")
)

// EnqueueStatic pushes a static mass payload to unassigned (LPUSH, as
// resqu-client does) and returns the list's new length.
func (c *Client) EnqueueStatic(ctx context.Context, payload []byte) (int64, error) {
	n, err := redis.Int64(c.do(ctx, "LPUSH", c.keys.Unassigned(), payload))
	if err != nil {
		return 0, fmt.Errorf("rdb: enqueue static: %w", err)
	}
	return n, nil
}

// BatchInit is a batch's first push: it creates uncommitted:<id> with the
// payload unless the key exists (ErrBatchExists), then sets its time to
// live.
func (c *Client) BatchInit(ctx context.Context, id string, payload []byte, ttl time.Duration) error {
	key := c.keys.Uncommitted(id)
	v, err := c.eval(ctx, massBatchInitScript, key, payload)
	if err != nil {
		return fmt.Errorf("rdb: batch %q: first push: %w", id, err)
	}
	if v == nil {
		return fmt.Errorf("%w: %s", ErrBatchExists, id)
	}
	if _, err := c.do(ctx, "EXPIRE", key, ttlSeconds(ttl)); err != nil {
		return fmt.Errorf("rdb: batch %q: expire: %w", id, err)
	}
	return nil
}

// BatchCreate reserves a batch id for a producer whose jobs come later, by
// id (`mass batch create`): ErrBatchExists when it is taken.
func (c *Client) BatchCreate(ctx context.Context, id string, ttl time.Duration) error {
	v, err := c.eval(ctx, massBatchCreateScript, c.keys.Uncommitted(id), c.keys.BatchCreated(id), ttlSeconds(ttl))
	if err != nil {
		return fmt.Errorf("rdb: batch %q: create: %w", id, err)
	}
	if v == nil {
		return fmt.Errorf("%w: %s", ErrBatchExists, id)
	}
	return nil
}

// BatchPushMode is what a checked push (BatchPushChecked) expects of its
// batch.
type BatchPushMode string

// Checked push modes (see mass_batch_push.lua).
const (
	// BatchPushNew is a batch's first push: ErrBatchExists when its list
	// (or a reservation of its id) exists.
	BatchPushNew BatchPushMode = "new"
	// BatchPushOpen is a push by id: to its list, or the first push of a
	// batch BatchCreate reserved; ErrBatchMissing when neither exists
	// (expired, committed, or never created).
	BatchPushOpen BatchPushMode = "open"
	// BatchPushList is a push to the list, which must exist
	// (ErrBatchMissing).
	BatchPushList BatchPushMode = "push"
)

// BatchJob is a payload to push to a batch, with its unique job's uid (""
// for a job that is not unique).
type BatchJob struct {
	UID     string
	Payload []byte
}

// BatchPushed is what a checked push did.
type BatchPushed struct {
	// Pushed is how many of the jobs were pushed, in order: all of them,
	// or those before the refused one.
	Pushed int
	// Refused is the uid of job Pushed when it was refused (queued or
	// running, or repeated in the push); "" when every job was pushed.
	Refused string
	// Len is the list's length after the push (0 when nothing was pushed).
	Len int64
	// HasUIDs: the batch holds unique jobs; its later pushes must come
	// here too, to keep their states alive.
	HasUIDs bool
}

// BatchPushChecked pushes jobs to an uncommitted batch in one step,
// checking its unique jobs (docs/protocol.md#unique-jobs): a unique job is pushed only
// when its uid is free, and its state becomes queued for stateTTL (more
// than ttl, the list's time to live: an abandoned batch frees its uids);
// the push stops at the first refused job. The states of the batch's
// earlier unique jobs are renewed when they would expire before the list;
// the commit makes them permanent. Jobs are pushed one LPUSH each: keep
// the pushes to a few hundred jobs.
func (c *Client) BatchPushChecked(ctx context.Context, mode BatchPushMode, id string, jobs []BatchJob, ttl, stateTTL time.Duration, now time.Time) (BatchPushed, error) {
	k := c.keys
	args := make([]any, 0, 8+2*len(jobs))
	args = append(args, k.Uncommitted(id), k.BatchCreated(id), k.BatchUIDs(id),
		string(mode), ttlSeconds(ttl), max(ttlSeconds(stateTTL), ttlSeconds(ttl)+1), now.Unix(), k.UniquePrefix())
	for _, j := range jobs {
		args = append(args, j.UID, j.Payload)
	}
	v, err := redis.Int64s(c.eval(ctx, massBatchPushScript, args...))
	if err == nil && len(v) != 4 {
		err = errors.New("bad reply")
	}
	if err != nil {
		return BatchPushed{}, fmt.Errorf("rdb: batch %q: push: %w", id, err)
	}
	switch v[0] {
	case -1:
		return BatchPushed{}, fmt.Errorf("%w: %s", ErrBatchExists, id)
	case -2:
		return BatchPushed{}, fmt.Errorf("%w: %s", ErrBatchMissing, id)
	}
	r := BatchPushed{Pushed: len(jobs), Len: v[1], HasUIDs: v[3] == 1}
	if v[0] == 0 {
		r.Pushed = int(v[2]) - 1
		r.Refused = jobs[r.Pushed].UID
	}
	return r, nil
}

// BatchPush pushes payloads to an existing uncommitted batch (LPUSHX, one
// command for all of them, the same list as one LPUSHX each) and refreshes
// its time to live, in one round trip. It returns the list's length, or
// ErrBatchMissing when the list does not exist.
func (c *Client) BatchPush(ctx context.Context, id string, payloads [][]byte, ttl time.Duration) (int64, error) {
	if len(payloads) == 0 {
		return 0, nil
	}
	key := c.keys.Uncommitted(id)
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return 0, fmt.Errorf("rdb: batch %q: push: %w", id, err)
	}
	defer conn.Close()
	args := make([]any, 0, 1+len(payloads))
	args = append(args, key)
	for _, p := range payloads {
		args = append(args, p)
	}
	if err := conn.Send("LPUSHX", args...); err != nil {
		return 0, fmt.Errorf("rdb: batch %q: push: %w", id, err)
	}
	if err := conn.Send("EXPIRE", key, ttlSeconds(ttl)); err != nil {
		return 0, fmt.Errorf("rdb: batch %q: push: %w", id, err)
	}
	if err := conn.Flush(); err != nil {
		return 0, fmt.Errorf("rdb: batch %q: push: %w", id, err)
	}
	n, err := redis.Int64(conn.Receive())
	if _, eerr := conn.Receive(); err == nil {
		err = eerr
	}
	if err != nil {
		return 0, fmt.Errorf("rdb: batch %q: push: %w", id, err)
	}
	if n == 0 {
		return 0, fmt.Errorf("%w: %s", ErrBatchMissing, id)
	}
	return n, nil
}

// BatchCommit commits a batch (RENAMENX to committed:<id>, PERSIST, LPUSH
// committed <id> in one step; the queued states of its unique jobs become
// permanent in the same step). Errors: ErrBatchMissing, ErrBatchCommitted.
func (c *Client) BatchCommit(ctx context.Context, id string) error {
	k := c.keys
	n, err := redis.Int64(c.eval(ctx, massBatchCommitScript, k.CommittedList(), k.Committed(id), k.Uncommitted(id), k.BatchUIDs(id),
		id, k.UniquePrefix()))
	if err != nil {
		return fmt.Errorf("rdb: batch %q: commit: %w", id, err)
	}
	switch n {
	case -1:
		return fmt.Errorf("%w: %s", ErrBatchMissing, id)
	case -2:
		return fmt.Errorf("%w: %s", ErrBatchCommitted, id)
	}
	return nil
}

// ttlSeconds is a time to live in whole seconds, at least 1.
func ttlSeconds(d time.Duration) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// RouteOverrides returns the pools src:<source>:cfg:<job> and
// src:<source>:cfg:default name ("" when unset).
func (c *Client) RouteOverrides(ctx context.Context, source, job string) (forJob, forSource string, err error) {
	k := c.keys
	v, err := redis.Strings(c.do(ctx, "MGET", k.SourceRoute(source, job), k.SourceRoute(source, "default")))
	if err != nil || len(v) != 2 {
		return "", "", fmt.Errorf("rdb: routes of %s: %w", source, errOr(err, "bad reply"))
	}
	return v[0], v[1], nil
}

// SetRoute sets src:<source>:cfg:<job> to pool; an empty pool deletes it.
func (c *Client) SetRoute(ctx context.Context, source, job, pool string) error {
	var err error
	if pool == "" {
		_, err = c.do(ctx, "DEL", c.keys.SourceRoute(source, job))
	} else {
		_, err = c.do(ctx, "SET", c.keys.SourceRoute(source, job), pool)
	}
	if err != nil {
		return fmt.Errorf("rdb: route %s/%s: %w", source, job, err)
	}
	return nil
}

// RouteOverride is one src:<source>:cfg:<job> key.
type RouteOverride struct {
	Source, Job, Pool string
}

// ListRoutes returns every src:<source>:cfg:<job> override (SCAN).
func (c *Client) ListRoutes(ctx context.Context) ([]RouteOverride, error) {
	keys, err := c.ScanKeys(ctx, c.keys.SourceRoutePattern())
	if err != nil {
		return nil, err
	}
	var out []RouteOverride
	for len(keys) > 0 {
		n := min(len(keys), 500)
		args := make([]any, n)
		for i, k := range keys[:n] {
			args[i] = k
		}
		v, err := redis.Strings(c.do(ctx, "MGET", args...))
		if err != nil {
			return nil, fmt.Errorf("rdb: routes: %w", err)
		}
		for i, key := range keys[:n] {
			if s, j, ok := c.keys.ParseSourceRoute(key); ok && v[i] != "" {
				out = append(out, RouteOverride{Source: s, Job: j, Pool: v[i]})
			}
		}
		keys = keys[n:]
	}
	return out, nil
}
