package rdb

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
)

// The per-job scripts (claim, finish, finish-and-claim, the batch) share
// one body of local functions, some 900 lines. Run as EVALSHA, a script
// defines every one of those functions again on each call: Redis spends
// about 11,600 instructions a call on it, 10% of a one-slot job (callgrind,
// BenchmarkScriptCost). On Redis 7.0 and later they are also loaded as one
// function library, whose functions are defined once, at FUNCTION LOAD, and
// called with FCALL. The library's name carries a digest of its code, so
// processes of different resque-go versions each call their own.
//
// A server without functions (Redis 6.2), a user whose ACL forbids them, or
// a proxy that does not know FCALL: the scripts run as before (EVALSHA),
// for the rest of the client's life. A library gone from the server (a
// restart without persistence, FUNCTION FLUSH, a failover to a server that
// never had it) is loaded again on the first call that misses it.
//
// Libraries accumulate as versions change (about 60 KB each). Each load is
// recorded in the hash resque-go:functions (library -> Unix time of its
// last load), and a process that loads its library deletes the resque_go_
// libraries recorded as last loaded more than hotLibMaxAge ago: a process
// still calling one of them loads it again on its next call (its load time
// then starts over).

// hotLibMaxAge is how long a library recorded in resque-go:functions stays
// after its last load, once a newer one is loaded.
const hotLibMaxAge = 7 * 24 * time.Hour

// hotLib is the per-job scripts as a function library.
type hotLib struct {
	name, code string
	eval       atomic.Bool // no functions on this server: EVALSHA only
	mu         sync.Mutex  // one FUNCTION LOAD at a time
}

// hotScript is one per-job script: its EVALSHA form, and the function of
// lib that runs the same body (lib nil: EVALSHA only). The EVALSHA form is
// built the first time it is needed: where the server has functions it
// never is, and a worker holds (and its start-up allocates) a quarter of a
// megabyte less.
type hotScript struct {
	build func() string
	once  sync.Once
	s     *redis.Script
	src   string // s's source
	fn    string
	lib   *hotLib
	// coreFn of coreLib runs the same body in the core library: the job's
	// path without its optional modules (jobpathOptional), for the calls
	// that cannot reach them (runCore)
	coreFn  string
	coreLib *hotLib
}

// script is h's EVALSHA form, built on first use.
func (h *hotScript) script() *redis.Script {
	h.once.Do(func() {
		h.src = h.build()
		h.s = redis.NewScript(-1, h.src)
	})
	return h.s
}

// source is the Lua of h's EVALSHA form.
func (h *hotScript) source() string {
	h.script()
	return h.src
}

// hotScripts are the four per-job scripts.
type hotScripts struct {
	claim, finish, finishClaim, finishClaimBatch *hotScript
}

