package rdb

import (
	"strconv"
	"strings"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// finishLayout is the core finish's layout (scripts/jobpath/finish.lua):
// 8 keys for ok and discard, 11 for fail, 20 for retry and reschedule; 10
// arguments, 14 for retry and reschedule. The effects that apply follow.
var finishLayout = jobpathLayout{Module: "finish",
	Keys: []string{"worker:<id>", "claim-sequences", "stat:processed", "stat:processed:<id>",
		"job:<id>:status", "failed", "attempts:<digest>", "attempts-index",
		"stat:failed", "stat:failed:<id>", "queuestat:failed:<q>",
		"retries", "stat:retries", "queuestat:retries:<q>", "source", "queues",
		"delayed:<ts>", "timestamps:<item>", "delayed_queue_schedule", "job:<new-id>:status"},
	Args: []string{"worker-id", "seq", "outcome", "status", "now", "entry", "class", "queue",
		"attempts", "attempts-ttl", "push", "due", "waiting", "delayed-member"},
}

// finishKeysArgs lays out the finish's keys and arguments: the outcome's,
// then the sections of the effects that apply to this job, in the order
// jobpath/finish.lua reads them (finishPush, effectRelease, effectUnique,
// effectWake); one that does not apply sends nothing.
func (c *Client) finishKeysArgs(workerID, host string, src protocol.Source, o Outcome) (keys, args []any) {
	queue, statQueue := src.Queue, src.Queue
	if o.StatQueue != "" {
		statQueue = o.StatQueue
	}
	k := c.keys
	if o.Kind == "" {
		o.Kind = OutcomeOK
	}
	statusKey := k.Worker(workerID) // a placeholder: the script ignores it without a status
	if o.Status != "" {
		statusKey = k.JobStatus(o.JobID)
	}
	attemptsKey, attempts := statusKey, ""
	if o.AttemptsDigest != "" {
		attemptsKey, attempts = k.Attempts(o.AttemptsDigest), strconv.Itoa(max(o.Attempts, 0))
	}
	ttl := int64(o.AttemptsTTL / time.Second)
	if ttl <= 0 {
		ttl = 1
	}
	keys = []any{k.Worker(workerID), k.ClaimSeqs(), k.StatProcessed(), k.StatProcessedWorker(workerID),
		statusKey, k.Failed(), attemptsKey, k.AttemptsIndex()}
	args = []any{workerID, o.Seq, string(o.Kind), o.Status, o.Now.Unix(), o.Entry, o.Class, queue, attempts, ttl}
	pushed := false // a retry or reschedule pushed to its source at once
	switch o.Kind {
	case OutcomeFail:
		keys = append(keys, k.StatFailed(), k.StatFailedWorker(workerID),
			k.QueueStat(host, protocol.QueueStatFailed, statQueue))
	case OutcomeRetry, OutcomeReschedule:
		delayedKey, tsKey := k.Delayed(o.DueAt), k.Timestamps(o.Push)
		if o.DueAt <= 0 {
			delayedKey, tsKey = statusKey, statusKey // unused by the script
			pushed = true
		}
		newWaiting, newStatusKey := "0", statusKey
		if o.NewJobID != "" {
			newWaiting, newStatusKey = "1", k.JobStatus(o.NewJobID)
		}
		keys = append(keys, k.StatFailed(), k.StatFailedWorker(workerID),
			k.QueueStat(host, protocol.QueueStatFailed, statQueue),
			k.Retries(), k.StatRetries(), k.QueueStat(host, protocol.QueueStatRetries, statQueue),
			k.SourceKey(src), k.Queues(), delayedKey, tsKey, k.DelayedSchedule(), newStatusKey)
		args = append(args, o.Push, o.DueAt, newWaiting, protocol.DelayedMember(o.DueAt))
	}
	if pushed && joinsQueues(k, src) {
		keys, args = appendFinishPush(keys, args)
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
	return keys, args
}

// joinsQueues reports whether a job pushed back to src's list joins the
// queues set: src's list is a Resque queue (its key ends as the queue's,
// queue:<q>), not a mass pool's list or a batch.
func joinsQueues(k protocol.Keys, src protocol.Source) bool {
	return strings.HasSuffix(k.SourceKey(src), strings.TrimPrefix(k.Queue(src.Queue), k.Prefix()))
}
