package rdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"
)

var massResumeScript = loadScript("mass_resume.lua", 5)

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
