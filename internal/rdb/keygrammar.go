package rdb

import (
	"strconv"
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
	parts := []part{
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
		// a limit's keys after its base, <ns>:resque-go:limit:<name>
		{"KEY_LIMIT_HOLDERS_SUFFIX", protocol.LimitHoldersSuffix},
		{"KEY_LIMIT_PARKED_SUFFIX", protocol.LimitParkedSuffix},
		{"KEY_LIMIT_TAT_SUFFIX", protocol.LimitTATSuffix},
		{"KEY_LIMIT_WAITING_SUFFIX", protocol.LimitWaitingSuffix},
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
		// a tag's index, from the tag a held job's payload names
		{"KEY_TAG_PREFIX", before(bare(k.Tag(id)))},
		// the keys set aside (set_aside_key.lua): the hash, and what
		// follows the namespace in every key it names
		{"KEY_SET_ASIDE", bare(k.SetAside())},
		{"KEY_OWN_PREFIX", k.OwnPrefix()},
		// and its bounds: at most this many keys, gone this many seconds
		// after its last write
		{"SET_ASIDE_MAX", strconv.Itoa(protocol.SetAsideMax)},
		{"SET_ASIDE_TTL", strconv.Itoa(int(protocol.SetAsideTTL.Seconds()))},
	}
	return luaLocals("key names' parts", parts)
})

// massKeys names, in a script's fragments, the mass queues' part of the key
// grammar (massKeyGrammarLua): only the mass-queue scripts, which build the
// keys of a pool, batch or source they learn inside, carry it.
const massKeys = "mass key grammar"

// loadMassScript is loadScriptWith for a mass-queue script: the mass key
// grammar, then its fragments.
func loadMassScript(name string, keys int, fragments ...string) *script {
	return loadScriptWith(name, keys, append([]string{massKeys}, fragments...)...)
}

// massKeyGrammarLua is the mass queues' key names around the pool, unit,
// batch or source a script learns from a pop or a payload, from
// internal/protocol; after keyGrammarLua, in front of the mass-queue
// scripts only.
var massKeyGrammarLua = sync.OnceValue(func() string {
	const ns, id, id2 = "N", "\x01", "\x02"
	k := protocol.NewKeys(ns)
	bare := func(key string) string { return strings.TrimPrefix(key, ns+":") }
	before := func(s string) string { i := strings.Index(s, id); return s[:i] }
	after := func(s string) string { i := strings.Index(s, id); return s[i+len(id):] }
	between := func(s string) string { i, j := strings.Index(s, id), strings.Index(s, id2); return s[i+len(id) : j] }
	parts := []part{
		// a batch pool's keys: pool:<pool> (source -> unit),
		// pool:<pool>:unit_queues, pool:<pool>:heartbeats,
		// pool:<pool>:backlog:<source>, and the unit's list
		// pool:<pool>:<unit>:queues, a member of unit_queues
		{"KEY_MASS_POOL_PREFIX", before(bare(k.PoolSources(id)))},
		{"KEY_MASS_UNIT_QUEUES_SUFFIX", after(k.PoolUnitQueues(id))},
		{"KEY_MASS_HEARTBEATS_SUFFIX", after(k.UnitHeartbeats(id))},
		{"KEY_MASS_BACKLOG_SEP", between(k.Backlog(id, id2))},
		{"KEY_MASS_UNIT_SEP", between(protocol.UnitQueuesMember(id, id2))},
		{"KEY_MASS_UNIT_SUFFIX", after(protocol.UnitQueuesMember("p", id))},
		// a batch's keys: committed:<id>, batch:holders:<id>, and the
		// batches of a paused source, batch:paused:<pool>
		{"KEY_MASS_COMMITTED_PREFIX", before(bare(k.Committed(id)))},
		{"KEY_MASS_BATCH_HOLDERS_PREFIX", bare(k.BatchHoldersPrefix())},
		{"KEY_MASS_BATCH_PAUSED_PREFIX", before(bare(k.BatchPaused(id)))},
		// a static pool's keys: static:pools, static:queue:<pool>:<source>,
		// static:state:<pool>, static:ring:<pool>
		{"KEY_MASS_STATIC_POOLS", bare(k.StaticPools())},
		{"KEY_MASS_STATIC_QUEUE_PREFIX", before(bare(k.StaticSourceQueue(id, id2)))},
		{"KEY_MASS_STATIC_QUEUE_SEP", between(k.StaticSourceQueue(id, id2))},
		{"KEY_MASS_STATIC_STATE_PREFIX", before(bare(k.StaticState(id)))},
		{"KEY_MASS_STATIC_RING_PREFIX", before(bare(k.StaticRing(id)))},
		// an operator's route, src:<source>:cfg:<job>
		{"KEY_MASS_ROUTE_PREFIX", bare(k.RoutePrefix())},
		{"KEY_MASS_ROUTE_SEP", between(k.SourceRoute(id, id2))},
	}
	return luaLocals("mass queues' key names' parts", parts)
})

// usesMassKeyGrammar reports whether src names a local of
// massKeyGrammarLua.
func usesMassKeyGrammar(src string) bool {
	decl, _, _ := strings.Cut(strings.SplitN(massKeyGrammarLua(), "\n", 2)[1], " =")
	for _, name := range strings.Split(strings.TrimPrefix(decl, "local "), ", ") {
		if strings.Contains(src, name) {
			return true
		}
	}
	return false
}

// part is one local of a key grammar prologue.
type part struct{ name, value string }

// luaLocals declares parts as Lua locals, under a comment naming what they
// are.
func luaLocals(what string, parts []part) string {
	names, values := make([]string, len(parts)), make([]string, len(parts))
	for i, p := range parts {
		if p.value == "" || strings.ContainsAny(p.value, "'\\\n\x01\x02") {
			panic("rdb: key grammar part " + p.name + " is " + p.value) // a protocol change the prologue cannot carry
		}
		names[i], values[i] = p.name, "'"+p.value+"'"
	}
	return "-- " + what + ", from internal/protocol (keygrammar.go)\nlocal " +
		strings.Join(names, ", ") + " =\n  " + strings.Join(values, ", ") + "\n"
}
