package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// Garbage in a cap's or a rate's keys (another type, a tat that is no
// number or absurd, broken entries) stops neither the jobs the limit
// counts nor the others: each of two limited jobs and the job pushed after
// them runs once, and nothing is left in the queue. A broken entry of a
// parked or waiting list is set aside into failed (the only entry there).
func TestGarbageInLimitKeys(t *testing.T) {
	t.Parallel()
	limits := func(t *testing.T) []protocol.Limit {
		c, err1 := protocol.ParseLimit("Capped=2")
		r, err2 := protocol.ParseRate("Rated=1000/s")
		p, err3 := protocol.ParseLimit("Keyed[args.0]=1")
		for _, err := range []error{err1, err2, err3} {
			if err != nil {
				t.Fatal(err)
			}
		}
		return []protocol.Limit{c, r, p}
	}
	set := func(suffix func(k protocol.Keys) string, cmd string, args ...any) func(e *env, k protocol.Keys) {
		return func(e *env, k protocol.Keys) { e.do(cmd, append([]any{suffix(k)}, args...)...) }
	}
	key := func(name, suffix string) func(k protocol.Keys) string {
		return func(k protocol.Keys) string { return k.LimitBase(name) + suffix }
	}
	for _, r := range []struct {
		name, payload string
		bad           func(e *env, k protocol.Keys)
		// parked: the two limited jobs are parked (set aside) until the
		// key is deleted, then run
		parked bool
		// setAside: the entry written goes to failed
		setAside bool
	}{
		// before: every claim of a limited job failed on the index's SADD
		// (and the finish with the claim that followed): the job was never
		// finished, and the sweep failed at each tick
		{"index a string", `{"class":"Capped","args":[]}`, set(func(k protocol.Keys) string { return k.LimitsIndex() }, "SET", "x"), false, false},
		{"rate's index a string", `{"class":"Rated","args":[]}`, set(func(k protocol.Keys) string { return k.LimitsIndex() }, "SET", "x"), false, false},
		// these the claims already set aside
		// before: every claim of the queue failed on the ZCARD: no job of
		// it ran, limited or not
		{"holders a string", `{"class":"Capped","args":[]}`, set(key("class:Capped", protocol.LimitHoldersSuffix), "SET", "x"), true, false},
		{"per-key holders a string", `{"class":"Keyed","args":["a"]}`, set(key("class:Keyed[args.0]=a", protocol.LimitHoldersSuffix), "SET", "x"), true, false},
		// before: 1e300 held the rate's jobs back for good
		{"tat absurd", `{"class":"Rated","args":[]}`, set(key("class:Rated", protocol.LimitTATSuffix), "SET", "1e300"), false, false},
		// before: the claims failed on the GET
		{"tat a hash", `{"class":"Rated","args":[]}`, set(key("class:Rated", protocol.LimitTATSuffix), "HSET", "a", "b"), false, false},
		{"holders' members garbage", `{"class":"Capped","args":[]}`, set(key("class:Capped", protocol.LimitHoldersSuffix), "ZADD", 1, "garbage", 2, "x:y:z"), false, false},
		{"parked a string", `{"class":"Capped","args":[]}`, set(key("class:Capped", protocol.LimitParkedSuffix), "SET", "x"), false, false},
		{"parked entry broken", `{"class":"Capped","args":[]}`, set(key("class:Capped", protocol.LimitParkedSuffix), "RPUSH", "{broken"), false, true},
		{"tat no number", `{"class":"Rated","args":[]}`, set(key("class:Rated", protocol.LimitTATSuffix), "SET", "abc"), false, false},
		{"waiting a string", `{"class":"Rated","args":[]}`, set(key("class:Rated", protocol.LimitWaitingSuffix), "SET", "x"), false, false},
		{"waiting entry broken", `{"class":"Rated","args":[]}`, set(key("class:Rated", protocol.LimitWaitingSuffix), "RPUSH", "{broken"), false, true},
	} {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			k := e.client.Keys()
			for _, c := range []string{"Capped", "Rated", "Keyed", "Good"} {
				e.reg.Register(c, func(ctx context.Context, j *worker.Job) error { return nil })
			}
			r.bad(e, k)
			e.push("q", r.payload, r.payload, `{"class":"Good","args":["after"]}`)
			var rec recorder
			lim := limits(t)
			e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Retry: noRetry, Limits: lim})
			if r.parked {
				rec.waitN(t, 1)
				name, _ := lim[0].LimitHeld("q", "Capped", nil)
				if r.payload != `{"class":"Capped","args":[]}` {
					name, _ = lim[2].LimitHeld("q", "Keyed", []byte(r.payload))
				}
				base := k.LimitBase(name)
				redistest.Eventually(t, 0, func() bool { return len(e.list(base+protocol.LimitParkedSuffix)) == 2 }, "the two jobs parked")
				if n := len(rec.all()); n != 1 {
					t.Fatalf("%d jobs ran while the key was bad, want 1 (the other class)", n)
				}
				e.do("DEL", base+protocol.LimitHoldersSuffix)
			}
			done := rec.waitN(t, 3)
			if len(done) != 3 {
				t.Fatalf("%d jobs finished, want 3", len(done))
			}
			for _, f := range done {
				if f.Failed {
					t.Errorf("%s failed: %s: %s", f.Payload, f.Exception, f.Error)
				}
			}
			if r.setAside {
				redistest.Eventually(t, 0, func() bool { return len(e.list(k.Failed())) > 0 }, "the broken entry set aside")
				f := e.list(k.Failed())
				if len(f) != 1 || decodeFailed(t, f[0]).Exception != protocol.ExcBadPayload || !strings.Contains(f[0], `"{broken"`) {
					t.Errorf("failed: %q, want the broken entry", f)
				}
			} else if f := e.list(k.Failed()); len(f) != 0 {
				t.Errorf("failed: %q", f)
			}
			if q := e.list(k.Queue("q")); len(q) != 0 {
				t.Errorf("queue q still holds %q", q)
			}
		})
	}
}
