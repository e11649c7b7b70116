package rdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// A failed, retried or rescheduled job whose destination key was written
// by hand with another type is not finished: nothing is written, the job
// stays in worker:<id> with its claim sequence, and the error names the
// key. Once the key is fixed the same finish records the job. Before, the
// finish removed the record first and lost the job with the failed push.
func TestFinishKeepsJobWhenDestinationHasWrongType(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	job := []byte(`{"class":"C","args":[1]}`)
	src := protocol.QueueSource("q")
	cases := []struct {
		name string
		bad  func(k protocol.Keys) string // the key set to a string
		o    func(seq string) Outcome
		// where the job is once the key is fixed
		lands func(k protocol.Keys) string
		// the job's source, when not queue q
		src *protocol.Source
	}{
		{"fail", func(k protocol.Keys) string { return k.Failed() },
			func(seq string) Outcome {
				return Outcome{Seq: seq, Kind: OutcomeFail, Class: "C", Entry: []byte(`{"failed":1}`), Now: now}
			},
			func(k protocol.Keys) string { return k.Failed() }, nil},
		{"retry-retries", func(k protocol.Keys) string { return k.Retries() },
			func(seq string) Outcome {
				return Outcome{Seq: seq, Kind: OutcomeRetry, Class: "C", Entry: []byte(`{"retry":1}`), Push: job, Now: now}
			},
			func(k protocol.Keys) string { return k.Queue("q") }, nil},
		{"retry-queue", func(k protocol.Keys) string { return k.Queue("q") },
			func(seq string) Outcome {
				return Outcome{Seq: seq, Kind: OutcomeRetry, Class: "C", Entry: []byte(`{"retry":1}`), Push: job, Now: now}
			},
			func(k protocol.Keys) string { return k.Queue("q") }, nil},
		{"reschedule-queues", func(k protocol.Keys) string { return k.Queues() },
			func(seq string) Outcome {
				return Outcome{Seq: seq, Kind: OutcomeReschedule, Class: "C", Push: job, Now: now}
			},
			func(k protocol.Keys) string { return k.Queue("q") }, nil},
		{"retry-delayed-schedule", func(k protocol.Keys) string { return k.DelayedSchedule() },
			func(seq string) Outcome {
				return Outcome{Seq: seq, Kind: OutcomeRetry, Class: "C", Entry: []byte(`{"retry":1}`), Push: job,
					DueAt: now.Unix() + 60, Now: now}
			},
			func(k protocol.Keys) string { return k.Delayed(now.Unix() + 60) }, nil},
		{"retry-static-ring", func(k protocol.Keys) string { return k.StaticRing("p") },
			func(seq string) Outcome {
				return Outcome{Seq: seq, Kind: OutcomeRetry, Class: "C", Entry: []byte(`{"retry":1}`), Push: job, Now: now}
			},
			func(k protocol.Keys) string { return k.StaticSourceQueue("p", "s1") },
			&protocol.Source{Queue: protocol.StaticQueueName("p"), List: protocol.StaticSourcePrefix("p") + "s1"}},
	}
	for _, tc := range cases {
		for _, form := range []string{"finish", "finish+claim", "batch"} {
			if form == "batch" && tc.name == "retry-queue" {
				continue
			}
			t.Run(tc.name+"/"+form, func(t *testing.T) {
				t.Parallel()
				src := src
				if tc.src != nil {
					src = *tc.src
				}
				c, _, do := ringTestClient(t, form != "batch")
				ctx := context.Background()
				k := c.Keys()
				do("RPUSH", k.Queue("q"), job)
				do("RPUSH", k.Queue("q"), `{"class":"Next","args":[]}`)
				if form == "batch" { // the other slot's claim
					do("RPUSH", k.Queue("q"), `{"class":"Next","args":[2]}`)
				}
				do("SADD", k.Queues(), "q")
				const wid = "h:1:q"
				args := ClaimArgs{WorkerID: wid, Host: "h", Queues: []string{"q"}, Now: now}
				res, err := c.Claim(ctx, args)
				if err != nil || string(res.Payload) != string(job) {
					t.Fatalf("claim: %+v %v", res, err)
				}
				bad := tc.bad(k)
				saved := dumpKey(t, c, bad)
				do("DEL", bad)
				do("SET", bad, "written by hand")
				o := tc.o(res.Seq)
				// the lists a refused finish may have pushed to before it
				// met the key: what it pushed is taken back
				lists := []string{k.Failed(), k.Retries(), k.Queue("q"), k.Delayed(now.Unix() + 60), k.StaticSourceQueue("p", "s1"), k.StaticRing("p")}
				lens := func() map[string]int {
					m := map[string]int{}
					for _, l := range lists {
						if l != bad {
							n, err := redis.Int(c.do(ctx, "LLEN", l))
							if err != nil {
								t.Fatal(err)
							}
							m[l] = n
						}
					}
					return m
				}
				before := lens()
				var first bool
				finish := func() (ferr error, next ClaimResult, err error) {
					switch form {
					case "finish":
						return nil, ClaimResult{}, c.Finish(ctx, wid, "h", src, o)
					case "finish+claim":
						return c.FinishAndClaim(ctx, wid, "h", src, o, args)
					}
					if !first {
						return c.FinishAndClaim(ctx, wid, "h", src, o, args)
					}
					// in one batch with another slot's plain success, which
					// goes through (the claims share the queue: not for a
					// queue of the wrong type, which no claim can read)
					other := "h:2:q"
					oargs := ClaimArgs{WorkerID: other, Host: "h", Queues: []string{"q"}, Now: now}
					do("SET", k.Worker(other), `{"queue":"q","run_at":"x","payload":{"class":"O","args":[]}}`)
					do("HSET", k.ClaimSeqs(), other, 7)
					var calls []*batchCall
					for _, s := range []struct {
						id string
						a  ClaimArgs
						o  Outcome
					}{{other, oargs, Outcome{Seq: "7", Kind: OutcomeOK, Class: "O", Now: now}}, {wid, args, o}} {
						ck, ca := c.claimKeysArgs(s.a)
						calls = append(calls, &batchCall{workerID: s.id, host: "h", src: src, o: s.o, ck: ck, ca: ca,
							sources: claimSources(ca), done: make(chan struct{})})
					}
					c.batch.send(calls)
					if _, _, err := parseFinishClaim(other, oargs, calls[0].reply, calls[0].err); err != nil {
						t.Errorf("the other slot of the batch: %v", err)
					}
					return parseFinishClaim(wid, args, calls[1].reply, calls[1].err)
				}
				first = true
				ferr, _, err := finish()
				first = false
				if form == "batch" {
					err = c.nameBlocked(ctx, "h", src, o, err)
				}
				if ferr != nil || !errors.Is(err, ErrKeyType) || !strings.Contains(err.Error(), bad+" holds a string") {
					t.Fatalf("finish: %v / %v, want ErrKeyType naming %s", ferr, err, bad)
				}
				if rec, err := redis.String(c.do(ctx, "GET", k.Worker(wid))); err != nil || !strings.Contains(rec, string(job)) {
					t.Fatalf("worker:<id> after the refused finish: %q %v", rec, err)
				}
				if seq, err := redis.String(c.do(ctx, "HGET", k.ClaimSeqs(), wid)); err != nil || seq != res.Seq {
					t.Fatalf("claim sequence moved: %q %v, want %s", seq, err, res.Seq)
				}
				if after := lens(); fmt.Sprint(after) != fmt.Sprint(before) && form != "batch" {
					t.Errorf("list lengths after the refused finish: %v, before %v", after, before)
				}
				if n, err := redis.Int(c.do(ctx, "HEXISTS", k.StaticState("p"), "m:s1")); err != nil || n != 0 {
					t.Errorf("the static state marks s1 on the ring: %d %v", n, err)
				}
				if n, err := redis.Int(c.do(ctx, "GET", k.StatProcessed())); form != "batch" && (err == nil || n != 0) {
					t.Errorf("stat:processed written: %d %v", n, err)
				}
				do("DEL", bad)
				restoreKey(t, c, bad, saved)
				ferr, _, err = finish()
				if err != nil || ferr != nil && !errors.Is(ferr, ErrNotOwned) {
					t.Fatalf("finish once the key is fixed: %v / %v", ferr, err)
				}
				if n, err := redis.Int(c.do(ctx, "EXISTS", k.Worker(wid))); err != nil || n != 0 && form == "finish" {
					t.Errorf("worker:<id> left after the finish: %d %v", n, err)
				}
				to := tc.lands(k)
				got, err := redis.Strings(c.do(ctx, "LRANGE", to, 0, -1))
				want := string(job)
				if o.Kind == OutcomeFail {
					want = `{"failed":1}`
				}
				if o.DueAt > 0 {
					want = "" // a delayed item: its payload with the queue
				}
				found := false
				for _, g := range got {
					found = found || strings.Contains(g, strings.TrimSuffix(strings.TrimPrefix(want, "{"), "}"))
				}
				if err != nil || !found {
					t.Errorf("%s after the finish: %q %v, want %s there", to, got, err, want)
				}
			})
		}
	}
}

