package rdb

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/gomodule/redigo/redis"
)

// SetPoolRecord writes the status record of the pool manager host/pid,
// expiring after ttl (PX, so sub-second test intervals keep their ratio).
func (c *Client) SetPoolRecord(ctx context.Context, host string, pid int, value []byte, ttl time.Duration) error {
	return c.setRecord(ctx, "pool record", c.keys.PoolManager(host, pid), value, ttl)
}

// DeletePoolRecord removes the status record of the pool manager host/pid.
func (c *Client) DeletePoolRecord(ctx context.Context, host string, pid int) error {
	return c.deleteRecord(ctx, "pool record", c.keys.PoolManager(host, pid))
}

// PoolRecords returns the value of every pool status record, by key, sorted
// by key: a SCAN, then the GETs in one pipeline. A record that expired
// between the two is left out.
func (c *Client) PoolRecords(ctx context.Context) (keys []string, values [][]byte, err error) {
	found, err := c.ScanKeys(ctx, c.keys.PoolManagerPattern())
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(found)
	vals := make([][]byte, len(found))
	steps := make([]pipeStep, len(found))
	for i, key := range found {
		steps[i] = pipeStep{[]any{"GET", key}, func(v any) error {
			if v == nil {
				return nil
			}
			b, err := redis.Bytes(v, nil)
			vals[i] = b
			return err
		}}
	}
	if err := c.pipeline(ctx, steps); err != nil {
		return nil, nil, fmt.Errorf("rdb: read pool records: %w", err)
	}
	for i, v := range vals {
		if v != nil {
			keys, values = append(keys, found[i]), append(values, v)
		}
	}
	return keys, values, nil
}
