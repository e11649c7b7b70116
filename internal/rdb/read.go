package rdb

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"
)

// Int reads a counter (0 when absent).
func (c *Client) Int(ctx context.Context, key string) (int64, error) {
	n, err := redis.Int64(c.do(ctx, "GET", key))
	if err == redis.ErrNil {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("rdb: get %q: %w", key, err)
	}
	return n, nil
}

// List returns items start..stop of a list.
func (c *Client) List(ctx context.Context, key string, start, stop int) ([][]byte, error) {
	v, err := redis.ByteSlices(c.do(ctx, "LRANGE", key, start, stop))
	if err != nil {
		return nil, fmt.Errorf("rdb: lrange %q: %w", key, err)
	}
	return v, nil
}

// Len returns a list's length.
func (c *Client) Len(ctx context.Context, key string) (int64, error) {
	n, err := redis.Int64(c.do(ctx, "LLEN", key))
	if err != nil {
		return 0, fmt.Errorf("rdb: llen %q: %w", key, err)
	}
	return n, nil
}

// ScanKeys lists the keys matching pattern with SCAN (never KEYS).
func (c *Client) ScanKeys(ctx context.Context, pattern string) ([]string, error) {
	var out []string
	cursor := "0"
	for {
		v, err := redis.Values(c.do(ctx, "SCAN", cursor, "MATCH", pattern, "COUNT", 1000))
		if err != nil {
			return nil, fmt.Errorf("rdb: scan %q: %w", pattern, err)
		}
		cursor, _ = redis.String(v[0], nil)
		keys, _ := redis.Strings(v[1], nil)
		out = append(out, keys...)
		if cursor == "0" {
			return out, nil
		}
	}
}
