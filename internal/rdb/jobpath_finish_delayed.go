package rdb

import "github.com/resque-go/resque-go/internal/protocol"

// finishDelayedLayout is finish_delayed.lua's section of the finish: a
// retry or reschedule pushed through the delayed queue.
var finishDelayedLayout = jobpathLayout{Module: "finish_delayed",
	Keys: []string{"<ns>:delayed:<ts>", "<ns>:timestamps:<item>", "<ns>:delayed_queue_schedule"}, Args: []string{"tag", "delayed-member"}}

// appendFinishDelayed appends finishDelayedLayout's section for item, due
// at Unix second due.
func appendFinishDelayed(k protocol.Keys, keys, args []any, due int64, item []byte) ([]any, []any) {
	return append(keys, k.Delayed(due), k.Timestamps(item), k.DelayedSchedule()),
		append(args, "d", protocol.DelayedMember(due))
}
