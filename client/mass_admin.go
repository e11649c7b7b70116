package client

import (
	"context"
	"strings"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/massqueue"
)

// SetMassRoute makes source's job name (massqueue.Default: every job of
// the source) go to pool, overriding the mass config's mapping
// (src:<s>:cfg:<j>). An empty pool removes the override.
func (c *Client) SetMassRoute(ctx context.Context, source, job, pool string) error {
	return massErr("set mass route", massio.SetRoute(ctx, c.rdb, source, job, pool))
}

// MassRoute tells where a job of kind (static or batch) of source's job
// name goes: its override, the source's default override, then cfg's
// mapping (cfg, from massqueue.LoadConfig; required); the order the
// allocators follow.
func (c *Client) MassRoute(ctx context.Context, cfg *massqueue.Config, kind massqueue.Kind, source, job string) (massqueue.Route, error) {
	if cfg == nil {
		return massqueue.Route{}, invalidf("MassRoute needs the mass config")
	}
	r, err := massio.Resolve(ctx, c.rdb, cfg, kind, source, job)
	return r, massErr("mass route", err)
}

// MassRoutes lists every route override in Redis, each checked against cfg
// (nil: not checked).
func (c *Client) MassRoutes(ctx context.Context, cfg *massqueue.Config) ([]massqueue.Route, error) {
	rs, err := massio.Routes(ctx, c.rdb, cfg)
	return rs, massErr("mass routes", err)
}

// CreateMassBatch reserves a batch id (<source>:<name>:<8 hex>) of source's
// job name for pushes that come later by id (OpenMassBatch); the
// reservation lives ttl (one hour when ttl <= 0) until the first push.
func (c *Client) CreateMassBatch(ctx context.Context, source, name string, ttl time.Duration) (string, error) {
	id, err := massio.CreateBatch(ctx, c.rdb, source, name, ttl)
	return id, massErr("create mass batch", err)
}

// OpenMassBatch returns the batch with id (made by CreateMassBatch or by
// another producer) to push more jobs to, or to commit; each push extends
// its life by ttl (one hour when ttl <= 0).
func (c *Client) OpenMassBatch(id string, ttl time.Duration) (*Batch, error) {
	b, err := massio.OpenBatch(c.rdb, id, ttl)
	if err != nil {
		return nil, adminErr("open mass batch", err, ErrInvalid)
	}
	return &Batch{b: b}, nil
}

// CommitMassBatch commits the batch with id: the allocators hand it to a
// unit. massqueue.ErrBatchExpired, ErrBatchCommitted and ErrBatchEmpty
// say why one cannot be.
func (c *Client) CommitMassBatch(ctx context.Context, id string) error {
	return massErr("commit mass batch", massio.CommitBatch(ctx, c.rdb, id))
}

// PauseMassSource stops a source's jobs from being claimed, running ones
// finishing normally: its static jobs queue up, and in every batch pool
// (those Redis knows, and batchPools) its active batch is parked off its
// unit until ResumeMassSource.
func (c *Client) PauseMassSource(ctx context.Context, source string, batchPools ...string) (massqueue.PauseResult, error) {
	r, err := massio.PauseSource(ctx, c.rdb, source, batchPools...)
	return r, massErr("pause mass source", err)
}

// ResumeMassSource lets a paused source's jobs be claimed again: back on
// the static pools' rings, and its parked batches back on their units (or,
// when a unit is dead, back to committed for an allocator).
func (c *Client) ResumeMassSource(ctx context.Context, source string, opt massqueue.ResumeOptions) (massqueue.ResumeResult, error) {
	r, err := massio.ResumeSource(ctx, c.rdb, source, opt)
	return r, massErr("resume mass source", err)
}

// SetMassWeight sets a source's share of its pools: jobs per turn (at least
// 1; 1 is the default), and in a batch pool, claims of its batch in a row.
func (c *Client) SetMassWeight(ctx context.Context, source string, weight int) error {
	if weight < 1 {
		return invalidf("SetMassWeight: weight %d: must be at least 1", weight)
	}
	return massErr("set mass weight", massio.SetWeight(ctx, c.rdb, source, weight))
}

// SetMassLimit runs at most n jobs of source at once in each pool, static
// or batch, across hosts; 0 removes the limit.
func (c *Client) SetMassLimit(ctx context.Context, source string, n int) error {
	if n < 0 {
		return invalidf("SetMassLimit: limit %d: must not be negative", n)
	}
	return massErr("set mass limit", massio.SetLimit(ctx, c.rdb, source, n))
}

// MassSettings lists the sources with a weight, a limit or a pause.
func (c *Client) MassSettings(ctx context.Context) ([]massqueue.SourceSetting, error) {
	s, err := massio.Settings(ctx, c.rdb)
	return s, massErr("mass settings", err)
}

// MassStatus reads the pools of cfg (nil: none) and of every pool Redis
// knows: units (alive when they beat within deadAfter; 0 means 30 s),
// batches with their remaining sizes, sources' active batches and
// backlogs, static jobs waiting.
func (c *Client) MassStatus(ctx context.Context, cfg *massqueue.Config, deadAfter time.Duration) (massqueue.Status, error) {
	st, err := massio.GetStatus(ctx, c.rdb, cfg, c.now(), deadAfter)
	return st, massErr("mass status", err)
}

// MassFailures lists the batches and static jobs the allocators could not
// place (batch:allocation_failures).
func (c *Client) MassFailures(ctx context.Context) ([]massqueue.Failure, error) {
	f, err := massio.Failures(ctx, c.rdb)
	return f, massErr("mass failures", err)
}

// ReallocateMass gives the allocation failure id (a batch id or a static
// job's id) another try; "" gives every one. It returns how many went back.
func (c *Client) ReallocateMass(ctx context.Context, id string) (int, error) {
	var n int
	var err error
	if id == "" {
		n, err = massio.ReallocateAll(ctx, c.rdb)
	} else {
		n, err = massio.Reallocate(ctx, c.rdb, id)
	}
	return n, massErr("reallocate mass", err)
}

// massErr is adminErr; the mass queue's argument errors (a bad source id,
// an empty name, a weight out of range, args that are not JSON) also
// match ErrInvalid.
func massErr(op string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range []string{"bad source id", "must not be empty", "is empty", "contains ':'", "weight", "not valid JSON", "is not <sourceId>", "bad config"} {
		if strings.Contains(msg, s) {
			return adminErr(op, err, ErrInvalid)
		}
	}
	return adminErr(op, err)
}

// MassPools are mass-queue pools by name.
type MassPools struct {
	Static, Batch []string
}

// MassPoolNames finds the pools MassStatus reads besides its config's: the
// registered static pools and those with a ring or state key, and the
// batch pools with units. Finding them takes SCANs of the keyspace, whose
// cost grows with it: a caller that asks often (a dashboard) keeps them a
// while and reads with MassStatusOf.
func (c *Client) MassPoolNames(ctx context.Context) (MassPools, error) {
	p, err := massio.FindPools(ctx, c.rdb)
	return MassPools{Static: p.Static, Batch: p.Batch}, massErr("mass pools", err)
}

// MassStatusOf is MassStatus of pools and those of cfg, without looking
// for others.
func (c *Client) MassStatusOf(ctx context.Context, pools MassPools, cfg *massqueue.Config, deadAfter time.Duration) (massqueue.Status, error) {
	st, err := massio.GetStatusOf(ctx, c.rdb, massio.Pools{Static: pools.Static, Batch: pools.Batch}, cfg, c.now(), deadAfter)
	return st, massErr("mass status", err)
}
