package rdb

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Scripts of per-source settings; immutable.
var (
	massResumeScript      = loadScript("mass_resume.lua", 5)
	massCountHolderScript = loadScript("mass_count_holder.lua", 3)
	massBatchPauseScript  = loadMassScript("mass_batch_pause.lua", 4)
	massBatchResumeScript = loadMassScript("mass_batch_resume.lua", 7, "mass_route.lua")
)

// Per-source settings of static pools (fields of static:settings,
// "<source>:<name>").
const (
	SettingWeight = "weight"
	SettingLimit  = "limit"
	SettingPaused = "paused"
)

// SetSourceSetting sets a source's setting; an empty value removes it.
func (c *Client) SetSourceSetting(ctx context.Context, source, name, value string) error {
	var err error
	if value == "" {
		_, err = c.do(ctx, "HDEL", c.keys.MassSettings(), source+":"+name)
	} else {
		_, err = c.do(ctx, "HSET", c.keys.MassSettings(), source+":"+name, value)
	}
	if err != nil {
		return fmt.Errorf("rdb: %s of %s: %w", name, source, err)
	}
	return nil
}

// SourceSettings returns every source's settings: source -> name -> value.
func (c *Client) SourceSettings(ctx context.Context) (map[string]map[string]string, error) {
	m, err := redis.StringMap(c.do(ctx, "HGETALL", c.keys.MassSettings()))
	if err != nil {
		return nil, fmt.Errorf("rdb: source settings: %w", err)
	}
	out := map[string]map[string]string{}
	for f, v := range m {
		i := strings.LastIndexByte(f, ':')
		if i <= 0 {
			continue
		}
		s, name := f[:i], f[i+1:]
		if out[s] == nil {
			out[s] = map[string]string{}
		}
		out[s][name] = v
	}
	return out, nil
}

// WakeSource puts source back on static pool's ring when it has work and is
// neither paused, on the ring nor parked (mass_resume.lua); it reports
// whether it did.
func (c *Client) WakeSource(ctx context.Context, pool, source string) (bool, error) {
	k := c.keys
	n, err := redis.Int(c.eval(ctx, massResumeScript, k.StaticRing(pool), k.StaticState(pool), k.StaticSourceQueue(pool, source),
		k.StaticHolders(pool, source), k.MassSettings(), source))
	if err != nil {
		return false, fmt.Errorf("rdb: wake %s in %s: %w", source, pool, err)
	}
	return n == 1, nil
}

// StaticPoolNames returns the static pools known to Redis: registered by a
// heartbeat (static:pools) or holding a ring or state.
func (c *Client) StaticPoolNames(ctx context.Context) ([]string, error) {
	reg, err := redis.Strings(c.do(ctx, "ZRANGE", c.keys.StaticPools(), 0, -1))
	if err != nil {
		return nil, fmt.Errorf("rdb: static pools: %w", err)
	}
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range reg {
		add(p)
	}
	for _, pat := range []string{c.keys.StaticRing("*"), c.keys.StaticState("*")} {
		keys, err := c.ScanKeys(ctx, pat)
		if err != nil {
			return nil, err
		}
		prefix := strings.TrimSuffix(pat, "*")
		for _, key := range keys {
			add(strings.TrimPrefix(key, prefix))
		}
	}
	return out, nil
}

// PauseFlag sets source's paused setting; it reports false when it was
// already set.
func (c *Client) PauseFlag(ctx context.Context, source string) (bool, error) {
	n, err := redis.Int(c.do(ctx, "HSETNX", c.keys.MassSettings(), source+":"+SettingPaused, "1"))
	if err != nil {
		return false, fmt.Errorf("rdb: pause %s: %w", source, err)
	}
	return n == 1, nil
}

// ClearPauseFlag removes source's paused setting; it reports false when it
// was not set.
func (c *Client) ClearPauseFlag(ctx context.Context, source string) (bool, error) {
	n, err := redis.Int(c.do(ctx, "HDEL", c.keys.MassSettings(), source+":"+SettingPaused))
	if err != nil {
		return false, fmt.Errorf("rdb: resume %s: %w", source, err)
	}
	return n == 1, nil
}

// Park results of BatchPause and BatchResume.
const (
	ParkNone      = "none"      // no active (BatchPause) or parked (BatchResume) batch in the pool
	ParkParked    = "parked"    // BatchPause took the batch off its unit's list
	ParkAlready   = "already"   // BatchPause: the batch was parked before
	ParkResumed   = "resumed"   // BatchPause: the source is not paused (a resume won)
	ParkPaused    = "paused"    // BatchResume: the source is paused (a pause won)
	ParkUnit      = "unit"      // BatchResume: back on Unit's list
	ParkCommitted = "committed" // BatchResume: Unit is dead or gone: back to committed
	ParkFinished  = "finished"  // BatchResume: the batch was done: finished
)

// Park is what BatchPause or BatchResume did in a pool.
type Park struct {
	Result string
	ID     string
	Unit   string
}

func parkReply(v []string) Park {
	var p Park
	if len(v) > 0 {
		p.Result = v[0]
	}
	if len(v) > 1 {
		p.ID = v[1]
	}
	if len(v) > 2 {
		p.Unit = v[2]
	}
	return p
}

