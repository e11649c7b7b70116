package rdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// HeldSlot is a cap's slot one of a worker's running jobs holds: renewed
// by SweepLimits until the job's finish frees it.
type HeldSlot struct {
	Name, Member string
}

// SweptLimits is what a limits sweep did.
type SweptLimits struct {
	// Moved is how many parked and waiting jobs went back to their queues.
	Moved int
	// SetAside are the entries of parked and waiting lists that were not
	// a job's (written by hand): each went to failed as a
	// ResqueGo::BadPayload naming its list.
	SetAside []LimitEntry
}

// LimitEntry is an entry of a cap's parked list or a rate's waiting list.
type LimitEntry struct {
	List, Entry string
}

// limitsSetAsideScript takes an entry that is not a job's off a parked or
// waiting list, with its failed entry.
var limitsSetAsideScript = loadScript("limits_set_aside.lua", 2)

// SweepLimits renews held's leases until now+lease, drops the expired
// holds of l's caps (and of the per-key caps the index names), moves
// parked jobs back where a cap has room and due waiting jobs of its rates
// back to their queues, in one step. An entry of a parked or waiting list
// that is not a job's goes to failed, recorded as worker's: it never
// stops the jobs behind it nor keeps its cap from being leased.
func (c *Client) SweepLimits(ctx context.Context, l *ClaimLimits, held []HeldSlot, now time.Time, worker string) (SweptLimits, error) {
	k := c.keys
	names, err := redis.Strings(c.do(ctx, "SMEMBERS", k.LimitsIndex()))
	// an index of another type (written by hand) hides the per-key caps
	// it would name: the configured limits are swept all the same, and
	// the error that names the key comes after
	var indexErr error
	if err != nil {
		if indexErr = c.keyTypeError(ctx, err, k.LimitsIndex(), "set"); !errors.As(indexErr, new(*KeyTypeError)) {
			return SweptLimits{}, fmt.Errorf("rdb: limits index: %w", err)
		}
		names = nil
	}
	type lim struct {
		name string
		cap  int
	}
	var lims []lim
	seen := map[string]bool{}
	add := func(name string, r protocol.Limit) {
		cap := 0
		if r.Kind == protocol.LimitCap {
			cap = r.N
		}
		if key := name + "\x00" + strconv.Itoa(cap); !seen[key] {
			seen[key] = true
			lims = append(lims, lim{name, cap})
		}
	}
	for _, r := range l.rules {
		if r.Path == "" {
			add(r.Name(), r)
		}
		for _, n := range names {
			if r.Path != "" && strings.HasPrefix(n, r.Name()) {
				add(n, r)
			}
		}
	}
	keys := []any{k.LimitsIndex()}
	args := []any{now.UnixMilli(), now.Add(l.Lease).UnixMilli(), k.Queue(""), len(held), len(lims)}
	for _, h := range held {
		keys = append(keys, k.LimitBase(h.Name)+protocol.LimitHoldersSuffix)
		args = append(args, h.Member)
	}
	for _, m := range lims {
		b := k.LimitBase(m.name)
		keys = append(keys, b+protocol.LimitHoldersSuffix, b+protocol.LimitParkedSuffix, b+protocol.LimitWaitingSuffix, b+protocol.LimitTATSuffix)
		args = append(args, m.cap, m.name)
	}
	reply, err := redis.Values(c.eval(ctx, c.limitsSweep, append(append([]any{len(keys)}, keys...), args...)...))
	var swept SweptLimits
	if err == nil && len(reply) > 0 {
		swept.Moved, err = redis.Int(reply[0], nil)
	}
	if err != nil {
		return swept, fmt.Errorf("rdb: sweep limits: %w", err)
	}
	for i := 1; i+1 < len(reply); i += 2 {
		list, _ := redis.String(reply[i], nil)
		entry, _ := redis.String(reply[i+1], nil)
		ok, err := c.setAsideLimitEntry(ctx, list, entry, now, worker)
		if err != nil {
			return swept, err
		}
		if ok {
			swept.SetAside = append(swept.SetAside, LimitEntry{list, entry})
		}
	}
	if indexErr != nil {
		return swept, fmt.Errorf("rdb: limits index: %w", indexErr)
	}
	return swept, nil
}

// setAsideLimitEntry moves entry, not a job's, from a parked or waiting
// list to failed; false when it is no longer on the list.
func (c *Client) setAsideLimitEntry(ctx context.Context, list, entry string, now time.Time, worker string) (bool, error) {
	var e struct {
		Queue any `json:"queue"`
	}
	queue := ""
	if json.Unmarshal([]byte(entry), &e) == nil {
		queue, _ = e.Queue.(string)
	}
	what := "parked"
	if strings.HasSuffix(list, protocol.LimitWaitingSuffix) {
		what = "waiting"
	}
	rec := protocol.Failure{
		FailedAt:  now,
		Payload:   []byte(entry),
		Exception: protocol.ExcBadPayload,
		Error: fmt.Sprintf(`an entry of %s is not a %s job ({"queue":Q,"payload":P} with P the job's JSON in a string); set aside by the limits sweep`,
			list, what),
		Worker: worker,
		Queue:  queue,
	}
	n, err := redis.Int(c.eval(ctx, limitsSetAsideScript, list, c.keys.Failed(), entry, rec.Encode()))
	if err != nil {
		return false, fmt.Errorf("rdb: set aside an entry of %s: %w", list, err)
	}
	return n == 1, nil
}

