package rdb

import (
	"strconv"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// effectDepsLayout is effect_deps.lua's section of the finish: the ended
// job's outcome, and the held jobs waiting for it.
var effectDepsLayout = jobpathLayout{Module: "effect_deps",
	Keys: []string{"<ns>:resque-go:deps:outcome:<id>", "<ns>:resque-go:deps:children:<id>"},
	Args: []string{"tag", "id", "prefix", "failed_at", "queue_time", "ttl"}}

// appendEffectDeps appends effectDepsLayout's section for job id.
func appendEffectDeps(k protocol.Keys, keys, args []any, id string, now time.Time) ([]any, []any) {
	return append(keys, k.DepOutcome(id), k.DepChildren(id)), append(args, "p", id, k.DepPrefix(),
		protocol.FormatFailedAt(now), protocol.FormatQueueTime(now), strconv.Itoa(protocol.DepOutcomeTTLSeconds))
}
