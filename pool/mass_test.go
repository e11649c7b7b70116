package pool

import (
	"strings"
	"testing"
)

// The released resqu-server section (node_id, pools, mapping) in a pool
// file becomes one child per static pool (worker_count slots) and one per
// unit (workers_per_unit slots), each working its ring; a file with only
// that section needs no workers list.
func TestParseMassSection(t *testing.T) {
	cfg := parse(t, `
node_id: web_1
pools:
  static: {general: {worker_count: 3}}
  batch:  {imports: {unit_count: 2, workers_per_unit: 4}}
mapping:
  static: {default: {default: general}}
  batch:  {default: {default: imports}}
`, LoadOptions{})
	if cfg.Mass == nil || cfg.Mass.NodeID != "web_1" {
		t.Fatalf("mass config = %+v", cfg.Mass)
	}
	var got []string
	for _, set := range cfg.Sets {
		child := cfg.Child(set)
		if child.Queues != "" || child.Mass != set.Mass {
			t.Errorf("child of %+v: queues %q mass %q", set, child.Queues, child.Mass)
		}
		if err := child.Validate(); err != nil {
			t.Errorf("child of %s: %v", set.Mass, err)
		}
		got = append(got, set.Mass+"x"+itoa(child.Concurrency))
	}
	want := "static:generalx3 unit:imports:web_1-0x4 unit:imports:web_1-1x4"
	if strings.Join(got, " ") != want {
		t.Errorf("sets = %v, want %s", got, want)
	}
	mixed := parse(t, "workers: [{queues: q, processes: 1}]\nnode_id: n\npools: {static: {s: {worker_count: 1}}}\nmapping: {static: {default: {default: s}}}\n", LoadOptions{})
	if len(mixed.Sets) != 2 || mixed.Sets[0].Queues != "q" || mixed.Sets[1].Mass != "static:s" {
		t.Errorf("mixed sets = %+v", mixed.Sets)
	}
	if _, err := Parse("pool.yml", []byte("pools: {static: {s: {worker_count: 1}}}\n"), LoadOptions{}); err == nil || !strings.Contains(err.Error(), "default") {
		t.Errorf("a mapping without default.default: err = %v", err)
	}
}

// A file's limits and rates count jobs of Resque queues: its worker sets'
// children get them, its mass pools' children (which refuse them) do not.
// Before, every mass child of a file with limits: failed to start.
func TestLimitsSkipMassChildren(t *testing.T) {
	cfg := parse(t, "limits: {A: 2}\nrates: {B: 10/1s}\nworkers: [{queues: q, processes: 1}]\nnode_id: n\n"+
		"pools: {static: {s: {worker_count: 1}}}\nmapping: {static: {default: {default: s}}}\n", LoadOptions{})
	for _, set := range cfg.Sets {
		n := cfg.Child(set)
		if err := n.Validate(); err != nil {
			t.Errorf("set %q: %v", set.Queues, err)
		}
		limited := len(n.Limits) > 0 && len(n.Rates) > 0
		if limited != (set.Mass == "") {
			t.Errorf("set %q (mass %q): limits %v, rates %v", set.Queues, set.Mass, n.Limits, n.Rates)
		}
	}
}
