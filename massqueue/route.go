package massqueue

import (
	"fmt"
)

// Route is where a source's job goes, and why.
type Route struct {
	Kind   Kind   `json:"kind"`
	Source string `json:"source"`
	Job    string `json:"job"`
	Pool   string `json:"pool"`
	// From names what chose the pool: src:<s>:cfg:<j>, src:<s>:cfg:default,
	// or a mapping entry (mapping.static.default.default, ...).
	From string `json:"from"`
	// Problem is set when the pool is not one of the config's pools of
	// Kind (the allocators then record such jobs in
	// batch:allocation_failures, unless another host serves the pool).
	Problem string `json:"problem,omitempty"`
}

// RouteProblem says why jobs of kind routed to pool cannot run under c:
// no default route, or no pool of that kind by that name; "" when they can.
func (c *Config) RouteProblem(kind Kind, pool string) string {
	switch {
	case pool == "":
		return fmt.Sprintf("mapping.%s has no default.default", kind)
	case kind == KindStatic && c.HasStatic(pool), kind == KindBatch && c.HasBatch(pool):
		return ""
	case kind == KindStatic && c.HasBatch(pool):
		return "pool " + pool + " is a batch pool"
	case kind == KindBatch && c.HasStatic(pool):
		return "pool " + pool + " is a static pool"
	}
	return "no " + string(kind) + " pool " + pool + " in this config"
}
