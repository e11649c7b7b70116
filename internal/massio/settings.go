package massio

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
)

func SetWeight(ctx context.Context, c *rdb.Client, source string, weight int) error {
	if err := protocol.CheckSourceID(source); err != nil {
		return fmt.Errorf("massqueue: %w", err)
	}
	if weight < 1 {
		return fmt.Errorf("massqueue: weight %d: must be at least 1", weight)
	}
	v := strconv.Itoa(weight)
	if weight == 1 {
		v = ""
	}
	if err := setting(ctx, c, source, rdb.SettingWeight, v); err != nil {
		return err
	}
	// a turn under the old weight starts over (and none is left behind
	// when the settings go: claims then keep no turn counters)
	if err := c.ClearTurns(ctx, source); err != nil {
		return fmt.Errorf("massqueue: weight of %s set; clearing its turn: %w", source, err)
	}
	return nil
}

// SetLimit caps a source at n jobs running at once in each pool, static or
// batch, across every host; n <= 0 removes the cap. A slot is held by a worker's
// claim and freed by its finish, requeue or dead-worker recovery. Jobs of
// the source already running when the cap is set count too.
func SetLimit(ctx context.Context, c *rdb.Client, source string, n int) error {
	if err := protocol.CheckSourceID(source); err != nil {
		return fmt.Errorf("massqueue: %w", err)
	}
	v := ""
	if n > 0 {
		v = strconv.Itoa(n)
	}
	if err := setting(ctx, c, source, rdb.SettingLimit, v); err != nil {
		return err
	}
	if n <= 0 {
		return c.DropHolders(ctx, source)
	}
	// claims record themselves only while a limit is set: count the jobs
	// claimed before it (after the setting, so none is missed)
	if _, err := c.CountRunningHolders(ctx, source); err != nil {
		return fmt.Errorf("massqueue: limit of %s set; counting its running jobs: %w", source, err)
	}
	return nil
}

// Pause pauses a source everywhere (PauseSource without its report).
func Pause(ctx context.Context, c *rdb.Client, source string) error {
	_, err := PauseSource(ctx, c, source)
	return err
}

// PauseSource stops a source's jobs from being claimed, running ones
// finishing normally. In static pools its FIFOs are skipped (new jobs
// queue up). In every batch pool (those Redis knows, and batchPools) its
// active batch is parked: taken off its unit's list, so the unit's
// workers serve the other sources, and kept with the unit (status shows
// it); its later batches wait in its backlog, and a batch committed while
// it has none is parked when allocated. Jobs retried or recovered while
// paused go back to their batch and wait with it.
func PauseSource(ctx context.Context, c *rdb.Client, source string, batchPools ...string) (massqueue.PauseResult, error) {
	r := massqueue.PauseResult{Source: source, Batches: []massqueue.PausedBatch{}}
	if err := protocol.CheckSourceID(source); err != nil {
		return r, fmt.Errorf("massqueue: %w", err)
	}
	set, err := c.PauseFlag(ctx, source)
	if err != nil {
		return r, fmt.Errorf("massqueue: %w", err)
	}
	r.Already = !set
	// the flag first: an allocation from now on parks the source's batch,
	// and an earlier one is parked below
	known, err := c.BatchPoolNames(ctx)
	if err != nil {
		return r, fmt.Errorf("massqueue: %w", err)
	}
	for _, p := range uniqueSorted(append(known, batchPools...)) {
		pk, err := c.BatchPause(ctx, p, source)
		if err != nil {
			return r, fmt.Errorf("massqueue: %w", err)
		}
		if pk.Result == rdb.ParkParked || pk.Result == rdb.ParkAlready {
			r.Batches = append(r.Batches, massqueue.PausedBatch{Pool: p, ID: pk.ID, Unit: pk.Unit, New: pk.Result == rdb.ParkParked})
		}
	}
	return r, nil
}

// Resume resumes a source everywhere (ResumeSource), with static pools
// as more static pools to look in; it returns the static pools whose ring
// the source went back on.
func Resume(ctx context.Context, c *rdb.Client, source string, pools ...string) ([]string, error) {
	r, err := ResumeSource(ctx, c, source, massqueue.ResumeOptions{StaticPools: pools})
	return r.Static, err
}

