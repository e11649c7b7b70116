// Package rdb is resque-go's only Redis client code: connection handling and
// every multi-key state change as an embedded Lua script.
package rdb

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

//go:embed scripts/*.lua
var scriptFS embed.FS

func loadScript(name string, keys int) *redis.Script {
	return redis.NewScript(keys, scriptSource(name))
}

func scriptSource(name string) string {
	src, err := scriptFS.ReadFile("scripts/" + name)
	if err != nil {
		panic("rdb: missing embedded script " + name) // a build error, not a runtime one
	}
	return string(src)
}

// scriptBody is a script written as a local function plus a last line
// "return <fn>(KEYS, ARGV)", without that line, for composing scripts.
func scriptBody(name, fn string) string {
	src := strings.TrimRight(scriptSource(name), "\n")
	last := "return " + fn + "(KEYS, ARGV)"
	if !strings.HasSuffix(src, last) {
		panic("rdb: script " + name + " does not end with " + last)
	}
	return strings.TrimSuffix(src, last)
}

// Options configures a Client. Zero values mean the documented defaults.
type Options struct {
	// URL is redis://[:password@]host:port[/db], rediss://..., or a bare
	// host:port (php-resque's REDIS_BACKEND form). Default 127.0.0.1:6379.
	URL string
	// Namespace is the key prefix; default "resque".
	Namespace string
	// MaxIdle connections kept in the pool; default 16.
	MaxIdle int
	// DialTimeout defaults to 5 s; ReadTimeout (for non-blocking commands) to 30 s.
	DialTimeout time.Duration
	ReadTimeout time.Duration
}

// Client talks to one Redis server within one namespace.
type Client struct {
	pool    *redis.Pool
	keys    protocol.Keys
	timeout time.Duration

	claim, finish, finishClaim, requeue, register, unregister, prune *redis.Script
	delayed                                                          delayedScripts
	failed                                                           failedScripts
}

// ErrNotOwned is returned when a slot's worker:<id> record is gone: the job
// was recovered by a pruner (or an earlier attempt of the same call ran).
var ErrNotOwned = errors.New("rdb: worker no longer holds the job")

// NormalizeURL turns the accepted address forms into a redis:// URL.
func NormalizeURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "redis://127.0.0.1:6379", nil
	}
	if !strings.Contains(raw, "://") {
		raw = "redis://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("rdb: redis url %q: %w", raw, err)
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return "", fmt.Errorf("rdb: redis url %q: scheme must be redis or rediss", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("rdb: redis url %q: no host", raw)
	}
	if u.Port() == "" && !strings.HasSuffix(u.Host, ":") {
		u.Host += ":6379"
	}
	host, port, err := net.SplitHostPort(u.Host)
	if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("rdb: redis url %q: want host:port with a port from 1 to 65535", raw)
	}
	return u.String(), nil
}

// New returns a client; it does not connect until first used.
func New(opt Options) (*Client, error) {
	addr, err := NormalizeURL(opt.URL)
	if err != nil {
		return nil, err
	}
	if opt.MaxIdle <= 0 {
		opt.MaxIdle = 16
	}
	if opt.DialTimeout <= 0 {
		opt.DialTimeout = 5 * time.Second
	}
	if opt.ReadTimeout <= 0 {
		opt.ReadTimeout = 30 * time.Second
	}
	pool := &redis.Pool{
		MaxIdle:     opt.MaxIdle,
		IdleTimeout: 4 * time.Minute,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialURLContext(ctx, addr,
				redis.DialConnectTimeout(opt.DialTimeout),
				redis.DialReadTimeout(opt.ReadTimeout),
				redis.DialWriteTimeout(opt.ReadTimeout))
		},
		TestOnBorrow: func(c redis.Conn, t time.Time) error {
			if time.Since(t) < time.Minute {
				return nil
			}
			_, err := c.Do("PING")
			return err
		},
	}
	return &Client{
		pool:    pool,
		keys:    protocol.NewKeys(opt.Namespace),
		timeout: opt.ReadTimeout,
		claim:   loadScript("claim.lua", -1),
		finish:  loadScript("finish.lua", -1),
		finishClaim: redis.NewScript(-1, scriptBody("finish.lua", "finish")+scriptBody("claim.lua", "claim")+
			scriptSource("finish_claim.lua")),
		requeue:    loadScript("requeue.lua", 2),
		register:   loadScript("register.lua", 4),
		unregister: loadScript("unregister.lua", 8),
		prune:      loadScript("prune.lua", 12),
	}, nil
}

// Keys returns the client's key builder.
func (c *Client) Keys() protocol.Keys { return c.keys }

// Close closes the connection pool.
func (c *Client) Close() error { return c.pool.Close() }

// do runs one command on a pooled connection.
func (c *Client) do(ctx context.Context, cmd string, args ...any) (any, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return redis.DoContext(conn, ctx, cmd, args...)
}

// eval runs a script on a pooled connection (EVALSHA, falling back to EVAL).
func (c *Client) eval(ctx context.Context, s *redis.Script, keysAndArgs ...any) (any, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return s.DoContext(ctx, conn, keysAndArgs...)
}

// evalHot runs a script on the per-job path (claim, finish). It does not
// watch ctx for cancellation (that costs a goroutine per call in redigo);
// the connection's read and write timeouts bound it instead. Callers pass
// contexts that are not cancelled mid-call.
func (c *Client) evalHot(ctx context.Context, s *redis.Script, keysAndArgs ...any) (any, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return s.Do(conn, keysAndArgs...)
}

// Ping checks the server answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.do(ctx, "PING")
	if err != nil {
		return fmt.Errorf("rdb: ping: %w", err)
	}
	return nil
}

// Time returns the server's clock (Redis TIME), the clock heartbeats use.
func (c *Client) Time(ctx context.Context) (time.Time, error) {
	v, err := redis.Int64s(c.do(ctx, "TIME"))
	if err != nil || len(v) != 2 {
		return time.Time{}, fmt.Errorf("rdb: time: %w", err)
	}
	return time.Unix(v[0], v[1]*1000), nil
}

// Do runs an arbitrary command (for tools and tests).
func (c *Client) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	return c.do(ctx, cmd, args...)
}

// IsTransient reports whether err is worth retrying: a network or timeout
// error, or a server reply saying the server is not ready (LOADING, BUSY,
// READONLY...). Error replies caused by the command itself are not.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, ErrNotOwned) || errors.Is(err, ErrStillBusy) {
		return false
	}
	var re redis.Error
	if errors.As(err, &re) {
		msg := string(re)
		for _, p := range []string{"LOADING", "BUSY", "READONLY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "NOSCRIPT"} {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return false
	}
	return true
}
