package rdb

// finishPushLayout is finish_push.lua's section of the finish: a retry or
// reschedule pushed at once to a Resque queue, which joins queues.
var finishPushLayout = jobpathLayout{Module: "finish_push", Args: []string{"tag"}}

// appendFinishPush appends finishPushLayout's section.
func appendFinishPush(keys, args []any) ([]any, []any) {
	return keys, append(args, "q")
}
