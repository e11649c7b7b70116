package rdb

import (
	"strings"

	"github.com/resque-go/resque-go/internal/protocol"
)

// finishLayout is the core finish's layout (scripts/jobpath/finish.lua):
// 5 keys for ok and discard, 8 for fail, 13 for retry and reschedule; 7
// arguments, 9 for retry and reschedule. The effects that apply follow.
var finishLayout = jobpathLayout{Module: "finish",
	Keys: []string{"<ns>:worker:<id>", "<ns>:claim-sequences", "<ns>:stat:processed", "<ns>:stat:processed:<id>", "<ns>:failed",
		"<ns>:stat:failed", "<ns>:stat:failed:<id>", "<ns>:queuestat:failed:<q>",
		"<ns>:retries", "<ns>:stat:retries", "<ns>:queuestat:retries:<q>", "<ns>:source", "<ns>:queues"},
	Args: []string{"worker-id", "seq", "outcome", "now", "entry", "class", "queue", "push", "due"},
}

// finishKeysArgs lays out the finish's keys and arguments: the outcome's,
// then the sections of the effects that apply to this job, in the order
// finish.lua lists them; one that does not apply sends nothing.
func (c *Client) finishKeysArgs(workerID, host string, src protocol.Source, o Outcome) (keys, args []any) {
	queue, statQueue := src.Queue, src.Queue
	if o.StatQueue != "" {
		statQueue = o.StatQueue
	}
	k := c.keys
	if o.Kind == "" {
		o.Kind = OutcomeOK
	}
	keys = []any{k.Worker(workerID), k.ClaimSeqs(), k.StatProcessed(), k.StatProcessedWorker(workerID), k.Failed()}
	args = []any{workerID, o.Seq, string(o.Kind), o.Now.Unix(), o.Entry, o.Class, queue}
	again := o.Kind == OutcomeRetry || o.Kind == OutcomeReschedule
	switch o.Kind {
	case OutcomeFail:
		keys = append(keys, k.StatFailed(), k.StatFailedWorker(workerID),
			k.QueueStat(host, protocol.QueueStatFailed, statQueue))
	case OutcomeRetry, OutcomeReschedule:
		keys = append(keys, k.StatFailed(), k.StatFailedWorker(workerID),
			k.QueueStat(host, protocol.QueueStatFailed, statQueue),
			k.Retries(), k.StatRetries(), k.QueueStat(host, protocol.QueueStatRetries, statQueue),
			k.SourceKey(src), k.Queues())
		args = append(args, o.Push, o.DueAt)
	}
	pushed := again && o.DueAt <= 0 // pushed to its source at once
	if pushed && joinsQueues(k, src) {
		keys, args = appendFinishPush(keys, args)
	}
	if again && o.DueAt > 0 {
		keys, args = appendFinishDelayed(k, keys, args, o.DueAt, o.Push)
	}
	if o.Status != "" {
		keys, args = appendEffectStatus(k, keys, args, o.JobID, o.Status)
	}
	if o.AttemptsDigest != "" {
		keys, args = appendEffectAttempts(k, keys, args, o.AttemptsDigest, o.Attempts, o.AttemptsTTL)
	}
	if again && o.NewJobID != "" {
		keys, args = appendEffectWaiting(k, keys, args, o.NewJobID)
	}
	if o.Token != "" && src.Serial {
		keys, args = appendEffectRelease(k, keys, args, src.Queue, o.Token)
	}
	if o.UniqueID != "" {
		keys, args = appendEffectUnique(k, keys, args, o.UniqueID, o.Now)
	}
	if ring, state, source, static := k.StaticWakeKeys(src); pushed && static {
		keys, args = appendEffectWake(keys, args, ring, state, source)
	}
	if len(o.Limits) > 0 {
		keys, args = appendEffectLimits(k, keys, args, LimitMember(workerID, o.Seq), o.Now.UnixMilli(), o.Limits)
	}
	if o.DepsID != "" && !again {
		keys, args = appendEffectDeps(k, keys, args, o.DepsID, o.Now)
	}
	if o.Group != "" && !again {
		keys, args = appendEffectGroup(k, keys, args, o.Group, o.Now)
	}
	if len(o.Tags) > 0 && o.JobID != "" && !again {
		keys, args = appendEffectTags(k, keys, args, o.JobID, o.Tags)
	}
	if c.events != nil {
		keys, args = appendEffectEvents(c.events, keys, args, o)
	}
	return keys, args
}

// joinsQueues reports whether a job pushed back to src's list joins the
// queues set: src's list is a Resque queue (its key ends as the queue's,
// queue:<q>), not a mass pool's list or a batch.
func joinsQueues(k protocol.Keys, src protocol.Source) bool {
	return strings.HasSuffix(k.SourceKey(src), strings.TrimPrefix(k.Queue(src.Queue), k.Prefix()))
}
