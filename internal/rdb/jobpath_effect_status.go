package rdb

import "github.com/resque-go/resque-go/internal/protocol"

// effectStatusLayout is effect_status.lua's section of the finish: the
// finished job's status.
var effectStatusLayout = jobpathLayout{Module: "effect_status",
	Keys: []string{"<ns>:job:<id>:status"}, Args: []string{"tag", "status"}}

// appendEffectStatus appends effectStatusLayout's section: job id's
// status ("v3:<status>" or "php:<code>", protocol.JobStatus...).
func appendEffectStatus(k protocol.Keys, keys, args []any, id, status string) ([]any, []any) {
	return append(keys, k.JobStatus(id)), append(args, "s", status)
}
