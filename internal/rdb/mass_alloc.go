package rdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Server-side scripts of mass queues (allocation, units); immutable.
var (
	massAllocStaticScript = loadMassScript("mass_alloc_static.lua", 5, "mass_route.lua")
	massAllocBatchScript  = loadMassScript("mass_alloc_batch.lua", 4, "mass_route.lua")
	massUnitBeatScript    = loadScript("mass_unit_beat.lua", 2)
	massUnitSweepScript   = loadMassScript("mass_unit_sweep.lua", 7, "mass_route.lua")
	massHandbackScript    = loadMassScript("mass_unit_handback.lua", 8, "mass_route.lua")
	massDeferredScript    = loadScript("mass_deferred_promote.lua", 2)
	massReallocateScript  = loadMassScript("mass_reallocate.lua", 4, "mass_route.lua")
	massFailBadScript     = loadMassScript("mass_fail_bad.lua", 2, "mass_route.lua")
)

// AllocArgs are what every allocation step needs.
type AllocArgs struct {
	// Routing is the routing table as JSON (massqueue.Config.Routing).
	Routing []byte
	Now     time.Time
	// Alive is how long a unit (and a registered static pool) counts as
	// alive after its last heartbeat.
	Alive time.Duration
}

// StaticAllocation counts what one AllocateStatic call did.
type StaticAllocation struct {
	Moved, Quarantined, Failed int
}

// Total is every payload the call took from unassigned.
func (s StaticAllocation) Total() int { return s.Moved + s.Quarantined + s.Failed }

// AllocateStatic routes up to max payloads from unassigned, each in the
// same step as its pop (mass_alloc_static.lua).
func (c *Client) AllocateStatic(ctx context.Context, a AllocArgs, max int) (StaticAllocation, error) {
	k := c.keys
	v, err := redis.Ints(c.eval(ctx, massAllocStaticScript, k.Unassigned(), k.MassQuarantine(), k.AllocationFailures(),
		k.AllocationReasons(), k.MassSettings(), max, k.Prefix(), a.Routing, a.Now.UnixMilli(), a.Alive.Milliseconds(), a.Now.Unix()))
	if err != nil || len(v) != 3 {
		return StaticAllocation{}, fmt.Errorf("rdb: allocate static: %w", errOr(err, "bad reply"))
	}
	return StaticAllocation{Moved: v[0], Quarantined: v[1], Failed: v[2]}, nil
}

// BatchResult says what AllocateBatch did with a batch.
type BatchResult string

// Results of AllocateBatch (mass_alloc_batch.lua).
const (
	BatchEmpty    BatchResult = "empty"    // committed was empty
	BatchAssigned BatchResult = "assigned" // to Unit
	BatchParked   BatchResult = "parked"   // to Unit, off its list: the source is paused
	BatchBacklog  BatchResult = "backlog"  // the source has an active batch in Pool (on Unit)
	BatchFailed   BatchResult = "failed"   // recorded in allocation failures (Reason)
	BatchWaiting  BatchResult = "waiting"  // no live unit in Pool: back to the head of committed
)

// BatchAllocation is the outcome of one AllocateBatch.
type BatchAllocation struct {
	Result BatchResult
	ID     string
	Pool   string
	Unit   string
	Reason string
}

// AllocateBatch allocates the oldest committed batch (mass_alloc_batch.lua).
func (c *Client) AllocateBatch(ctx context.Context, a AllocArgs) (BatchAllocation, error) {
	k := c.keys
	v, err := redis.Strings(c.eval(ctx, massAllocBatchScript, k.CommittedList(), k.AllocationFailures(), k.AllocationReasons(),
		k.MassSettings(), k.Prefix(), a.Routing, a.Now.UnixMilli(), a.Alive.Milliseconds(), a.Now.Unix()))
	if err != nil || len(v) == 0 {
		return BatchAllocation{}, fmt.Errorf("rdb: allocate batch: %w", errOr(err, "empty reply"))
	}
	r := BatchAllocation{Result: BatchResult(v[0])}
	if len(v) == 4 {
		r.ID, r.Pool = v[1], v[2]
		if r.Result == BatchFailed {
			r.Reason = v[3]
		} else {
			r.Unit = v[3]
		}
	}
	return r, nil
}