// BatchPause parks the active batch of a paused source in a batch pool
// (mass_batch_pause.lua).
func (c *Client) BatchPause(ctx context.Context, pool, source string) (Park, error) {
	k := c.keys
	v, err := redis.Strings(c.eval(ctx, massBatchPauseScript, k.PoolSources(pool), k.BatchPaused(pool), k.PoolUnitQueues(pool),
		k.MassSettings(), source, k.Prefix(), protocol.UnitQueuesMemberPrefix(pool)))
	if err != nil || len(v) == 0 {
		return Park{}, fmt.Errorf("rdb: pause %s in %s: %w", source, pool, errOr(err, "empty reply"))
	}
	return parkReply(v), nil
}

// BatchResume puts a resumed source's parked batch in a batch pool back to
// work (mass_batch_resume.lua); a unit whose last beat is before
// aliveSince is dead.
func (c *Client) BatchResume(ctx context.Context, pool, source string, aliveSince time.Time) (Park, error) {
	k := c.keys
	v, err := redis.Strings(c.eval(ctx, massBatchResumeScript, k.PoolSources(pool), k.BatchPaused(pool), k.PoolUnitQueues(pool),
		k.UnitHeartbeats(pool), k.CommittedList(), k.ClaimSeqs(), k.MassSettings(),
		source, k.Prefix(), protocol.UnitQueuesMemberPrefix(pool), k.BacklogPrefix(pool), aliveSince.UnixMilli()))
	if err != nil || len(v) == 0 {
		return Park{}, fmt.Errorf("rdb: resume %s in %s: %w", source, pool, errOr(err, "empty reply"))
	}
	return parkReply(v), nil
}

// ParkedPools returns the batch pools with a parked batch
// (batch:paused:<pool> exists).
func (c *Client) ParkedPools(ctx context.Context) ([]string, error) {
	pat := c.keys.BatchPaused("*")
	keys, err := c.ScanKeys(ctx, pat)
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimSuffix(pat, "*")
	var out []string
	for _, key := range keys {
		if p := strings.TrimPrefix(key, prefix); p != "" && !strings.Contains(p, ":") {
			out = append(out, p)
		}
	}
	return out, nil
}

// CountRunningHolders records, in the holders hashes of source in every
// static pool, the workers already running one of its jobs
// (mass_count_holder.lua): a claim records itself only while its source
// has a limit, so a limit just set must count the jobs claimed before it.
// It returns how many workers it recorded. Set the limit first: a claim
// made after that records itself.
func (c *Client) CountRunningHolders(ctx context.Context, source string) (int, error) {
	ids, err := redis.Strings(c.do(ctx, "SMEMBERS", c.keys.Workers()))
	if err != nil {
		return 0, fmt.Errorf("rdb: workers: %w", err)
	}
	n := 0
	for _, id := range ids {
		rec, err := c.WorkerRecord(ctx, id)
		if err != nil {
			return n, err
		}
		if rec == nil {
			continue
		}
		r, err := protocol.ParseWorkerRecord(rec)
		if err != nil {
			continue
		}
		pool, s, ok := protocol.StaticSourceOf(r.SourceOf())
		if !ok || s != source {
			continue
		}
		ok1, err := redis.Int(c.eval(ctx, massCountHolderScript, c.keys.Worker(id), c.keys.ClaimSeqs(),
			c.keys.StaticHolders(pool, source), rec, id))
		if err != nil {
			return n, fmt.Errorf("rdb: count %s as a holder of %s: %w", id, source, err)
		}
		n += ok1
	}
	return n, nil
}

// DropHolders deletes source's holders hashes in every static pool known
// to Redis (its limit was removed: nothing counts them any more).
func (c *Client) DropHolders(ctx context.Context, source string) error {
	return c.inStaticPools(ctx, "holders of "+source, func(p string) (string, []any) {
		return "DEL", []any{c.keys.StaticHolders(p, source)}
	})
}

// ClearTurns removes source's turn counter (field t:<source> of each
// static pool's state hash), which claims keep only while some source has
// settings (jobpath/source_static_ring.lua's static_visit): a counter left when the settings
// went away would shorten the source's first turn once a weight is set
// again. SetWeight calls it after every change of weight.
func (c *Client) ClearTurns(ctx context.Context, source string) error {
	return c.inStaticPools(ctx, "turn of "+source, func(p string) (string, []any) {
		return "HDEL", []any{c.keys.StaticState(p), "t:" + source}
	})
}

// inStaticPools runs the command cmd gives for each static pool known to
// Redis (StaticPoolNames); what names it in errors.
func (c *Client) inStaticPools(ctx context.Context, what string, cmd func(pool string) (string, []any)) error {
	pools, err := c.StaticPoolNames(ctx)
	if err != nil {
		return err
	}
	for _, p := range pools {
		name, args := cmd(p)
		if _, err := c.do(ctx, name, args...); err != nil {
			return fmt.Errorf("rdb: %s in %s: %w", what, p, err)
		}
	}
	return nil
}
