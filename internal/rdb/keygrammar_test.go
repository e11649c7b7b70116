package rdb

import (
	"strings"
	"testing"
)

// The mass queues' key grammar carries the parts the released server's
// keys are built from (docs/protocol.md#mass-queues), and only mass-queue
// scripts name it.
func TestMassKeyGrammar(t *testing.T) {
	want := map[string]string{
		"KEY_MASS_POOL_PREFIX": "pool:", "KEY_MASS_UNIT_QUEUES_SUFFIX": ":unit_queues",
		"KEY_MASS_HEARTBEATS_SUFFIX": ":heartbeats", "KEY_MASS_BACKLOG_SEP": ":backlog:",
		"KEY_MASS_UNIT_SEP": ":", "KEY_MASS_UNIT_SUFFIX": ":queues",
		"KEY_MASS_COMMITTED_PREFIX": "committed:", "KEY_MASS_BATCH_HOLDERS_PREFIX": "batch:holders:",
		"KEY_MASS_BATCH_PAUSED_PREFIX": "batch:paused:", "KEY_MASS_STATIC_POOLS": "static:pools",
		"KEY_MASS_STATIC_QUEUE_PREFIX": "static:queue:", "KEY_MASS_STATIC_QUEUE_SEP": ":",
		"KEY_MASS_STATIC_STATE_PREFIX": "static:state:", "KEY_MASS_STATIC_RING_PREFIX": "static:ring:",
		"KEY_MASS_ROUTE_PREFIX": "src:", "KEY_MASS_ROUTE_SEP": ":cfg:",
	}
	lines := strings.Split(massKeyGrammarLua(), "\n")
	names := strings.Split(strings.TrimSuffix(strings.TrimPrefix(lines[1], "local "), " ="), ", ")
	values := strings.Split(strings.TrimSpace(lines[2]), ", ")
	if len(names) != len(want) || len(values) != len(names) {
		t.Fatalf("%d names, %d values, want %d:\n%s", len(names), len(values), len(want), massKeyGrammarLua())
	}
	for i, n := range names {
		if got := strings.Trim(values[i], "'"); got != want[n] {
			t.Errorf("%s = %q, want %q", n, got, want[n])
		}
	}
	if !usesMassKeyGrammar(scriptSource("mass_route.lua")) || usesMassKeyGrammar(scriptSource("mass_batch_push.lua")) {
		t.Error("usesMassKeyGrammar does not tell mass_route.lua (uses it) from mass_batch_push.lua (does not)")
	}
}
