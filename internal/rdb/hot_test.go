package rdb

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
)

// hotEnv is a redis-server of its own (its command statistics and its
// function libraries are the test's) and a client on it.
type hotEnv struct {
	srv *redistest.Server
	c   *Client
	ns  string
}

func newHotEnv(t *testing.T, url func(srv *redistest.Server) string) *hotEnv {
	t.Helper()
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	e := &hotEnv{srv: srv, ns: redistest.Namespace(t)}
	u := srv.URL()
	if url != nil {
		u = url(srv)
	}
	e.c, err = New(Options{URL: u, Namespace: e.ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.c.Close() })
	return e
}

// admin runs a command on the server as the default user.
func (e *hotEnv) admin(t *testing.T, args ...any) any {
	t.Helper()
	conn, err := redis.DialURL(e.srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	v, err := conn.Do(args[0].(string), args[1:]...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// calls returns how often cmd ran (INFO commandstats).
func (e *hotEnv) calls(t *testing.T, cmd string) int {
	t.Helper()
	info, _ := redis.String(e.admin(t, "INFO", "commandstats"), nil)
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
			n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			return n
		}
	}
	return 0
}

// drain enqueues n jobs and runs them the way a worker slot does: a claim,
// then finish-and-claim until the queue is empty. It returns the jobs run.
func (e *hotEnv) drain(t *testing.T, n int) int {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		if err := e.c.Enqueue(ctx, "q", []byte(`{"class":"Job","args":[`+strconv.Itoa(i)+`]}`)); err != nil {
			t.Fatal(err)
		}
	}
	a := ClaimArgs{WorkerID: "h:1:q", Host: "h", Sources: []protocol.Source{protocol.QueueSource("q")}, Now: time.Now()}
	if _, err := e.c.Register(ctx, a.WorkerID, a.Now, 5*time.Second, true); err != nil {
		t.Fatal(err)
	}
	res, err := e.c.Claim(ctx, a)
	ran := 0
	for err == nil && res.Payload != nil {
		ran++
		var ferr error
		ferr, res, err = e.c.FinishAndClaim(ctx, a.WorkerID, a.Host, res.Source, Outcome{Seq: res.Seq, Kind: OutcomeOK, Class: "Job", Now: time.Now()}, a)
		if ferr != nil {
			t.Fatalf("finish: %v", ferr)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := redis.Int(e.admin(t, "GET", e.c.Keys().StatProcessed()), nil); got < ran {
		t.Errorf("stat:processed %d after %d jobs", got, ran)
	}
	return ran
}

// On Redis 7 the per-job scripts run as functions (FCALL), loaded by the
// first call; a library that disappears (FUNCTION FLUSH, a restart without
// persistence) is loaded again.
func TestHotScriptsRunAsFunctions(t *testing.T) {
	t.Parallel()
	e := newHotEnv(t, nil)
	if got := e.drain(t, 5); got != 5 {
		t.Fatalf("ran %d jobs, want 5", got)
	}
	// the first call finds no function and loads the library
	if n := e.calls(t, "fcall"); n != 7 {
		t.Errorf("fcall calls = %d, want 7 (a claim missing the library, again, and 5 finish-and-claims)", n)
	}
	// nothing configured: the core library runs every call, the full one
	// (with the optional modules) is never loaded
	lib := e.c.claim.coreLib.name
	if libs, _ := redis.Values(e.admin(t, "FUNCTION", "LIST", "LIBRARYNAME", lib), nil); len(libs) != 1 {
		t.Fatalf("FUNCTION LIST %s: %d libraries", lib, len(libs))
	}
	if full := e.c.claim.lib.name; full == lib {
		t.Fatalf("the core library has the full one's name %s", full)
	} else if libs, _ := redis.Values(e.admin(t, "FUNCTION", "LIST", "LIBRARYNAME", full), nil); len(libs) != 0 {
		t.Errorf("the full library %s was loaded with nothing configured", full)
	}
	evals := e.calls(t, "evalsha") + e.calls(t, "eval")
	e.admin(t, "FUNCTION", "FLUSH")
	if got := e.drain(t, 3); got != 3 {
		t.Fatalf("after FUNCTION FLUSH: ran %d jobs, want 3", got)
	}
	if libs, _ := redis.Values(e.admin(t, "FUNCTION", "LIST", "LIBRARYNAME", lib), nil); len(libs) != 1 {
		t.Errorf("the library was not loaded again")
	}
	// the register script is not a per-job one: it stays EVALSHA
	if n := e.calls(t, "evalsha") + e.calls(t, "eval") - evals; n != 1 {
		t.Errorf("EVAL/EVALSHA calls during the second drain = %d, want 1 (the registration)", n)
	}
	if e.c.claim.coreLib.eval.Load() {
		t.Error("the client gave functions up")
	}
}

// Where functions cannot be used (here an ACL forbids FCALL and FUNCTION,
// as Redis 6.2 does not know them), the same scripts run as EVALSHA.
func TestHotScriptsWithoutFunctions(t *testing.T) {
	t.Parallel()
	e := newHotEnv(t, func(srv *redistest.Server) string {
		conn, err := redis.DialURL(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Do("ACL", "SETUSER", "nofn", "on", ">pw", "~*", "&*", "+@all", "-fcall", "-function"); err != nil {
			t.Fatal(err)
		}
		return "redis://nofn:pw@" + srv.Addr()
	})
	if got := e.drain(t, 4); got != 4 {
		t.Fatalf("ran %d jobs, want 4", got)
	}
	if !e.c.claim.coreLib.eval.Load() {
		t.Error("the client did not fall back to EVALSHA")
	}
	if n := e.calls(t, "fcall"); n != 0 {
		t.Errorf("fcall calls = %d (all refused), want 0", n)
	}
	if n := e.calls(t, "evalsha") + e.calls(t, "eval"); n < 5 {
		t.Errorf("EVAL/EVALSHA calls = %d, want at least 5", n)
	}
}

// Loading its library, a client deletes the resque-go libraries last
// loaded more than a week ago, and keeps the others.
func TestHotScriptsDeleteOldLibraries(t *testing.T) {
	t.Parallel()
	e := newHotEnv(t, nil)
	key := e.c.Keys().HotFunctions()
	now := time.Now()
	for name, at := range map[string]time.Time{
		"resque_go_000000000000": now.Add(-8 * 24 * time.Hour),
		"resque_go_111111111111": now.Add(-6 * 24 * time.Hour),
		"someone_else":           now.Add(-30 * 24 * time.Hour),
	} {
		e.admin(t, "FUNCTION", "LOAD", "#!lua name="+name+"\nredis.register_function('"+name+"_f', function() return 1 end)")
		e.admin(t, "HSET", key, name, at.Unix())
	}
	if got := e.drain(t, 1); got != 1 {
		t.Fatalf("ran %d jobs, want 1", got)
	}
	has := func(name string) bool {
		libs, _ := redis.Values(e.admin(t, "FUNCTION", "LIST", "LIBRARYNAME", name), nil)
		for _, l := range libs {
			fields, _ := redis.Values(l, nil)
			if len(fields) > 1 {
				if n, _ := redis.String(fields[1], nil); n == name {
					return true
				}
			}
		}
		return false
	}
	for name, want := range map[string]bool{
		"resque_go_000000000000": false, "resque_go_111111111111": true, "someone_else": true, e.c.claim.coreLib.name: true,
	} {
		if got := has(name); got != want {
			t.Errorf("library %s there: %v, want %v", name, got, want)
		}
	}
	if at, _ := redis.Int64(e.admin(t, "HGET", key, e.c.claim.coreLib.name), nil); now.Unix()-at > 60 {
		t.Errorf("own load recorded at %d", at)
	}
}

// Redis turns a Lua number passed to redis.call into text with
// snprintf("%.17g"), about 2,200 instructions, more than the command it
// is an argument of: the per-job scripts pass constants as strings ('1',
// '-1', '86400'). This catches a number literal among a call's arguments.
func TestHotScriptsPassNoNumberLiterals(t *testing.T) {
	lit := regexp.MustCompile(`rcall\([^\n]*,\s*-?[0-9]+(\.[0-9]+)?\s*[,)]`)
	names := []string{"finish_claim.lua", "finish_claim_batch.lua"}
	for _, m := range jobpathShared {
		names = append(names, "jobpath/"+m+".lua")
	}
	for _, name := range names {
		for i, line := range strings.Split(scriptSource(name), "\n") {
			if code, _, _ := strings.Cut(line, "--"); lit.MatchString(code) {
				t.Errorf("%s:%d: a number literal in a Redis call: %s", name, i+1, strings.TrimSpace(line))
			}
		}
	}
}
