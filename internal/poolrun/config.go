package poolrun

import (
	"encoding/json"

	"github.com/resque-go/resque-go/node"
)

// childKey identifies a child's config: children with equal keys are
// interchangeable.
func childKey(n node.Config) string {
	b, _ := json.Marshal(n) // a node.Config always encodes
	return string(b)
}
