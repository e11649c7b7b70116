package rdb

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gomodule/redigo/redis"
)

// Queue administration scripts. A redis.Script holds only its source and
// hash, so sharing these is sharing constants.
var (
	queueRemoveScript = loadScript("queue_remove.lua", 1)
	queueClearScript  = loadScript("queue_clear.lua", 1)
)

// ErrBadMatch is wrapped by RemoveJobs' errors about its JobMatch: no
// class, or args that are not a JSON array or object.
var ErrBadMatch = errors.New("rdb: bad job match")

// JobMatch selects the jobs RemoveJobs deletes. Class is required; the
// other fields narrow it.
type JobMatch struct {
	// Class is the payload's "class", compared exactly.
	Class string
	// ID, when not empty, is the payload's "id", compared exactly.
	ID string
	// Args, when not nil, is a JSON array or object. An array matches a job
	// whose args array equals it. An object matches a job whose args object
	// holds every key of it with an equal value (resque-v3 writes args as
	// an object), or whose args array is that one object (php-resque wraps
	// its assoc array: "args":[{...}]). Values compare as JSON values:
	// numbers as numbers (as doubles: integers beyond 2^53 may match their
	// neighbours), and an empty array equals an empty object.
	Args []byte
}

// RemoveProgress is reported after every chunk.
type RemoveProgress struct {
	// Total is the queue's length when the removal began.
	Total int64
	// Examined counts the jobs looked at so far; it stops short of Total
	// by the jobs workers took meanwhile.
	Examined int64
	// Removed counts the jobs deleted so far.
	Removed int64
}

// RemoveOptions tunes RemoveJobs. Zero values mean the defaults.
type RemoveOptions struct {
	// Chunk is how many jobs one script call examines (it blocks Redis for
	// that long: 0.6 to 1.7 ms per 500 jobs measured, more for big
	// payloads); default 500.
	Chunk int
	// Progress, when set, is called after every chunk.
	Progress func(RemoveProgress)
}

// DefaultRemoveChunk is RemoveOptions.Chunk's default.
const DefaultRemoveChunk = 500

// args checks m and returns the script's args mode and JSON.
func (m JobMatch) args() (mode string, js []byte, err error) {
	if m.Class == "" {
		return "", nil, fmt.Errorf("%w: no class", ErrBadMatch)
	}
	if m.Args == nil {
		return "", nil, nil
	}
	a := bytes.TrimSpace(m.Args)
	if !json.Valid(a) || len(a) == 0 || (a[0] != '[' && a[0] != '{') {
		return "", nil, fmt.Errorf("%w: args %q: want a JSON array or object", ErrBadMatch, clipBytes(m.Args, 60))
	}
	if a[0] == '[' {
		return "array", a, nil
	}
	return "object", a, nil
}

func clipBytes(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// RemoveJobs deletes the jobs of queue that match m and returns how many it
// deleted. It walks the queue in chunks, one atomic script call each
// (scripts/queue_remove.lua states the invariant), so workers and
// producers go on meanwhile: the jobs deleted are the matching ones that
// were in the queue when it began and that no worker took meanwhile; a job
// pushed meanwhile, or one that does not match, is never deleted or moved.
// On an error the jobs removed so far stay removed; the count is returned
// with the error.
func (c *Client) RemoveJobs(ctx context.Context, queue string, m JobMatch, opt RemoveOptions) (int64, error) {
	mode, args, err := m.args()
	if err != nil {
		return 0, err
	}
	if opt.Chunk <= 0 {
		opt.Chunk = DefaultRemoveChunk
	}
	tomb, err := tombstone()
	if err != nil {
		return 0, err
	}
	key := c.keys.Queue(queue)
	var p RemoveProgress
	boundary := int64(-1)
	var nu, ne int64
	var window [][]byte
	for {
		argv := []any{key, tomb, opt.Chunk, boundary, m.Class, m.ID, mode, args, nu, ne}
		for _, w := range window {
			argv = append(argv, w)
		}
		v, err := redis.Values(c.eval(ctx, queueRemoveScript, argv...))
		if err != nil {
			return p.Removed, fmt.Errorf("rdb: remove from %q: %w", queue, err)
		}
		r, err := parseRemoveReply(v)
		if err != nil {
			return p.Removed, fmt.Errorf("rdb: remove from %q: %w", queue, err)
		}
		if boundary < 0 {
			p.Total = r.boundary + r.examined // the first call starts at LLEN
		}
		p.Examined += r.examined
		p.Removed += r.removed
		if opt.Progress != nil {
			opt.Progress(p)
		}
		if !r.more {
			return p.Removed, nil
		}
		boundary, nu, ne, window = r.boundary, r.nu, r.ne, r.window
		if err := ctx.Err(); err != nil {
			return p.Removed, fmt.Errorf("rdb: remove from %q: %w", queue, err)
		}
	}
}

type removeReply struct {
	more                                bool
	boundary, removed, examined, nu, ne int64
	window                              [][]byte
}

func parseRemoveReply(v []any) (removeReply, error) {
	var r removeReply
	if len(v) < 6 {
		return r, fmt.Errorf("script reply has %d values, want at least 6", len(v))
	}
	nums := make([]int64, 6)
	for i := range nums {
		n, err := redis.Int64(v[i], nil)
		if err != nil {
			return r, fmt.Errorf("script reply value %d: %w", i, err)
		}
		nums[i] = n
	}
	r.more, r.boundary, r.removed, r.examined, r.nu, r.ne = nums[0] == 1, nums[1], nums[2], nums[3], nums[4], nums[5]
	if int64(len(v)-6) != r.nu+r.ne {
		return r, fmt.Errorf("script reply has %d window items, want %d", len(v)-6, r.nu+r.ne)
	}
	for _, x := range v[6:] {
		b, err := redis.Bytes(x, nil)
		if err != nil {
			return r, fmt.Errorf("script reply window: %w", err)
		}
		r.window = append(r.window, b)
	}
	return r, nil
}

// tombstone is a list item no payload can equal: NUL bytes never occur in
// JSON text, and the random part keeps two removals apart.
func tombstone() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("rdb: tombstone: %w", err)
	}
	return "\x00resque-go:removing:" + hex.EncodeToString(b[:]) + "\x00", nil
}

// ClearQueue deletes every job of queue and returns how many there were;
// the queue stays in the queues set.
func (c *Client) ClearQueue(ctx context.Context, queue string) (int64, error) {
	n, err := redis.Int64(c.eval(ctx, queueClearScript, c.keys.Queue(queue)))
	if err != nil {
		return 0, fmt.Errorf("rdb: clear %q: %w", queue, err)
	}
	return n, nil
}

// QueueLens returns the length of each queue in queues, in one round trip.
// A queue key of another type reads as empty and is named in a
// *BadKeysError returned with the lengths.
func (c *Client) QueueLens(ctx context.Context, queues []string) ([]int64, error) {
	keys := make([]string, len(queues))
	for i, q := range queues {
		keys[i] = c.keys.Queue(q)
	}
	lens, _, err := c.BatchRead(ctx, keys, nil)
	if _, ok := BadKeys(err); ok {
		return lens, err
	}
	if err != nil {
		return nil, err
	}
	return lens, nil
}