// LimitState is what Redis holds of one limit: its running holds (those
// whose lease has not ended), its parked jobs (a cap's) and waiting jobs
// (a rate's), and when the rate's next start may be.
type LimitState struct {
	Name string
	// Holders are the cap's slots held (their lease not ended): Leased of
	// them by processes' leases (LeaseMember: the jobs run under a lease
	// hold no slot of their own), the others by a running job each.
	Holders int
	Leased  int
	Parked  int
	Waiting int
	// NextStart is a rate's theoretical arrival time (zero for none).
	NextStart time.Time
	// Problem names the limit's keys that hold another type (written by
	// hand; each read as none), "" when none does.
	Problem string
}

// Limits reads the state of every limit in the index, by name.
func (c *Client) Limits(ctx context.Context, now time.Time) ([]LimitState, error) {
	k := c.keys
	names, err := redis.Strings(c.do(ctx, "SMEMBERS", k.LimitsIndex()))
	if err != nil {
		return nil, fmt.Errorf("rdb: limits index: %w", c.keyTypeError(ctx, err, k.LimitsIndex(), "set"))
	}
	slices.Sort(names)
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("rdb: limits: %w", err)
	}
	defer conn.Close()
	for _, n := range names {
		b := k.LimitBase(n)
		_ = conn.Send("ZRANGEBYSCORE", b+protocol.LimitHoldersSuffix, now.UnixMilli(), "+inf")
		_ = conn.Send("LLEN", b+protocol.LimitParkedSuffix)
		_ = conn.Send("LLEN", b+protocol.LimitWaitingSuffix)
		_ = conn.Send("GET", b+protocol.LimitTATSuffix)
	}
	if err := conn.Flush(); err != nil {
		return nil, fmt.Errorf("rdb: limits: %w", err)
	}
	out := make([]LimitState, 0, len(names))
	for _, n := range names {
		s := LimitState{Name: n}
		var errs [4]error
		var held []string
		held, errs[0] = redis.Strings(conn.Receive())
		s.Holders = len(held)
		for _, m := range held {
			if strings.HasSuffix(m, LeaseSuffix) {
				s.Leased++
			}
		}
		s.Parked, errs[1] = redis.Int(conn.Receive())
		s.Waiting, errs[2] = redis.Int(conn.Receive())
		tat, terr := redis.Float64(conn.Receive())
		if terr == nil {
			s.NextStart = time.UnixMicro(int64(tat * 1000))
		} else if terr != redis.ErrNil {
			errs[3] = terr
		}
		for i, e := range errs {
			if e != nil {
				// a key of another type (written by hand) reads as none,
				// named in Problem (the other limits are shown all the same)
				var re redis.Error
				if !errors.As(e, &re) {
					return nil, fmt.Errorf("rdb: limit %q: %w", n, e)
				}
				suffix := [4]string{protocol.LimitHoldersSuffix, protocol.LimitParkedSuffix, protocol.LimitWaitingSuffix, protocol.LimitTATSuffix}[i]
				want := [4]string{"zset", "list", "list", "string"}[i]
				var kt *KeyTypeError
				msg := k.LimitBase(n) + suffix + ": " + e.Error()
				if errors.As(c.keyTypeError(ctx, e, k.LimitBase(n)+suffix, want), &kt) {
					msg = kt.Error()
				}
				if s.Problem != "" {
					s.Problem += "; "
				}
				s.Problem += msg
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// LimitJobs lists up to n parked (kind "parked") or waiting ("waiting")
// entries of the limit named name, from the first.
func (c *Client) LimitJobs(ctx context.Context, name, kind string, n int) ([]protocol.LimitEntry, error) {
	suffix := protocol.LimitParkedSuffix
	if kind == "waiting" {
		suffix = protocol.LimitWaitingSuffix
	}
	raw, err := redis.ByteSlices(c.do(ctx, "LRANGE", c.keys.LimitBase(name)+suffix, 0, n-1))
	if err != nil {
		return nil, fmt.Errorf("rdb: limit %q: %w", name, err)
	}
	out := make([]protocol.LimitEntry, 0, len(raw))
	for _, r := range raw {
		e, err := protocol.ParseLimitEntry(r)
		if err != nil {
			continue // written by hand: the sweep leaves it at the tail
		}
		out = append(out, e)
	}
	return out, nil
}
