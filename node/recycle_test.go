package node_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/node"
)

// A node over its max_rss (1 byte: over at the first check) or its max_age
// drains by itself and says which limit; Recycled is false for a node that
// was stopped.
func TestNodeRecyclesOverALimit(t *testing.T) {
	t.Parallel()
	for limit, set := range map[string]func(*node.Config){
		node.LimitMaxRSS:  func(c *node.Config) { c.MaxRSS = 1 },
		node.LimitMaxAge:  func(c *node.Config) { c.MaxAge = time.Millisecond },
		node.LimitMaxJobs: func(c *node.Config) { c.MaxJobs = 1 },
	} {
		t.Run(limit, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			cfg := e.config("q")
			set(&cfg)
			n := e.node(cfg)
			if err := n.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			if limit == node.LimitMaxJobs {
				if err := e.client.Enqueue(context.Background(), "q", []byte(`{"class":"Job","args":[]}`)); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case <-n.Done():
			case <-time.After(20 * time.Second):
				t.Fatal("the node did not recycle itself")
			}
			if got, ok := n.Recycled(); !ok || got != limit {
				t.Errorf("Recycled() = %q, %v; want %q", got, ok, limit)
			}
			if w := e.workers(); len(w) != 0 {
				t.Errorf("workers after the recycle: %v", w)
			}
		})
	}
	e := newEnv(t)
	n := e.node(e.config("q"))
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	n.Stop()
	if got, ok := n.Recycled(); ok {
		t.Errorf("Recycled() after Stop = %q, true", got)
	}
}

// max_age travels in the node config as a duration string; a negative
// limit is a config error.
func TestNodeConfigRecycleLimits(t *testing.T) {
	t.Parallel()
	c := node.Config{Queues: "q", MaxJobs: 100, MaxRSS: 512 << 20, MaxAge: 90 * time.Minute}
	var b strings.Builder
	if err := c.Encode(&b); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(b.String()), &raw); err != nil {
		t.Fatal(err)
	}
	if raw["max_age"] != "1h30m0s" || raw["max_jobs"] != float64(100) || raw["max_rss"] != float64(512<<20) {
		t.Errorf("encoded: %s", b.String())
	}
	back, err := node.Decode(strings.NewReader(b.String()))
	if err != nil || back.MaxAge != c.MaxAge || back.MaxJobs != c.MaxJobs || back.MaxRSS != c.MaxRSS {
		t.Errorf("decoded %+v, %v", back, err)
	}
	if err := (node.Config{Queues: "q", MaxJobs: -1}).Validate(); err == nil {
		t.Error("a negative MaxJobs is accepted")
	}
}
