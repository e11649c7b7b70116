package rdb

import (
	"strconv"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// JobEnd is what a job that leaves its slot without a finish (a hard
// stop's requeue, a dead worker's recovery) settles in the same step, with
// the code the finish uses (scripts/ends.lua). Only what is set is sent:
// the zero value, a plain job with caps, dependencies and events off,
// sends nothing.
type JobEnd struct {
	// Limits are the caps' slots the job holds (docs/limits.md): freed at
	// once instead of when their lease ends. Seq is the claim's sequence
	// that names the holds (Prune reads it when empty).
	Limits []LimitHold
	Seq    string
	// Lease frees, with Limits, the worker's part of its process's lease
	// on those caps (LeaseMember): a dead worker's job may have been
	// claimed under it.
	Lease bool
	// DepsID (set only while dependencies are in use) and Group are as
	// Outcome's: a job recorded as failed (a recovery past its maximum)
	// settles the jobs waiting for it and is counted in its group. A job
	// put back has not ended: they wait on.
	DepsID, Group string
	// JobID, Class, Queue and Attempt describe the job for its event
	// ("requeued" or "failed") while the client's events are on.
	JobID, Class, Queue string
	Attempt             int
	Now                 time.Time
	// Events, when on, writes the event with these settings though the
	// client's events are off: the step is taken by a process whose
	// client is not the workers' (resque-go pool's observer recovering a
	// dead child's job), with the workers' settings.
	Events EventsConfig
}

// appendEnds appends ends.lua's sections that apply to e for worker wid.
func (c *Client) appendEnds(keys, args []any, wid string, e JobEnd) ([]any, []any) {
	k := c.keys
	if len(e.Limits) > 0 && e.Seq != "" {
		keys, args = appendEffectLimits(k, keys, args, LimitMember(wid, e.Seq), e.Now.UnixMilli(), e.Limits)
	}
	if len(e.Limits) > 0 && e.Lease {
		keys, args = appendEffectLimits(k, keys, args, LeaseMember(wid), e.Now.UnixMilli(), e.Limits)
	}
	if e.DepsID != "" {
		keys, args = appendEffectDeps(k, keys, args, e.DepsID, e.Now)
	}
	if e.Group != "" {
		keys, args = appendEffectGroup(k, keys, args, e.Group, e.Now)
	}
	ev := c.events
	if ev == nil && e.Events.On {
		ev = newEventsParts(k, e.Events)
	}
	if ev != nil {
		keys = append(keys, ev.stream)
		args = append(args, "e", ev.maxLen, ev.maxAge, e.JobID, strconv.Itoa(max(e.Attempt, 1)), e.Class, e.Queue,
			strconv.FormatInt(e.Now.Unix(), 10))
	}
	return keys, args
}

// endsFragments are the modules requeue.lua and prune.lua load for
// ends.lua, each after those it calls.
var endsFragments = []string{"hot_globals.lua", "set_aside_key.lua", "jobpath/effect_release.lua", "jobpath/effect_wake.lua",
	"jobpath/effect_limits.lua", "jobpath/effect_events.lua", "jobpath/effect_deps.lua", "jobpath/effect_group.lua", "ends.lua"}

// scriptKeysArgs is keys and args as a script loaded with -1 keys takes them.
func scriptKeysArgs(keys, args []any) []any {
	return append(append([]any{len(keys)}, keys...), args...)
}

// LimitHoldsOf are the caps' slots a job of queue q claimed from src holds
// under rules: the claim took them by the same rules (protocol.Limit.LimitHeld),
// and only from a plain queue.
func LimitHoldsOf(rules []protocol.Limit, src protocol.Source, q, class string, payload []byte) []LimitHold {
	if src.List != "" || src.Serial || src.Ring != "" {
		return nil
	}
	var hs []LimitHold
	for _, r := range rules {
		if r.Kind != protocol.LimitCap {
			continue
		}
		if name, ok := r.LimitHeld(q, class, payload); ok {
			hs = append(hs, LimitHold{Name: name, Cap: r.N})
		}
	}
	return hs
}
