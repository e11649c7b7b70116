package rdb

import (
	"strings"
	"sync"

	"github.com/resque-go/resque-go/internal/protocol"
)

// keyGrammarLua is the front of every script: the parts of the key names a
// script builds around a name it learns only inside (a claimed job's id or
// uid, a deferred job's queue, a worker id), taken from internal/protocol,
// so the key grammar is written in one place (TestLuaKeyLiterals fails on
// a key's part written in Lua). Locals of the chunk: a function library
// keeps them, a script (EVALSHA) assigns them once a call.
var keyGrammarLua = sync.OnceValue(func() string {
	const ns, id = "N", "\x01"
	k := protocol.NewKeys(ns)
	bare := func(key string) string { return strings.TrimPrefix(key, ns+":") }
	before := func(s string) string { i := strings.Index(s, id); return s[:i] }
	after := func(s string) string { i := strings.Index(s, id); return s[i+len(id):] }
	parts := []struct{ name, value string }{
		// the Resque queue <ns>:queue:<q> and the set of their names
		{"KEY_QUEUE_PREFIX", before(bare(k.Queue(id)))},
		{"KEY_QUEUES", bare(k.Queues())},
		// resque-scheduler's delayed queue: delayed:<ts>, timestamps:<item>
		// (whose members are delayed:<ts>), delayed_queue_schedule
		{"KEY_DELAYED_PREFIX", strings.TrimSuffix(bare(k.Delayed(1)), "1")},
		{"KEY_TIMESTAMPS_PREFIX", before(bare(k.Timestamps([]byte(id))))},
		{"KEY_DELAYED_MEMBER_PREFIX", strings.TrimSuffix(protocol.DelayedMember(1), "1")},
		{"KEY_DELAYED_SCHEDULE", bare(k.DelayedSchedule())},
		// a released deferred unique mass job goes back through
		// unassigned, after its delay through the deferred zset
		{"KEY_MASS_UNASSIGNED", bare(k.Unassigned())},
		{"KEY_MASS_DEFERRED", bare(k.MassDeferred())},
		// <unique prefix><uid>:state and <status prefix><id>:status
		{"KEY_UNIQUE_STATE_SUFFIX", after(k.UniqueState(id))},
		{"KEY_JOB_STATUS_SUFFIX", after(k.JobStatus(id))},
		// stat:processed:<id> after stat:processed
		{"KEY_PROCESSED_SEP", before(strings.TrimPrefix(k.StatProcessedWorker(id), k.StatProcessed()))},
		// dependencies and groups (effect_deps.lua): a held job's hash,
		// outcome and held jobs, built from its id; a group's hash and
		// held jobs, from its name; the failed list and the dropped count
		{"KEY_FAILED", bare(k.Failed())},
		{"KEY_DEP_HELD_PREFIX", before(bare(k.DepHeld(id)))},
		{"KEY_DEP_OUTCOME_PREFIX", before(bare(k.DepOutcome(id)))},
		{"KEY_DEP_CHILDREN_PREFIX", before(bare(k.DepChildren(id)))},
		{"KEY_DEP_DROPPED", bare(k.DepDropped())},
		{"KEY_GROUP_PREFIX", before(bare(k.Group(id)))},
		{"KEY_GROUP_CHILDREN_SUFFIX", after(k.GroupChildren(id))},
	}
	names, values := make([]string, len(parts)), make([]string, len(parts))
	for i, p := range parts {
		if p.value == "" || strings.ContainsAny(p.value, "'\\\n"+id) {
			panic("rdb: key grammar part " + p.name + " is " + p.value) // a protocol change the prologue cannot carry
		}
		names[i], values[i] = p.name, "'"+p.value+"'"
	}
	return "-- key names' parts, from internal/protocol (keygrammar.go)\nlocal " +
		strings.Join(names, ", ") + " =\n  " + strings.Join(values, ", ") + "\n"
})