// UnitBeat records that a unit of pool is alive at now (and registers it in
// the pool's load index).
func (c *Client) UnitBeat(ctx context.Context, pool, unit string, now time.Time) error {
	k := c.keys
	if _, err := c.eval(ctx, massUnitBeatScript, k.UnitHeartbeats(pool), k.PoolUnitQueues(pool),
		unit, protocol.UnitQueuesMember(pool, unit), now.UnixMilli()); err != nil {
		return fmt.Errorf("rdb: unit %s/%s heartbeat: %w", pool, unit, err)
	}
	return nil
}

// StaticPoolBeat registers that a static pool is served at now, so
// allocators whose config lacks the pool still route to it.
func (c *Client) StaticPoolBeat(ctx context.Context, pool string, now time.Time) error {
	if _, err := c.do(ctx, "ZADD", c.keys.StaticPools(), now.UnixMilli(), pool); err != nil {
		return fmt.Errorf("rdb: static pool %s heartbeat: %w", pool, err)
	}
	return nil
}

// UnitLoad is a unit in a batch pool's load index.
type UnitLoad struct {
	Unit    string
	Batches int
	// Beat is the unit's last heartbeat (zero when it has none).
	Beat time.Time
}

// PoolUnits lists a batch pool's units, least loaded first, with their last
// heartbeats.
func (c *Client) PoolUnits(ctx context.Context, pool string) ([]UnitLoad, error) {
	k := c.keys
	v, err := redis.Strings(c.do(ctx, "ZRANGE", k.PoolUnitQueues(pool), 0, -1, "WITHSCORES"))
	if err != nil {
		return nil, fmt.Errorf("rdb: units of %s: %w", pool, err)
	}
	beats, err := redis.StringMap(c.do(ctx, "ZRANGE", k.UnitHeartbeats(pool), 0, -1, "WITHSCORES"))
	if err != nil {
		return nil, fmt.Errorf("rdb: units of %s: %w", pool, err)
	}
	var out []UnitLoad
	for i := 0; i+1 < len(v); i += 2 {
		unit, ok := protocol.ParseUnitQueuesMember(pool, v[i])
		if !ok {
			continue
		}
		n, _ := strconv.ParseFloat(v[i+1], 64)
		u := UnitLoad{Unit: unit, Batches: int(n)}
		if ms, err := strconv.ParseInt(beats[unit], 10, 64); err == nil {
			u.Beat = time.UnixMilli(ms)
		}
		out = append(out, u)
	}
	return out, nil
}

// SweepUnit finishes the done batches of a unit, those parked on it
// included (mass_unit_sweep.lua), and returns their ids.
func (c *Client) SweepUnit(ctx context.Context, pool, unit string) ([]string, error) {
	k := c.keys
	v, err := redis.Strings(c.eval(ctx, massUnitSweepScript, k.UnitQueues(pool, unit), k.PoolUnitQueues(pool), k.PoolSources(pool),
		k.CommittedList(), k.ClaimSeqs(), k.BatchPaused(pool), k.UnitTurns(pool, unit),
		protocol.UnitQueuesMember(pool, unit), unit, k.Prefix(), k.BacklogPrefix(pool)))
	if err != nil {
		return nil, fmt.Errorf("rdb: sweep unit %s/%s: %w", pool, unit, err)
	}
	return v, nil
}

// Handback is what HandBack did with a dead unit.
type Handback struct {
	// Alive: the unit beat since (nothing done). Gone: it left the pool.
	Alive, Gone bool
	// Back batches went to committed, Finished were done, Held wait for a
	// job still held by a worker.
	Back, Finished, Held int
}

