package massio

import (
	"context"
	"fmt"
	"sort"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
)

// Resolve tells where kind's job of source goes: src:<s>:cfg:<j>,
// src:<s>:cfg:default, then the config's mapping; the order the
// allocators follow.
func Resolve(ctx context.Context, c *rdb.Client, cfg *massqueue.Config, kind massqueue.Kind, source, job string) (massqueue.Route, error) {
	r := massqueue.Route{Kind: kind, Source: source, Job: job}
	forJob, forSource, err := c.RouteOverrides(ctx, source, job)
	if err != nil {
		return r, fmt.Errorf("massqueue: %w", err)
	}
	switch {
	case forJob != "":
		r.Pool, r.From = forJob, "src:"+source+":cfg:"+job
	case forSource != "":
		r.Pool, r.From = forSource, "src:"+source+":cfg:default"
	default:
		r.Pool, r.From = cfg.Map(kind, source, job)
	}
	r.Problem = cfg.RouteProblem(kind, r.Pool)
	return r, nil
}

// SetRoute makes source's job (Default for every job of the source) go to
// pool, overriding the config mapping (src:<s>:cfg:<j>). An empty pool
// removes the override.
func SetRoute(ctx context.Context, c *rdb.Client, source, job, pool string) error {
	if err := protocol.CheckSourceID(source); err != nil {
		return fmt.Errorf("massqueue: %w", err)
	}
	if job == "" {
		job = massqueue.Default
	}
	if pool != "" {
		if err := protocol.CheckPoolName(pool); err != nil {
			return fmt.Errorf("massqueue: %w", err)
		}
	}
	if err := c.SetRoute(ctx, source, job, pool); err != nil {
		return fmt.Errorf("massqueue: %w", err)
	}
	return nil
}

// Routes lists the src: overrides and the config's mapping entries, each
// as a Route (overrides first, by source and job; then the mapping).
func Routes(ctx context.Context, c *rdb.Client, cfg *massqueue.Config) ([]massqueue.Route, error) {
	ov, err := c.ListRoutes(ctx)
	if err != nil {
		return nil, fmt.Errorf("massqueue: %w", err)
	}
	sort.Slice(ov, func(i, j int) bool {
		if ov[i].Source != ov[j].Source {
			return ov[i].Source < ov[j].Source
		}
		return ov[i].Job < ov[j].Job
	})
	var out []massqueue.Route
	for _, o := range ov {
		r := massqueue.Route{Source: o.Source, Job: o.Job, Pool: o.Pool, From: "src:" + o.Source + ":cfg:" + o.Job}
		switch {
		case cfg == nil:
		case cfg.HasStatic(o.Pool):
			r.Kind = massqueue.KindStatic
		case cfg.HasBatch(o.Pool):
			r.Kind = massqueue.KindBatch
		default:
			r.Problem = "no pool " + o.Pool + " in this config"
		}
		out = append(out, r)
	}
	if cfg == nil {
		return out, nil
	}
	for _, k := range []massqueue.Kind{massqueue.KindStatic, massqueue.KindBatch} {
		m := cfg.StaticMapping
		if k == massqueue.KindBatch {
			m = cfg.BatchMapping
		}
		for _, src := range sortedKeys(m) {
			for _, job := range sortedKeys(m[src]) {
				pool := m[src][job]
				out = append(out, massqueue.Route{Kind: k, Source: src, Job: job, Pool: pool,
					From: fmt.Sprintf("mapping.%s.%s.%s", k, src, job), Problem: cfg.RouteProblem(k, pool)})
			}
		}
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
