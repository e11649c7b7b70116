package rdb

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Lease modes (limits_lease.lua).
const (
	// LeaseTake takes a cap's lease when it has room for every member
	// and no job is parked; else it shrinks as LeaseShrink.
	LeaseTake = "a"
	// LeaseRenew moves a held lease's end on; it is kept only if every
	// member was still there and no job is parked.
	LeaseRenew = "r"
	// LeaseShrink renews the busy members and gives back the others.
	LeaseShrink = "s"
)

// CapLease is one cap's step of LeaseLimits: its members are the
// process's slots' (LeaseMember), the Busy first ones held by jobs
// claimed under the lease.
type CapLease struct {
	Limit   protocol.Limit
	Mode    string
	Members []string
	Busy    int
}

// LeaseMember is how a cap's holders name a slot's part of its process's
// lease (a job claimed under it takes no hold of its own).
func LeaseMember(workerID string) string { return workerID + LeaseSuffix }

// LeaseSuffix ends a lease's members.
const LeaseSuffix = ":lease"

// LeaseLimits takes, renews or shrinks each cap's lease in one step
// (limits_lease.lua) and reports, by cap, whether the lease is held
// until now+lease.
func (c *Client) LeaseLimits(ctx context.Context, caps []CapLease, now time.Time, lease time.Duration) ([]bool, error) {
	k := c.keys
	keys := []any{k.LimitsIndex()}
	args := []any{now.UnixMilli(), now.Add(lease).UnixMilli(), len(caps)}
	for _, l := range caps {
		name := l.Limit.Name()
		b := k.LimitBase(name)
		keys = append(keys, b+protocol.LimitHoldersSuffix, b+protocol.LimitParkedSuffix)
		args = append(args, l.Limit.N, name, l.Mode, len(l.Members), l.Busy)
		for _, m := range l.Members {
			args = append(args, m)
		}
	}
	held, err := redis.Ints(c.eval(ctx, c.limitsLease, scriptKeysArgs(keys, args)...))
	if err != nil {
		return nil, fmt.Errorf("rdb: lease limits: %w", err)
	}
	out := make([]bool, len(caps))
	for i := range out {
		out[i] = i < len(held) && held[i] == 1
	}
	return out, nil
}

// TakeRate takes up to want starts of rate r at once (limits_take.lua):
// none while jobs wait for it or while the rate allows none now. The
// starts are the rate's until its tolerance (1% of its period) has passed.
func (c *Client) TakeRate(ctx context.Context, r protocol.Limit, want int, now time.Time) (int, error) {
	b := c.keys.LimitBase(r.Name())
	burst := float64(r.Period.Microseconds()) / 1000 / 100
	n, err := redis.Int(c.eval(ctx, c.limitsTake, b+protocol.LimitTATSuffix, b+protocol.LimitWaitingSuffix,
		limitsNow(now), strconv.FormatFloat(r.Interval(), 'f', 3, 64), strconv.FormatFloat(burst, 'f', 3, 64), want))
	if err != nil {
		return 0, fmt.Errorf("rdb: take rate %q: %w", r.Name(), err)
	}
	return n, nil
}

// Subset is l with only the rules whose bit is set in mask (bit i: rule
// i), nil for none: the rules a claim leaves to the claim script when
// the others are taken under a lease.
func (l *ClaimLimits) Subset(mask uint64) *ClaimLimits {
	var rules []protocol.Limit
	for i, r := range l.rules {
		if mask&(1<<i) != 0 {
			rules = append(rules, r)
		}
	}
	return NewClaimLimits(rules, l.Lease)
}
