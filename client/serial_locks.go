package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/resque-go/resque-go/internal/rdb"
)

// SerialLock is the lock of a serial queue (queuedata:<q>:lock): taken
// with the claim of one of its jobs, refreshed while that job runs,
// released with its end, lost when its holder dies and it expires.
type SerialLock struct {
	Queue string
	// Token is the holding slot's random token.
	Token string
	// TTL is the time the lock has left; negative when it has no expiry
	// (set by hand: no holder would ever lose it).
	TTL time.Duration
	// Holders are the registered workers running a job of Queue (a
	// serial queue runs one at a time, so one; none when the holder died
	// or its record is gone: the lock is stale and lasts until it
	// expires).
	Holders []SerialHolder
	// Problem says why the lock cannot be read (its key holds another
	// type, written by hand); the rest is then empty.
	Problem string
}

// SerialHolder is a worker running a job of a locked serial queue.
type SerialHolder struct {
	Worker string
	Class  string
	// Since is when it started the job (zero when its record says not).
	Since time.Time
}

// ErrLockChanged: the lock is no longer held by the token given (released,
// expired, or taken again by another job meanwhile); nothing was done.
var ErrLockChanged = errors.New("client: the serial lock is not held by that token")

// SerialLocks lists the held locks of the queues of the queues set, sorted
// by queue, with the workers running a job of each: two round trips for
// the locks whatever the number of queues, and those of Workers when one
// is held.
func (c *Client) SerialLocks(ctx context.Context) ([]SerialLock, error) {
	qs, err := c.rdb.KnownQueues(ctx)
	if err != nil {
		return nil, wrap("serial locks", err)
	}
	slices.Sort(qs)
	states, err := c.rdb.SerialLocks(ctx, qs)
	if err != nil {
		return nil, wrap("serial locks", err)
	}
	if len(states) == 0 {
		return []SerialLock{}, nil
	}
	ws, err := c.Workers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SerialLock, len(states))
	for i, s := range states {
		l := SerialLock{Queue: s.Queue, Token: s.Token, TTL: s.TTL}
		if s.Type != "" {
			l.Problem = "the key " + c.rdb.Keys().SerialLock(s.Queue) + " holds a " + s.Type + ", not a lock"
		}
		for _, w := range ws {
			if w.Job != nil && w.Job.Queue == s.Queue {
				l.Holders = append(l.Holders, SerialHolder{Worker: w.ID, Class: w.Job.Class, Since: w.RunAt})
			}
		}
		out[i] = l
	}
	slices.SortFunc(out, func(a, b SerialLock) int { return cmp.Compare(a.Queue, b.Queue) })
	return out, nil
}

// ReleaseSerialLock deletes queue's lock if token (read by SerialLocks)
// still holds it, so another job of the queue can start: for a lock whose
// holder is gone and which would otherwise last until it expires (or for
// ever, without an expiry). Releasing the lock of a job still running lets
// a second job of the queue run beside it. ErrLockChanged when token no
// longer holds it; ErrInvalid when its key holds another type.
func (c *Client) ReleaseSerialLock(ctx context.Context, queue, token string) error {
	if queue == "" || token == "" {
		return invalidf("ReleaseSerialLock: a queue and a token are required")
	}
	ok, err := c.rdb.ReleaseSerialLock(ctx, queue, token)
	switch {
	case errors.Is(err, rdb.ErrLockWrongType):
		return adminErr("release serial lock", err, ErrInvalid)
	case err != nil:
		return wrap("release serial lock", err)
	case !ok:
		return fmt.Errorf("%w: queue %q", ErrLockChanged, queue)
	}
	return nil
}

// QueuesPaused reports, for each of queues, whether it is paused
// (PauseQueue, or the Ruby plugins' pause key): one EXISTS of them all,
// and a second round trip only when some are.
func (c *Client) QueuesPaused(ctx context.Context, queues []string) ([]bool, error) {
	p, err := c.rdb.QueuesPaused(ctx, queues)
	return p, wrap("queues paused", err)
}
