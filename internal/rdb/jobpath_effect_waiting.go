package rdb

import "github.com/resque-go/resque-go/internal/protocol"

// effectWaitingLayout is effect_waiting.lua's section of the finish: the
// retried job's next copy waits (resque-v3 monitored jobs).
var effectWaitingLayout = jobpathLayout{Module: "effect_waiting",
	Keys: []string{"<ns>:job:<new-id>:status"}, Args: []string{"tag"}}

// appendEffectWaiting appends effectWaitingLayout's section for the copy's id.
func appendEffectWaiting(k protocol.Keys, keys, args []any, newID string) ([]any, []any) {
	return append(keys, k.JobStatus(newID)), append(args, "n")
}