// dumpKey and restoreKey keep a key's value across the test's overwrite
// (nil: the key did not exist).
func dumpKey(t *testing.T, c *Client, key string) any {
	t.Helper()
	v, err := c.do(context.Background(), "DUMP", key)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func restoreKey(t *testing.T, c *Client, key string, v any) {
	t.Helper()
	if v == nil {
		return
	}
	if _, err := c.do(context.Background(), "RESTORE", key, 0, v); err != nil {
		t.Fatal(err)
	}
}

// A deferred unique job released by its holder's success, whose queue key
// has another type, is recorded in failed (ResqueGo::WrongType, naming
// the key) instead of being lost, and its unique state and deferred key
// go: nothing waits for a job that is not queued.
func TestReleaseRecordsDeferredWhenQueueHasWrongType(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, true)
	ctx := context.Background()
	k := c.Keys()
	now := time.Unix(1_800_000_000, 0)
	job := `{"class":"Once","args":[1],"unique":{"uid":"u1"}}`
	deferred := `{"class":"Once","args":[2],"queue":"other","unique":{"uid":"u1","deferrableBy":0}}`
	do("RPUSH", k.Queue("q"), job)
	const wid = "h:1:q"
	res, err := c.Claim(ctx, ClaimArgs{WorkerID: wid, Host: "h", Queues: []string{"q"}, Now: now})
	if err != nil || string(res.Payload) != job {
		t.Fatalf("claim: %+v %v", res, err)
	}
	do("SET", k.UniqueState("u1"), "running")
	do("SET", k.UniqueDeferred("u1"), deferred)
	do("SET", k.Queue("other"), "written by hand")
	if err := c.Finish(ctx, wid, "h", protocol.QueueSource("q"), Outcome{Seq: res.Seq, Kind: OutcomeOK, Class: "Once", UniqueID: "u1", Now: now}); err != nil {
		t.Fatalf("finish: %v", err)
	}
	entries, err := redis.Strings(c.do(ctx, "LRANGE", k.Failed(), 0, -1))
	if err != nil || len(entries) != 1 {
		t.Fatalf("failed: %q %v", entries, err)
	}
	e := protocol.ParseFailedEntry(0, []byte(entries[0]))
	if e.Unreadable || e.Exception != "ResqueGo::WrongType" || !strings.Contains(e.Error, k.Queue("other")+" holds a string") || e.Queue != "other" ||
		!strings.Contains(string(e.Payload), `"args":[2]`) {
		t.Errorf("failed entry: %+v (%s)", e, entries[0])
	}
	if n, err := redis.Int(c.do(ctx, "EXISTS", k.UniqueState("u1"), k.UniqueDeferred("u1"))); err != nil || n != 0 {
		t.Errorf("unique keys left: %d %v", n, err)
	}
	// the usual release, for comparison: queued, the state says so
	do("DEL", k.Queue("other"))
	do("RPUSH", k.Queue("q"), job)
	if res, err = c.Claim(ctx, ClaimArgs{WorkerID: wid, Host: "h", Queues: []string{"q"}, Now: now}); err != nil {
		t.Fatal(err)
	}
	do("SET", k.UniqueState("u1"), "running")
	do("SET", k.UniqueDeferred("u1"), deferred)
	if err := c.Finish(ctx, wid, "h", protocol.QueueSource("q"), Outcome{Seq: res.Seq, Kind: OutcomeOK, Class: "Once", UniqueID: "u1", Now: now}); err != nil {
		t.Fatalf("finish: %v", err)
	}
	got, err := redis.Strings(c.do(ctx, "LRANGE", k.Queue("other"), 0, -1))
	state, _ := redis.String(c.do(ctx, "GET", k.UniqueState("u1")))
	if err != nil || fmt.Sprint(got) != "["+deferred+"]" || state != "queued" {
		t.Errorf("released: queue %q %v, state %q", got, err, state)
	}
}

