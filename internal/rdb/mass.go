package rdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Producer scripts of mass queues (massqueue.md), as resqu-client runs them;
// immutable once built.
var (
	massBatchInitScript   = loadScript("mass_batch_init.lua", 1)
	massBatchCommitScript = loadScript("mass_batch_commit.lua", 3)
	massBatchCreateScript = loadScript("mass_batch_create.lua", 2)
	massBatchOpenScript   = loadScript("mass_batch_open_push.lua", 2)
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

// BatchOpenPush pushes payloads to a batch known by its id: to its list,
// or as the first push of a batch BatchCreate reserved. ErrBatchMissing
// when neither exists (expired, committed, or never created). Payloads
// are pushed one LPUSH each, in one script: keep them few (the first push).
func (c *Client) BatchOpenPush(ctx context.Context, id string, payloads [][]byte, ttl time.Duration) (int64, error) {
	args := make([]any, 0, 3+len(payloads))
	args = append(args, c.keys.Uncommitted(id), c.keys.BatchCreated(id), ttlSeconds(ttl))
	for _, p := range payloads {
		args = append(args, p)
	}
	v, err := c.eval(ctx, massBatchOpenScript, args...)
	if err != nil {
		return 0, fmt.Errorf("rdb: batch %q: push: %w", id, err)
	}
	if v == nil {
		return 0, fmt.Errorf("%w: %s", ErrBatchMissing, id)
	}
	return redis.Int64(v, nil)
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
// committed <id> in one step). Errors: ErrBatchMissing, ErrBatchCommitted.
func (c *Client) BatchCommit(ctx context.Context, id string) error {
	k := c.keys
	n, err := redis.Int64(c.eval(ctx, massBatchCommitScript, k.CommittedList(), k.Committed(id), k.Uncommitted(id), id))
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
