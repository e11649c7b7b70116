package rdb

import "github.com/resque-go/resque-go/internal/protocol"

// sourceStaticRingLayout is source_static_ring.lua's slice of the claim: a
// static pool's description, from the base its flag names ("r<d>").
var sourceStaticRingLayout = jobpathLayout{Module: "source_static_ring",
	Args: []string{"kind", "lists_prefix", "lists_subprefix", "holders_prefix", "record_queue", "parked", "settings"}}

// staticRingArgs describes static pool source s to the claim.
func (c *Client) staticRingArgs(s protocol.Source) []any {
	k := c.keys
	return []any{"s", k.StaticSourceQueue(s.Pool, ""), protocol.StaticSourcePrefix(s.Pool), k.StaticHoldersPrefix(s.Pool),
		string(protocol.MarshalString(s.Queue)), k.StaticParked(s.Pool), k.MassSettings()}
}

// ringArgs describes ring source s to the claim: its module's slice.
func (c *Client) ringArgs(s protocol.Source) []any {
	if s.Ring == protocol.RingStatic {
		return c.staticRingArgs(s)
	}
	return c.unitRingArgs()
}