// HandBack hands a dead unit's batches, those parked on it included, back
// to committed (mass_unit_handback.lua).
func (c *Client) HandBack(ctx context.Context, pool, unit string, deadBefore time.Time) (Handback, error) {
	k := c.keys
	v, err := redis.Values(c.eval(ctx, massHandbackScript, k.UnitQueues(pool, unit), k.PoolUnitQueues(pool), k.PoolSources(pool),
		k.CommittedList(), k.ClaimSeqs(), k.UnitHeartbeats(pool), k.BatchPaused(pool), k.UnitTurns(pool, unit),
		protocol.UnitQueuesMember(pool, unit), unit, k.Prefix(), k.BacklogPrefix(pool), deadBefore.UnixMilli()))
	if err != nil || len(v) == 0 {
		return Handback{}, fmt.Errorf("rdb: hand back unit %s/%s: %w", pool, unit, errOr(err, "empty reply"))
	}
	res, _ := redis.String(v[0], nil)
	if res == "alive" {
		return Handback{Alive: true}, nil
	}
	if len(v) != 4 {
		return Handback{}, fmt.Errorf("rdb: hand back unit %s/%s: reply has %d elements", pool, unit, len(v))
	}
	h := Handback{Gone: res == "gone"}
	h.Back, _ = redis.Int(v[1], nil)
	h.Finished, _ = redis.Int(v[2], nil)
	h.Held, _ = redis.Int(v[3], nil)
	return h, nil
}

// AllocationFailure is an entry of batch:allocation_failures.
type AllocationFailure struct {
	// Entry is the entry's bytes: a batch id or a static payload.
	Entry []byte
	// Reason and At are what the allocator recorded ("" and zero for an
	// entry the released server wrote).
	Reason string
	At     time.Time
}

// IsStatic reports whether the entry is a static payload (else a batch id).
func (f AllocationFailure) IsStatic() bool { return len(f.Entry) > 0 && f.Entry[0] == '{' }

// AllocationFailures lists the allocation failures, oldest first.
func (c *Client) AllocationFailures(ctx context.Context) ([]AllocationFailure, error) {
	k := c.keys
	v, err := redis.ByteSlices(c.do(ctx, "LRANGE", k.AllocationFailures(), 0, -1))
	if err != nil {
		return nil, fmt.Errorf("rdb: allocation failures: %w", err)
	}
	out := make([]AllocationFailure, 0, len(v))
	for i := len(v) - 1; i >= 0; i-- { // LPUSHed: the oldest is at the tail
		out = append(out, AllocationFailure{Entry: v[i]})
	}
	if len(out) == 0 {
		return out, nil
	}
	fields := make([]any, 0, 1+len(out))
	fields = append(fields, k.AllocationReasons())
	for _, f := range out {
		fields = append(fields, protocol.SHA1Hex(f.Entry))
	}
	reasons, err := redis.ByteSlices(c.do(ctx, "HMGET", fields...))
	if err != nil {
		return nil, fmt.Errorf("rdb: allocation failures: %w", err)
	}
	for i, r := range reasons {
		var rec struct {
			Reason string  `json:"reason"`
			At     float64 `json:"at"`
		}
		if r != nil && json.Unmarshal(r, &rec) == nil {
			out[i].Reason = rec.Reason
			if rec.At > 0 {
				out[i].At = time.Unix(int64(rec.At), 0)
			}
		}
	}
	return out, nil
}

// Reallocate moves one allocation failure back to unassigned or committed;
// it reports false when the entry was no longer there.
func (c *Client) Reallocate(ctx context.Context, entry []byte) (bool, error) {
	k := c.keys
	n, err := redis.Int(c.eval(ctx, massReallocateScript, k.AllocationFailures(), k.AllocationReasons(), k.Unassigned(), k.CommittedList(), entry))
	if err != nil {
		return false, fmt.Errorf("rdb: reallocate: %w", err)
	}
	return n == 1, nil
}