// ResumeSource lets a paused source's jobs be claimed again: in every
// static pool it has work in (those Redis knows of, and opt.StaticPools)
// it goes back on the ring, and in every batch pool its parked batch goes
// back on its unit's list, or, when that unit is dead or gone, back to
// committed for an allocator to place on a live unit.
func ResumeSource(ctx context.Context, c *rdb.Client, source string, opt massqueue.ResumeOptions) (massqueue.ResumeResult, error) {
	r := massqueue.ResumeResult{Source: source, Static: []string{}, Batches: []massqueue.ResumedBatch{}}
	if err := protocol.CheckSourceID(source); err != nil {
		return r, fmt.Errorf("massqueue: %w", err)
	}
	// the flag first: an allocation from now on no longer parks, and what
	// is parked is put back below
	was, err := c.ClearPauseFlag(ctx, source)
	if err != nil {
		return r, fmt.Errorf("massqueue: %w", err)
	}
	r.WasPaused = was
	if r.Static, err = wakeStatic(ctx, c, source, opt.StaticPools); err != nil {
		return r, err
	}
	now := opt.Now
	if now.IsZero() {
		if now, err = c.Time(ctx); err != nil {
			return r, fmt.Errorf("massqueue: %w", err)
		}
	}
	if opt.DeadAfter <= 0 {
		opt.DeadAfter = 30 * time.Second
	}
	pools, err := c.ParkedPools(ctx)
	if err != nil {
		return r, fmt.Errorf("massqueue: %w", err)
	}
	for _, p := range uniqueSorted(pools) {
		pk, err := c.BatchResume(ctx, p, source, now.Add(-opt.DeadAfter))
		if err != nil {
			return r, fmt.Errorf("massqueue: %w", err)
		}
		switch pk.Result {
		case rdb.ParkUnit, rdb.ParkCommitted, rdb.ParkFinished:
			r.Batches = append(r.Batches, massqueue.ResumedBatch{Pool: p, ID: pk.ID, Unit: pk.Unit, Result: pk.Result})
			r.WasPaused = true
		}
	}
	return r, nil
}

// wakeStatic puts source back on the ring of every static pool it has work
// in and returns those pools.
func wakeStatic(ctx context.Context, c *rdb.Client, source string, pools []string) ([]string, error) {
	known, err := c.StaticPoolNames(ctx)
	if err != nil {
		return nil, fmt.Errorf("massqueue: %w", err)
	}
	k := c.Keys()
	fifos, err := c.ScanKeys(ctx, k.StaticSourceQueue("*", source))
	if err != nil {
		return nil, fmt.Errorf("massqueue: %w", err)
	}
	set := map[string]bool{}
	for _, p := range append(append(known, pools...), poolsOf(k, fifos, source)...) {
		set[p] = true
	}
	woke := []string{}
	for _, p := range sortedKeys(set) {
		ok, err := c.WakeSource(ctx, p, source)
		if err != nil {
			return woke, fmt.Errorf("massqueue: %w", err)
		}
		if ok {
			woke = append(woke, p)
		}
	}
	return woke, nil
}

// poolsOf reads the pool names out of a source's FIFO keys.
func poolsOf(k protocol.Keys, fifos []string, source string) []string {
	prefix := k.StaticQueue("")
	var out []string
	for _, f := range fifos {
		rest := strings.TrimPrefix(f, prefix)
		if p, ok := strings.CutSuffix(rest, ":"+source); ok && !strings.Contains(p, ":") {
			out = append(out, p)
		}
	}
	return out
}

func setting(ctx context.Context, c *rdb.Client, source, name, value string) error {
	if err := c.SetSourceSetting(ctx, source, name, value); err != nil {
		return fmt.Errorf("massqueue: %w", err)
	}
	return nil
}

// Settings lists the sources with settings, by source.
func Settings(ctx context.Context, c *rdb.Client) ([]massqueue.SourceSetting, error) {
	m, err := c.SourceSettings(ctx)
	if err != nil {
		return nil, fmt.Errorf("massqueue: %w", err)
	}
	out := make([]massqueue.SourceSetting, 0, len(m))
	for s, f := range m {
		x := massqueue.SourceSetting{Source: s, Weight: 1, Paused: f[rdb.SettingPaused] == "1"}
		if w, err := strconv.Atoi(f[rdb.SettingWeight]); err == nil && w > 0 {
			x.Weight = w
		}
		if l, err := strconv.Atoi(f[rdb.SettingLimit]); err == nil && l > 0 {
			x.Limit = l
		}
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Source < out[j].Source })
	return out, nil
}