// A job that fails as Resque::DirtyExit itself (a hard stop with
// DirtyExitOnTerm) while another runtime's prune removed its record and
// wrote a false DirtyExit for it: the finish removes the false entry, not
// its own, which it pushed before it looked for the other.
func TestFinishRemovesTheFalseDirtyExitNotItsOwn(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, true)
	ctx := context.Background()
	k := c.Keys()
	now := time.Unix(1_800_000_000, 0)
	const wid = "h:1:q"
	do("RPUSH", k.Queue("q"), `{"class":"J","args":[]}`)
	res, err := c.Claim(ctx, ClaimArgs{WorkerID: wid, Host: "h", Queues: []string{"q"}, Now: now})
	if err != nil || res.Payload == nil {
		t.Fatalf("claim: %+v %v", res, err)
	}
	do("DEL", k.Worker(wid))
	do("RPUSH", k.Failed(), falseDirtyExit(wid, "q", "J"))
	own := `{"failed_at":"2027/01/15 08:00:00 UTC","payload":{"class":"J","args":[]},"exception":"Resque::DirtyExit","error":"job interrupted by worker shutdown","backtrace":[],"worker":"h:1:q","queue":"q"}`
	err = c.Finish(ctx, wid, "h", protocol.QueueSource("q"), Outcome{Seq: res.Seq, Kind: OutcomeFail, Class: "J", Entry: []byte(own), Now: now})
	if !errors.Is(err, ErrDirtyExitRemoved) {
		t.Fatalf("finish: %v, want ErrDirtyExitRemoved", err)
	}
	if got, err := redis.Strings(c.do(ctx, "LRANGE", k.Failed(), 0, -1)); err != nil || len(got) != 1 || got[0] != own {
		t.Errorf("failed: %q %v, want only the job's own entry", got, err)
	}
}
