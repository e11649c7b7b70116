package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// garbageKeyRows put garbage in a newer feature's keys (a key of another
// type, a counter that is no integer, broken JSON) before a job that
// touches them runs; ok says whether that job succeeds (class Good) or
// fails (class Bad), failed how many entries failed must hold after, and
// more how many jobs (held jobs it releases) run besides it and the job
// pushed after it.
func garbageKeyRows() []struct {
	name, payload string
	bad           func(e *env, k protocol.Keys)
	ok            bool
	failed, more  int
} {
	child := func(e *env, k protocol.Keys, parent, id string, fields ...any) {
		e.do("SADD", k.DepChildren(parent), id)
		e.do("HSET", append([]any{k.DepHeld(id), "state", "held", "policy", "fail", "waiting", "1", "queue", "q",
			"payload", `{"class":"Good","args":["` + id + `"]}`}, fields...)...)
	}
	return []struct {
		name, payload string
		bad           func(e *env, k protocol.Keys)
		ok            bool
		failed, more  int
	}{
		// before: every claim failed (XADD on a string): no job ran at all
		{"events stream a string", `{"class":"Good","args":[],"id":"j1"}`,
			func(e *env, k protocol.Keys) { e.do("SET", k.Events(), "x") }, true, 0, 0},
		// before, each of these failed the finish after the job's record
		// went: the job was in no list, its later effects (group, tags,
		// events) were not written, and the finish's claim was lost
		{"tag index a string", `{"class":"Good","args":[],"id":"j1","tags":["t","u"]}`,
			func(e *env, k protocol.Keys) {
				e.do("SET", k.Tag("t"), "x")
				e.do("ZADD", k.Tag("u"), 1, "j1")
			}, true, 0, 0},
		{"held jobs' set a string", `{"class":"Good","args":[],"id":"j1"}`,
			func(e *env, k protocol.Keys) { e.do("SET", k.DepChildren("j1"), "x") }, true, 0, 0},
		{"held job a string", `{"class":"Good","args":[],"id":"j1"}`,
			func(e *env, k protocol.Keys) {
				e.do("SADD", k.DepChildren("j1"), "c1")
				e.do("SET", k.DepHeld("c1"), "x")
				child(e, k, "j1", "c2")
			}, true, 0, 1},
		{"held job's waiting no integer", `{"class":"Good","args":[],"id":"j1"}`,
			func(e *env, k protocol.Keys) {
				child(e, k, "j1", "c1", "waiting", "many")
				child(e, k, "j1", "c2")
			}, true, 0, 1},
		{"dropped counter no integer", `{"class":"Bad","args":[],"id":"j1"}`,
			func(e *env, k protocol.Keys) {
				child(e, k, "j1", "c1", "policy", "drop")
				e.do("SET", k.DepDropped(), "abc")
			}, false, 1, 0},
		{"group a string", `{"class":"Good","args":[],"id":"j1","group":"g"}`,
			func(e *env, k protocol.Keys) { e.do("SET", k.Group("g"), "x") }, true, 0, 0},
		{"group pending no integer", `{"class":"Good","args":[],"id":"j1","group":"g"}`,
			func(e *env, k protocol.Keys) { e.do("HSET", k.Group("g"), "pending", "abc", "sealed", "1") }, true, 0, 0},
		{"group's held jobs a string", `{"class":"Good","args":[],"id":"j1","group":"g"}`,
			func(e *env, k protocol.Keys) {
				e.do("HSET", k.Group("g"), "pending", "1", "sealed", "1")
				e.do("SET", k.GroupChildren("g"), "x")
			}, true, 0, 0},
		// before: the ParentFailed entry embedded the broken payload as is,
		// so failed held an entry that was not JSON
		{"held job's payload broken JSON", `{"class":"Bad","args":[],"id":"j1"}`,
			func(e *env, k protocol.Keys) { child(e, k, "j1", "c1", "payload", `{broken`) }, false, 2, 0},
	}
}

// setAsideKeyOf is the key each garbage row's steps set aside, by row.
var setAsideKeyOf = map[string]func(k protocol.Keys) string{
	"events stream a string":        func(k protocol.Keys) string { return k.Events() },
	"tag index a string":            func(k protocol.Keys) string { return k.Tag("t") },
	"held jobs' set a string":       func(k protocol.Keys) string { return k.DepChildren("j1") },
	"held job a string":             func(k protocol.Keys) string { return k.DepHeld("c1") },
	"held job's waiting no integer": func(k protocol.Keys) string { return k.DepHeld("c1") },
	"dropped counter no integer":    func(k protocol.Keys) string { return k.DepDropped() },
	"group a string":                func(k protocol.Keys) string { return k.Group("g") },
	"group pending no integer":      func(k protocol.Keys) string { return k.Group("g") },
	"group's held jobs a string":    func(k protocol.Keys) string { return k.GroupChildren("g") },
}

// Garbage in a newer feature's key stops neither the job that meets it
// nor the jobs after it: each ends once, in one visible place (succeeded,
// or failed with an entry that is valid JSON), and the job pushed after
// it runs. The key is named in the set-aside hash.
func TestGarbageInFeatureKeys(t *testing.T) {
	t.Parallel()
	for _, r := range garbageKeyRows() {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			e := eventsEnv(t)
			k := e.client.Keys()
			e.do("SET", k.DepsOn(), "1")
			e.reg.Register("Good", func(ctx context.Context, j *worker.Job) error { return nil })
			e.reg.Register("Bad", func(ctx context.Context, j *worker.Job) error { return errors.New("bad") })
			r.bad(e, k)
			e.push("q", r.payload, `{"class":"Good","args":["after"]}`)
			var rec recorder
			// the job after it ran, and no other (a job run twice)
			e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Retry: noRetry})
			done := rec.waitN(t, 2+r.more)
			if len(done) != 2+r.more {
				t.Fatalf("%d jobs finished, want %d", len(done), 2+r.more)
			}
			if string(done[0].Payload) != r.payload {
				t.Fatalf("first job finished: %s", done[0].Payload)
			}
			if done[0].Failed == r.ok {
				t.Errorf("the job meeting the garbage: failed %v (%s: %s), want failed %v", done[0].Failed, done[0].Exception, done[0].Error, !r.ok)
			}
			failed := e.list(k.Failed())
			if len(failed) != r.failed {
				t.Errorf("failed has %d entries, want %d: %q", len(failed), r.failed, failed)
			}
			for _, f := range failed {
				if !json.Valid([]byte(f)) {
					t.Errorf("failed entry is not valid JSON: %s", f)
				}
			}
			if q := e.list(k.Queue("q")); len(q) != 0 {
				t.Errorf("queue q still holds %q", q)
			}
			// the key is named where stats and the dashboard show it
			ov, err := e.client.StatsOverview(e.ctx())
			if err != nil {
				t.Fatal(err)
			}
			want := setAsideKeyOf[r.name]
			if want == nil {
				if len(ov.SetAside) != 0 {
					t.Errorf("set aside: %+v, want none (the garbage went to failed)", ov.SetAside)
				}
			} else if len(ov.SetAside) != 1 || ov.SetAside[0].Key != want(k) || ov.SetAside[0].What == "" {
				t.Errorf("set aside: %+v, want %s named with what was not done", ov.SetAside, want(k))
			}
		})
	}
}

func (e *env) do(cmd string, args ...any) {
	e.t.Helper()
	if _, err := e.client.Do(e.ctx(), cmd, args...); err != nil {
		e.t.Fatal(err)
	}
}