// Quarantined returns up to n payloads an allocator could not route.
func (c *Client) Quarantined(ctx context.Context, n int) ([][]byte, error) {
	v, err := redis.ByteSlices(c.do(ctx, "LRANGE", c.keys.MassQuarantine(), -n, -1))
	if err != nil {
		return nil, fmt.Errorf("rdb: quarantine: %w", err)
	}
	return v, nil
}

// FailQuarantined records a quarantined payload in failed with entry; it
// reports false when another allocator did it first.
func (c *Client) FailQuarantined(ctx context.Context, payload, entry []byte) (bool, error) {
	n, err := redis.Int(c.eval(ctx, massFailBadScript, c.keys.MassQuarantine(), c.keys.Failed(), payload, entry))
	if err != nil {
		return false, fmt.Errorf("rdb: fail quarantined payload: %w", err)
	}
	return n == 1, nil
}

// WaitList blocks until the list key (a full key) is
// non-empty or timeout passes, taking nothing (BLMOVE of its tail onto
// itself); it reports whether the list had an item.
func (c *Client) WaitList(ctx context.Context, key string, timeout time.Duration) (bool, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return false, fmt.Errorf("rdb: wait on %s: %w", key, err)
	}
	defer conn.Close()
	if limit := c.timeout - time.Second; timeout > limit && limit > 0 {
		timeout = limit
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+c.timeout)
	defer cancel()
	v, err := redis.DoContext(conn, ctx, "BLMOVE", key, key, "RIGHT", "RIGHT", strconv.FormatFloat(timeout.Seconds(), 'f', 3, 64))
	if err != nil {
		return false, fmt.Errorf("rdb: wait on %s: %w", key, err)
	}
	return v != nil, nil
}

// errOr is err, or an error saying what was wrong with a reply.
func errOr(err error, what string) error {
	if err != nil {
		return err
	}
	return errors.New(what)
}

// RetireUnit removes a unit's heartbeat, so the next allocator pass takes
// it for dead and hands its batches back (a pool that shrank, after the
// unit's workers stopped).
func (c *Client) RetireUnit(ctx context.Context, pool, unit string) error {
	if _, err := c.do(ctx, "ZREM", c.keys.UnitHeartbeats(pool), unit); err != nil {
		return fmt.Errorf("rdb: retire unit %s/%s: %w", pool, unit, err)
	}
	return nil
}

// MoveOne moves the oldest item of list src (its tail: the end a FIFO fed
// by LPUSH is served from) to the head of dst, in one atomic LMOVE; it
// reports whether there was one.
func (c *Client) MoveOne(ctx context.Context, src, dst string) (bool, error) {
	return c.moveOne(ctx, src, dst, "RIGHT")
}

// MoveOneFromHead is MoveOne for a list whose oldest element is at its
// head (a Resque queue, RPUSHed).
func (c *Client) MoveOneFromHead(ctx context.Context, src, dst string) (bool, error) {
	return c.moveOne(ctx, src, dst, "LEFT")
}

func (c *Client) moveOne(ctx context.Context, src, dst, from string) (bool, error) {
	v, err := c.do(ctx, "LMOVE", src, dst, from, "LEFT")
	if err != nil {
		return false, fmt.Errorf("rdb: move from %s: %w", src, err)
	}
	return v != nil, nil
}

// PromoteMassDeferred moves up to max released deferred mass jobs that are
// due at now from resque-go:mass:deferred to unassigned
// (mass_deferred_promote.lua) and returns how many it moved.
func (c *Client) PromoteMassDeferred(ctx context.Context, now time.Time, max int) (int, error) {
	n, err := redis.Int(c.eval(ctx, massDeferredScript, c.keys.MassDeferred(), c.keys.Unassigned(), now.Unix(), max))
	if err != nil {
		return 0, fmt.Errorf("rdb: promote deferred mass jobs: %w", err)
	}
	return n, nil
}