// newHotScripts builds the per-job scripts and their library. edit, when
// not nil, rewrites each script's own part and the shared functions
// ("shared") before use (the cost benchmark's ablations); functions false
// leaves the library out.
func newHotScripts(functions bool, edit func(name, src string) string) hotScripts {
	own := func(name string) string {
		src := scriptSource(name)
		if edit != nil {
			src = edit(name, src)
		}
		return src
	}
	// the globals the per-job paths call as upvalues (hot_globals.lua),
	// the fragments effect_unique.lua uses, then the modules of the job's
	// path (scripts/jobpath, docs/architecture.md): effects, sources, the
	// core finish and the core claim with its fast paths (their local
	// functions, each defined before the first that calls it)
	fragments := scriptSource("unique_release.lua") + "\n"
	prologue := keyGrammarLua() + scriptSource("hot_globals.lua") + "\n" + scriptSource("set_aside_key.lua") + "\n"
	shared := prologue + fragments + jobpathSource(jobpathShared)
	if edit != nil {
		shared = edit("shared", shared)
	}
	// every call starts by setting those upvalues
	bodies := []struct{ name, body string }{
		{"claim", "hot_globals()\nlocal r = claim(KEYS, ARGV)\nif wrongtype then\n  return claim_wrongtype(r)\nend\nreturn r"},
		{"finish", "hot_globals()\nreturn finish(KEYS, ARGV)"},
		{"finish_claim", "hot_globals()\n" + own("finish_claim.lua")},
		{"finish_claim_batch", "hot_globals()\n" + own("finish_claim_batch.lua")},
	}
	newLib := func(shared string) *hotLib {
		var code strings.Builder
		code.WriteString(shared)
		for _, b := range bodies {
			code.WriteString("\nredis.register_function('@FN@" + b.name + "', function(KEYS, ARGV)\n" + b.body + "\nend)\n")
		}
		sum := sha1.Sum([]byte(code.String()))
		name := "resque_go_" + hex.EncodeToString(sum[:6])
		return &hotLib{name: name, code: "#!lua name=" + name + "\n" + strings.ReplaceAll(code.String(), "@FN@", name+"_")}
	}
	var lib, coreLib *hotLib
	if functions {
		lib = newLib(shared)
		// the core library: the same bodies without the optional modules,
		// whose functions the calls runCore sends never reach (an unknown
		// name in Lua is a global read only when run)
		core := prologue + fragments + jobpathSource(jobpathCore())
		if edit != nil {
			core = edit("shared", core)
		}
		coreLib = newLib(core)
	}
	script := func(i int, build func() string) *hotScript {
		h := &hotScript{build: build, lib: lib, coreLib: coreLib}
		if lib != nil {
			h.fn = lib.name + "_" + bodies[i].name
			h.coreFn = coreLib.name + "_" + bodies[i].name
		}
		return h
	}
	return hotScripts{
		// alone (EVALSHA), claim and finish carry only what they use
		claim:            script(0, func() string { return prologue + jobpathSource(jobpathClaim) + bodies[0].body }),
		finish:           script(1, func() string { return prologue + fragments + jobpathSource(jobpathFinish) + bodies[1].body }),
		finishClaim:      script(2, func() string { return shared + bodies[2].body }),
		finishClaimBatch: script(3, func() string { return shared + bodies[3].body }),
	}
}

// run runs h on conn: FCALL where the server has functions, else EVALSHA
// (EVAL when the script is not cached). keysAndArgs starts with the key
// count, as for EVALSHA.
func (h *hotScript) run(c *Client, conn redis.Conn, keysAndArgs []any) (any, error) {
	return h.runLib(c, conn, h.lib, h.fn, keysAndArgs)
}

// runCore is run in the core library: for a call that carries no optional
// module's section (no limits' description, no events, only short-form
// finishes), whose Lua never reaches those modules. Redis's Lua runs the
// smaller library's calls for fewer instructions (its garbage collector
// walks less code): 290 a job at 8 slots a call (docs/performance.md).
func (h *hotScript) runCore(c *Client, conn redis.Conn, keysAndArgs []any) (any, error) {
	return h.runLib(c, conn, h.coreLib, h.coreFn, keysAndArgs)
}

func (h *hotScript) runLib(c *Client, conn redis.Conn, lib *hotLib, fn string, keysAndArgs []any) (any, error) {
	if lib == nil || lib.eval.Load() {
		return h.script().Do(conn, keysAndArgs...)
	}
	args := make([]any, 0, 1+len(keysAndArgs))
	args = append(append(args, fn), keysAndArgs...)
	v, err := conn.Do("FCALL", args...)
	if err == nil || !isNoFunction(err) {
		return v, err
	}
	if isFunctionMissing(err) {
		lerr := lib.load(c, conn)
		if lerr == nil {
			v, err = conn.Do("FCALL", args...)
			if err == nil || !isNoFunction(err) {
				return v, err
			}
			// gone again at once (a FUNCTION FLUSH in between): this call
			// runs as a script
			return h.script().Do(conn, keysAndArgs...)
		}
		if !isNoFunction(lerr) {
			var re redis.Error
			if !errors.As(lerr, &re) {
				return nil, lerr // the connection failed: the caller retries
			}
			// the server refused the load for now (OOM, LOADING...):
			// this call runs as a script
			return h.script().Do(conn, keysAndArgs...)
		}
	}
	// no functions on this server, or not for this user
	lib.eval.Store(true)
	return h.script().Do(conn, keysAndArgs...)
}

// isFunctionMissing reports whether err says the called function is not
// on the server.
func isFunctionMissing(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(string(re), "ERR Function not found")
}

