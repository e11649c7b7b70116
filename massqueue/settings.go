package massqueue

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// Per-source settings of static pools (they apply in every static pool).
// Claims read them on every turn, so a change takes effect at once.

// SetWeight makes a source take weight jobs per turn of its pools' rings
// (default 1): with full backlogs, sources' shares follow their weights.
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
	return setting(ctx, c, source, rdb.SettingWeight, v)
}

// SetLimit caps a source at n jobs running at once in each static pool,
// across every host; n <= 0 removes the cap. A slot is held by a worker's
// claim and freed by its finish, requeue or dead-worker recovery.
func SetLimit(ctx context.Context, c *rdb.Client, source string, n int) error {
	if err := protocol.CheckSourceID(source); err != nil {
		return fmt.Errorf("massqueue: %w", err)
	}
	v := ""
	if n > 0 {
		v = strconv.Itoa(n)
	}
	return setting(ctx, c, source, rdb.SettingLimit, v)
}

// Pause stops a source's static jobs from being claimed (running ones
// finish; new ones queue up).
func Pause(ctx context.Context, c *rdb.Client, source string) error {
	if err := protocol.CheckSourceID(source); err != nil {
		return fmt.Errorf("massqueue: %w", err)
	}
	return setting(ctx, c, source, rdb.SettingPaused, "1")
}

// Resume lets a paused source's jobs be claimed again, in every static
// pool it has work in (those Redis knows of, and pools). It returns the
// pools whose ring it went back on.
func Resume(ctx context.Context, c *rdb.Client, source string, pools ...string) ([]string, error) {
	if err := protocol.CheckSourceID(source); err != nil {
		return nil, fmt.Errorf("massqueue: %w", err)
	}
	if err := setting(ctx, c, source, rdb.SettingPaused, ""); err != nil {
		return nil, err
	}
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
	var woke []string
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

// SourceSetting is a source's settings.
type SourceSetting struct {
	Source string `json:"source"`
	Weight int    `json:"weight"`
	// Limit is 0 without a cap.
	Limit  int  `json:"limit"`
	Paused bool `json:"paused"`
}

// Settings lists the sources with settings, by source.
func Settings(ctx context.Context, c *rdb.Client) ([]SourceSetting, error) {
	m, err := c.SourceSettings(ctx)
	if err != nil {
		return nil, fmt.Errorf("massqueue: %w", err)
	}
	out := make([]SourceSetting, 0, len(m))
	for s, f := range m {
		x := SourceSetting{Source: s, Weight: 1, Paused: f[rdb.SettingPaused] == "1"}
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
