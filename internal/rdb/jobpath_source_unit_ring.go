package rdb

import "github.com/resque-go/resque-go/internal/protocol"

// sourceUnitRingLayout is source_unit_ring.lua's slice of the claim: a
// batch pool unit's description, from the base its flag names ("r<d>").
var sourceUnitRingLayout = jobpathLayout{Module: "source_unit_ring",
	Args: []string{"kind", "lists_prefix", "lists_subprefix", "holders_prefix", "settings"}}

// unitRingArgs describes a unit's ring to the claim (the unit's own keys
// are the claim's: its ring and its turns).
func (c *Client) unitRingArgs() []any {
	k := c.keys
	return []any{"u", k.Prefix(), protocol.CommittedPrefix, k.BatchHoldersPrefix(), k.MassSettings()}
}