// isNoFunction reports whether err is a reply FCALL or FUNCTION LOAD
// gives, before running anything, where functions cannot be used (an
// unknown command, an ACL that forbids the command) or the called one is
// missing. A NOPERM about keys, or one raised inside the function (whose
// writes until then stay), is not: running the script again would repeat
// them.
func isNoFunction(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := string(re)
	switch {
	case strings.HasPrefix(msg, "ERR Function not found"), strings.HasPrefix(msg, "ERR unknown command"),
		strings.HasPrefix(msg, "ERR unknown subcommand"):
		return true
	case strings.HasPrefix(msg, "NOPERM"):
		low := strings.ToLower(msg)
		return strings.Contains(low, "command") && (strings.Contains(low, "'fcall'") || strings.Contains(low, "'function|"))
	}
	return false
}

// load puts the library on the server (a library of that name already
// there is the same code), records the load, and deletes libraries
// recorded as last loaded long ago.
func (lib *hotLib) load(c *Client, conn redis.Conn) error {
	lib.mu.Lock()
	defer lib.mu.Unlock()
	_, err := conn.Do("FUNCTION", "LOAD", lib.code)
	var re redis.Error
	if err != nil && !(errors.As(err, &re) && strings.Contains(string(re), "already exists")) {
		return err
	}
	now := time.Now()
	key := c.keys.HotFunctions()
	if _, err := conn.Do("HSET", key, lib.name, now.Unix()); err != nil {
		return nil // loaded; the record is only for the clean-up
	}
	loaded, err := redis.Int64Map(conn.Do("HGETALL", key))
	if err != nil {
		return nil
	}
	for name, at := range loaded {
		if name == lib.name || !strings.HasPrefix(name, "resque_go_") || now.Sub(time.Unix(at, 0)) < hotLibMaxAge {
			continue
		}
		// gone already, or never loaded here: either way not worth an error
		_, _ = conn.Do("FUNCTION", "DELETE", name)
		_, _ = conn.Do("HDEL", key, name)
	}
	return nil
}

// The modules of the job's path (scripts/jobpath/<name>.lua), in the order
// they are defined: a module calls only the modules before it. The claim
// and the finish run alone (EVALSHA) carry only what they use; the library
// and the combined scripts carry them all.
var (
	jobpathClaim = []string{"effect_marks", "effect_attempts", "effect_events", "effect_limits", "source_limits", "source_limits_admit",
		"source_limits_pop", "source_ring", "source_static_batch", "source_static_ring", "source_unit_ring",
		"claim", "claim_plain"}
	jobpathFinish = []string{"effect_attempts", "effect_status", "effect_waiting", "effect_release", "effect_unique", "effect_wake",
		"effect_limits", "effect_tags", "effect_events", "effect_deps", "effect_group", "finish_record", "finish_delayed", "finish_push", "finish"}
	jobpathShared = []string{"effect_marks", "effect_attempts", "effect_status", "effect_waiting", "effect_release", "effect_unique", "effect_wake",
		"effect_limits", "effect_tags", "effect_events", "effect_deps", "effect_group",
		"source_limits", "source_limits_admit", "source_limits_pop", "source_ring", "source_static_batch", "source_static_ring", "source_unit_ring",
		"finish_record", "finish_delayed", "finish_push", "finish",
		"claim", "claim_plain", "claim_plain_limits", "claim_static"}
)

// jobpathOptional are the modules of features that are off unless
// configured (limits, tags, events, dependencies, groups): the core
// library leaves them out.
var jobpathOptional = map[string]bool{"effect_limits": true, "effect_tags": true, "effect_events": true,
	"effect_deps": true, "effect_group": true, "source_limits": true, "source_limits_admit": true,
	"source_limits_pop": true, "claim_plain_limits": true}

// jobpathCore is jobpathShared without the optional modules.
func jobpathCore() []string {
	var core []string
	for _, m := range jobpathShared {
		if !jobpathOptional[m] {
			core = append(core, m)
		}
	}
	return core
}

// jobpathSource is the named modules' code, one after the other.
func jobpathSource(modules []string) string {
	var b strings.Builder
	for _, m := range modules {
		b.WriteString(scriptSource("jobpath/" + m + ".lua"))
		b.WriteString("\n")
	}
	return b.String()
}
