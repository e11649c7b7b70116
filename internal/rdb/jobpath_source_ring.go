package rdb

import "github.com/resque-go/resque-go/internal/protocol"

// sourceRingLayout is source_ring.lua's slice of the claim: a ring's
// description, from the base its flag names ("r<d>").
var sourceRingLayout = jobpathLayout{Module: "source_ring",
	Args: []string{"kind", "lists_prefix", "lists_subprefix", "holders_prefix", "record_queue", "parked", "settings"}}

// ringArgs is how many arguments describe a ring to the claim.
const ringArgs = 7

// ringArgs describes ring source s to the claim (sourceRingLayout).
func (c *Client) ringArgs(s protocol.Source) []any {
	k := c.keys
	if s.Ring == protocol.RingStatic {
		return []any{"s", k.StaticSourceQueue(s.Pool, ""), protocol.StaticSourcePrefix(s.Pool), k.StaticHoldersPrefix(s.Pool),
			string(protocol.MarshalString(s.Queue)), k.StaticParked(s.Pool), k.MassSettings()}
	}
	return []any{"u", k.Prefix(), protocol.CommittedPrefix, k.BatchHoldersPrefix(), "", "", k.MassSettings()}
}
