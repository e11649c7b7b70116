package rdb

import (
	"strconv"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// effectGroupLayout is effect_group.lua's section of the finish: the ended
// job counted in its group.
var effectGroupLayout = jobpathLayout{Module: "effect_group",
	Keys: []string{"<ns>:resque-go:group:<g>", "<ns>:resque-go:group:<g>:children"},
	Args: []string{"tag", "group", "prefix", "failed_at", "queue_time", "ttl"}}

// appendEffectGroup appends effectGroupLayout's section for group g.
func appendEffectGroup(k protocol.Keys, keys, args []any, g string, now time.Time) ([]any, []any) {
	return append(keys, k.Group(g), k.GroupChildren(g)), append(args, "g", g, k.DepPrefix(),
		protocol.FormatFailedAt(now), protocol.FormatQueueTime(now), strconv.Itoa(protocol.DepOutcomeTTLSeconds))
}
