package rdb

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
)

// A batch's claims rotate a static pool's ring in the script's memory and
// write it back once (ring_static, ring_flush): Redis must end exactly as
// after the same finish-and-claim calls made one at a time, each rotating
// the ring in Redis, and each slot must get the same job. The ring holds a
// weighted source, a paused one, a capped one under its cap, a drained one
// and small ones that drain during the batch; batches smaller than the
// ring, larger than it (the claims go round it more than once) and larger
// than all the work left; and a pool where no source has settings (none is
// read then).
func TestBatchRotatesStaticRingAsSingleCalls(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		slots    int
		settings bool
		ring     string
	}{{3, true, "mixed"}, {5, true, "mixed"}, {12, true, "mixed"}, {30, true, "mixed"}, {5, false, "mixed"}, {30, false, "mixed"},
		// two sources with work for every claim: an even batch leaves the
		// ring as it was (ring_flush writes nothing), an odd one rotates it
		{4, false, "pair"}, {3, false, "pair"}, {8, true, "pair"}, {1, false, "pair"}, {6, false, "one"},
		// one source (claim_static's short way, the names built once): weighted
		// (a keeps the head), and one that runs dry half-way through the batch
		{6, true, "one"}, {6, false, "short"}, {6, true, "short"},
		// another runtime removed the last slot's record while its job ran
		// (a false DirtyExit): its claim finds a job in the FIFO, finds it
		// dry, or turns a ring of several sources
		{6, false, "one+removed"}, {6, false, "short+removed"}, {12, true, "mixed+removed"},
		// without settings the claim turns the ring in memory first and
		// undoes the turn when the record is gone: before the claims go
		// round the ring, after, and on a ring of two
		{5, false, "mixed+removed"}, {12, false, "mixed+removed"}, {3, false, "pair+removed"},
		// names JSON escapes (a quote, a slash) read after plain ones: the
		// records' "source" is written by cjson from then on, by hand
		// before; and in the first read
		{3, false, "escaped"}, {6, false, "escaped"}, {6, true, "escaped"}, {3, false, "escaped-first"}, {3, false, "escaped-pool"},
		// and the one source of a ring (its record's "source" built once)
		{3, false, "one-escaped"},
		// a weighted source runs dry in the middle of its turn: its turn
		// counter goes with it
		{3, true, "dry"},
		// a source at its cap is parked (its mark, p, written with the ring)
		{3, true, "capped"},
		// inline entries (a source's first job in its ring entry, as the
		// allocator writes it): served from the ring read without settings
		// (undone in memory when the record is gone), made a name and a FIFO
		// job with settings (a weighted source keeps the head), and the one
		// entry of a ring
		{3, false, "inline"}, {5, false, "inline"}, {12, false, "inline"}, {30, false, "inline"},
		{3, true, "inline"}, {5, true, "inline"}, {12, true, "inline"}, {30, true, "inline"},
		{5, false, "inline+removed"}, {12, false, "inline+removed"}, {12, true, "inline+removed"},
		{1, false, "one-inline"}, {4, false, "one-inline"}, {4, true, "one-inline"}, {1, false, "one-inline+removed"},
		// inline entries the batch reaches first (sources that joined after
		// the first claims): served, then the ring turns again (the served
		// sources' names), the last one undone, and a weighted one (h)
		// keeping the head with settings
		{3, false, "late"}, {5, false, "late"}, {3, false, "late+removed"}, {2, true, "late"}, {5, true, "late"}} {
		slots, settings, ring := c.slots, c.settings, c.ring
		t.Run(fmt.Sprintf("slots=%d/settings=%v/ring=%s", slots, settings, ring), func(t *testing.T) {
			t.Parallel()
			single := staticRingFixture(t, true, slots, settings, ring)
			batched := staticRingFixture(t, false, slots, settings, ring)
			if single.dump != batched.dump {
				t.Errorf("Redis after single calls:\n%s\nafter one batch:\n%s", single.dump, batched.dump)
			}
			for i := range single.answers {
				if single.answers[i] != batched.answers[i] {
					t.Errorf("slot %d: single %s, batched %s", i, single.answers[i], batched.answers[i])
				}
			}
			if ring == "dry" && strings.Contains(batched.dump, "t:a") {
				t.Errorf("the drained source's turn counter is still there:\n%s", batched.dump)
			}
			if strings.HasSuffix(ring, "+removed") && strings.Contains(batched.dump, "DirtyExit") {
				t.Errorf("the false DirtyExit entry is still there:\n%s", batched.dump)
			}
		})
	}
}

// ringTestClient is a client on a fresh namespace (batching off when
// unbatched), with a do that fails the test on error.
func ringTestClient(t *testing.T, unbatched bool) (*Client, string, func(cmd string, args ...any)) {
	t.Helper()
	ns := redistest.Namespace(t)
	c, err := New(Options{URL: os.Getenv("RESQUE_GO_TEST_REDIS"), Namespace: ns, Unbatched: unbatched})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	do := func(cmd string, args ...any) {
		t.Helper()
		if _, err := c.do(context.Background(), cmd, args...); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	return c, ns, do
}

// fillStaticRing puts sources on static pool pool's ring, in order, each
// with its FIFO of jobs[s] payloads.
func fillStaticRing(c *Client, do func(string, ...any), pool string, sources []string, jobs map[string]int) {
	fillStaticRingAs(c, do, pool, sources, jobs, false)
}

// fillStaticRingAs is fillStaticRing, with inline: each source with jobs
// has its first one in its ring entry (protocol.StaticInline), as the
// allocator puts a source that joins the ring with an empty FIFO.
func fillStaticRingAs(c *Client, do func(string, ...any), pool string, sources []string, jobs map[string]int, inline bool) {
	k := c.Keys()
	for _, s := range sources {
		entry := s
		for i := 0; i < jobs[s]; i++ {
			p := fmt.Sprintf(`{"class":"J","sourceId":%q,"name":"n","args":[%d]}`, s, i)
			if i == 0 && inline {
				entry = protocol.StaticInline(s, p)
				continue
			}
			do("RPUSH", k.StaticSourceQueue(pool, s), p)
		}
		do("RPUSH", k.StaticRing(pool), entry)
		do("HSET", k.StaticState(pool), "m:"+s, "r")
	}
}

// staticBatch makes n slots of static pool pool claim one at a time (each
// must get a job), then returns their successes with their next claims as
// one batch to send, and the slots' claim arguments.
func staticBatch(t *testing.T, c *Client, pool string, n int) ([]*batchCall, []ClaimArgs) {
	t.Helper()
	now := time.Unix(1_800_000_000, 0)
	src := protocol.StaticPoolSource(pool)
	var batch []*batchCall
	var args []ClaimArgs
	for i := 0; i < n; i++ {
		a := ClaimArgs{WorkerID: fmt.Sprintf("h:%d:static", i), Host: "h", Sources: []protocol.Source{src}, Now: now}
		res, err := c.Claim(context.Background(), a)
		if err != nil || res.Payload == nil {
			t.Fatalf("claim %d: %+v %v", i, res, err)
		}
		ck, ca := c.claimKeysArgs(a)
		batch = append(batch, &batchCall{workerID: a.WorkerID, host: "h", src: res.Source, ck: ck, ca: ca, sources: claimSources(ca),
			o: Outcome{Seq: res.Seq, Kind: OutcomeOK, Class: "J", Now: now}, done: make(chan struct{})})
		args = append(args, a)
	}
	return batch, args
}

// The claims of a batch from a static ring (claim_static) write what a
// job asks for as single claims do: a resque-v3 status, a php-resque
// status, a unique state, the record of a payload that is not a JSON
// object, and the attempts counter looked for while one exists.
func TestBatchStaticClaimsMarkJobsAsSingleCalls(t *testing.T) {
	t.Parallel()
	single := staticRingFixture(t, true, 4, false, "marks")
	batched := staticRingFixture(t, false, 4, false, "marks")
	if single.dump != batched.dump {
		t.Errorf("Redis after single calls:\n%s\nafter one batch:\n%s", single.dump, batched.dump)
	}
	for i := range single.answers {
		if single.answers[i] != batched.answers[i] {
			t.Errorf("slot %d: single %s, batched %s", i, single.answers[i], batched.answers[i])
		}
	}
	if !strings.Contains(batched.dump, "unique:us:state string running") {
		t.Errorf("the batch did not claim the unique job:\n%s", batched.dump)
	}
}

// staticRingFixture runs slots claims, then finishes them with their next
// claims, one at a time (unbatched) or in one batch. ring: "marks", one
// source whose jobs after the first slots' ask the claim for more than the
// record; "pair", two sources with work for every claim; "one", one such
// source; "short", one source with work for two claims after the first
// ones; "mixed", eight sources, some of them drained by the claims;
// "escaped", ten sources, the first seven with little or no work, then
// names JSON escapes ("escaped-first": such names from the start;
// "escaped-pool": plain names in a pool whose name JSON escapes); "dry",
// a weighted source that runs dry in its turn (with settings). A
// ring ending in "+removed": the last slot's record is removed by another
// runtime's prune while its job runs, which records it as a false
// DirtyExit under the record's queue (last: the batch sends that slot
// again after the others, a single call at once).
func staticRingFixture(t *testing.T, unbatched bool, slots int, settings bool, ring string) batchResult {
	ctx := context.Background()
	c, ns, do := ringTestClient(t, unbatched)
	ring, removed := strings.CutSuffix(ring, "+removed")
	k := c.Keys()
	pool := "general"
	switch ring {
	case "escaped-pool":
		// plain names in a pool whose name JSON escapes
		pool = "gen/eral"
		fillStaticRing(c, do, pool, []string{"a", "b", "c"}, map[string]int{"a": 4, "b": 4, "c": 4})
	case "pair":
		fillStaticRing(c, do, pool, []string{"a", "b"}, map[string]int{"a": 3 * slots, "b": 3 * slots})
	case "one":
		fillStaticRing(c, do, pool, []string{"a"}, map[string]int{"a": 3 * slots})
	case "one-escaped":
		fillStaticRing(c, do, pool, []string{`x"q/`}, map[string]int{`x"q/`: 3 * slots})
	case "short":
		fillStaticRing(c, do, pool, []string{"a"}, map[string]int{"a": slots + 2})
	case "escaped", "escaped-first":
		// with 3 slots, the first claims (one at a time) serve a, b and
		// c, so the batch's first read is d to g, drained, and its second
		// the names to escape
		names := []string{"a", "b", "c", "d", "e", "f", "g", `x"q`, "y/z", "h"}
		if ring == "escaped-first" {
			names = []string{"y/z", "a", `x"q`, "h"}
		}
		fillStaticRing(c, do, pool, names, map[string]int{"a": 1, "b": 1, "c": 1, `x"q`: 2, "y/z": 2, "h": 3})
	case "dry":
		// a (weight 3) has its turn with the first claims, one at a
		// time, then serves its last job in the batch and is found dry
		fillStaticRing(c, do, pool, []string{"a", "b"}, map[string]int{"a": 4, "b": 6})
	case "inline":
		// the mixed ring's sources, each one's first job in its entry
		fillStaticRingAs(c, do, pool, []string{"a", "b", "c", "d", "e", "f", "g", "h"},
			map[string]int{"a": 10, "b": 5, "c": 1, "d": 3, "e": 4, "f": 2, "g": 0, "h": 7}, true)
	case "one-inline":
		// one source, its first job in its entry: the batch's claims take
		// it and then its FIFO's
		fillStaticRingAs(c, do, pool, []string{"a"}, map[string]int{"a": 3 + 2*slots}, true)
	case "late":
		// b, then h and c join after the first claims (below)
		fillStaticRing(c, do, pool, []string{"b"}, map[string]int{"b": 2 * slots})
	case "capped":
		// b's cap of 1 is held by a claim outside the batch: the first
		// claims, one at a time, take a's turn (weight 3), and the batch's
		// park b
		fillStaticRing(c, do, pool, []string{"a", "b", "c"}, map[string]int{"a": 10, "b": 4, "c": 10})
		do("HSET", k.StaticHolders(pool, "b"), "h:9:static", "7")
		do("HSET", k.ClaimSeqs(), "h:9:static", "7")
		do("HSET", k.MassSettings(), "b:limit", "1")
	case "marks":
		fillStaticRing(c, do, pool, []string{"s"}, map[string]int{"s": slots})
		for _, p := range []string{`{"class":"J","sourceId":"s","name":"n","args":[],"id":"j1","isMonitored":true}`,
			`{"class":"J","sourceId":"s","name":"n","args":[],"unique":{"uid":"us"}}`,
			`{"class":"J","sourceId":"s","name":"n","args":[],"id":"p1"}`, `[1,"x"]`} {
			do("RPUSH", k.StaticSourceQueue(pool, "s"), p)
		}
		do("SET", k.JobStatus("p1"), `{"status":1,"updated":1}`)
		do("ZADD", k.AttemptsIndex(), 1, k.Attempts("x"))
	default:
		fillStaticRing(c, do, pool, []string{"a", "b", "c", "d", "e", "f", "g", "h"},
			map[string]int{"a": 10, "b": 5, "c": 1, "d": 3, "e": 4, "f": 2, "g": 0, "h": 7})
	}
	if settings {
		do("HSET", k.MassSettings(), "a:weight", "3", "h:weight", "2", "d:paused", "1", "e:limit", "5")
		// some attempts counter exists: the claims look for the jobs'
		do("ZADD", k.AttemptsIndex(), 1, k.Attempts("x"))
	}
	now := time.Unix(1_800_000_000, 0)
	src := protocol.StaticPoolSource(pool)
	type slot struct {
		id   string
		args ClaimArgs
		res  ClaimResult
	}
	ss := make([]slot, slots)
	for i := range ss {
		id := fmt.Sprintf("h:%d:static", i)
		ss[i] = slot{id: id, args: ClaimArgs{WorkerID: id, Host: "h", Sources: []protocol.Source{src}, Now: now}}
		res, err := c.Claim(ctx, ss[i].args)
		if err != nil {
			t.Fatal(err)
		}
		ss[i].res = res
	}
	if ring == "late" {
		fillStaticRingAs(c, do, pool, []string{"h", "c"}, map[string]int{"h": 3, "c": 1}, true)
	}
	if removed {
		id := ss[slots-1].id
		do("DEL", k.Worker(id))
		do("RPUSH", k.Failed(), falseDirtyExit(id, "static:queue:"+pool, "J"))
	}
	var out batchResult
	answer := func(ferr error, res ClaimResult, err error) string {
		return fmt.Sprintf("finish=%v claim=%s source=%s seq=%s attempts=%d empty=%v err=%v", ferr, res.Payload, res.Source.List, res.Seq, res.Attempts, res.Empty, err)
	}
	outcome := func(s slot) Outcome { return Outcome{Seq: s.res.Seq, Kind: OutcomeOK, Class: "J", Now: now} }
	var batch []*batchCall
	for _, s := range ss {
		if s.res.Payload == nil {
			continue // nothing to finish: not part of the comparison
		}
		if unbatched {
			out.answers = append(out.answers, answer(c.FinishAndClaim(ctx, s.id, "h", s.res.Source, outcome(s), s.args)))
			continue
		}
		ck, ca := c.claimKeysArgs(s.args)
		batch = append(batch, &batchCall{workerID: s.id, host: "h", src: s.res.Source, o: outcome(s), ck: ck, ca: ca,
			sources: claimSources(ca), done: make(chan struct{})})
	}
	if !unbatched {
		c.batch.send(batch)
		i := 0
		for _, s := range ss {
			if s.res.Payload == nil {
				continue
			}
			out.answers = append(out.answers, answer(parseFinishClaim(s.id, s.args, batch[i].reply, batch[i].err)))
			i++
		}
	}
	out.dump = dumpNamespace(t, c, ns)
	return out
}

// A batch whose script stops on an error half-way (here a source's FIFO
// that is not a list) leaves every source on the ring: the ring in Redis
// changes only when the claims are all done (ring_flush), so no source is
// lost with its jobs; each slot gets the error, as from a single call. The
// sources the batch left before the error keep their marks (m:<source>) with
// their places on the ring, as both are written together (ring_flush): the
// allocators and static_wake put a source whose mark is missing on the ring,
// and one put there twice is served twice a round. Without settings, a
// drained source (a) comes first; with settings, a drained one (a), a
// paused one (p) and one at its cap (q, which would be parked).
func TestBatchErrorKeepsStaticRing(t *testing.T) {
	t.Parallel()
	for _, settings := range []bool{false, true} {
		t.Run(fmt.Sprintf("settings=%v", settings), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, _, do := ringTestClient(t, false)
			k := c.Keys()
			const pool = "general"
			fillStaticRing(c, do, pool, []string{"a", "b", "c"}, map[string]int{"a": 1, "b": 3, "c": 3})
			batch, _ := staticBatch(t, c, pool, 3) // alone: a, b and c, the ring as it was
			want := []string{"a", "b", "c"}
			if settings {
				// p paused and q at its cap of 1 (a current holder), put
				// between a and b
				for _, s := range []string{"p", "q"} {
					do("RPUSH", k.StaticSourceQueue(pool, s), `{"class":"J","args":[]}`)
					do("HSET", k.StaticState(pool), "m:"+s, "r")
				}
				do("DEL", k.StaticRing(pool))
				do("RPUSH", k.StaticRing(pool), "a", "p", "q", "b", "c")
				do("HSET", k.MassSettings(), "p:paused", "1", "q:limit", "1")
				do("HSET", k.StaticHolders(pool, "q"), "h:9:static", "7")
				do("HSET", k.ClaimSeqs(), "h:9:static", "7")
				want = []string{"a", "b", "c", "p", "q"}
			}
			// the last slot's counter is not a number: the batch fails
			// after every claim turned the ring in memory (a drained, p
			// and q visited), before it is written back
			do("SET", k.StatProcessedWorker("h:2:static"), "not a number")
			c.batch.send(batch)
			for i, call := range batch {
				if call.err == nil {
					t.Errorf("slot %d: no error", i)
				}
			}
			ring, err := redis.Strings(c.do(ctx, "LRANGE", k.StaticRing(pool), 0, -1))
			if err != nil {
				t.Fatal(err)
			}
			sort.Strings(ring)
			if fmt.Sprint(ring) != fmt.Sprint(want) {
				t.Errorf("ring after the failed batch: %q, want %q", ring, want)
			}
			state, err := redis.StringMap(c.do(ctx, "HGETALL", k.StaticState(pool)))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range ring {
				if state["m:"+s] != "r" {
					t.Errorf("source %s is on the ring without its mark r: %v", s, state)
				}
			}
			if n, err := redis.Int(c.do(ctx, "LLEN", k.StaticParked(pool))); err != nil || n != 0 {
				t.Errorf("parked list: %d sources (%v), want none", n, err)
			}
		})
	}
}

// A batch whose claims empty the FIFOs of every source they served takes
// those sources off the ring at once (one EXISTS over the FIFOs, one HDEL
// of their state), as the next visit to each would have: the ring and the
// state hash still agree (a source is on the ring exactly when its field
// m:<source> is there, which is how the allocators know to put it back).
// When one of those FIFOs still holds a job, the ring keeps them all, as
// before. A source the batch finds drained on its way (x) leaves with the
// same HDEL, or alone in the second case.
func TestBatchTakesDrainedSourcesOffRing(t *testing.T) {
	t.Parallel()
	for _, left := range []bool{false, true} {
		t.Run(fmt.Sprintf("jobs_left=%v", left), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, _, do := ringTestClient(t, false)
			k := c.Keys()
			const pool = "general"
			jobs := map[string]int{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1}
			if left {
				jobs["d"] = 2
			}
			fillStaticRing(c, do, pool, []string{"a", "b", "x", "c", "d", "e", "f"}, jobs)
			batch, args := staticBatch(t, c, pool, 2) // alone: a and b, which go to the ring's tail
			// the batch's claims: c and d
			c.batch.send(batch)
			var got []string
			for i, call := range batch {
				ferr, res, err := parseFinishClaim(call.workerID, args[i], call.reply, call.err)
				if ferr != nil || err != nil || res.Payload == nil {
					t.Fatalf("slot %d: %v %+v %v", i, ferr, res, err)
				}
				got = append(got, res.Source.List)
			}
			if want := []string{"static:queue:general:c", "static:queue:general:d"}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("claimed from %v, want %v", got, want)
			}
			ring, err := redis.Strings(c.do(ctx, "LRANGE", k.StaticRing(pool), 0, -1))
			if err != nil {
				t.Fatal(err)
			}
			state, err := redis.StringMap(c.do(ctx, "HGETALL", k.StaticState(pool)))
			if err != nil {
				t.Fatal(err)
			}
			want := "[e f a b]"
			if left {
				want = "[e f a b c d]"
			}
			if fmt.Sprint(ring) != want {
				t.Errorf("ring %v, want %s", ring, want)
			}
			for _, s := range []string{"a", "b", "c", "d", "e", "f", "x"} {
				on := strings.Contains(" "+strings.Join(ring, " ")+" ", " "+s+" ")
				if _, ok := state["m:"+s]; ok != on {
					t.Errorf("source %s: on the ring %v, in the state %v (%v)", s, on, ok, state)
				}
			}
		})
	}
}

// A ring whose one entry is inline (a source that joined an empty ring,
// its first job in the entry) is not served as a ring of one source, whose
// claims pop its FIFO alone: a batch's claims take the entry's job first,
// then the FIFO's, in the order they were queued, and the ring keeps the
// source's name while jobs remain.
func TestBatchServesOneInlineEntryFirst(t *testing.T) {
	t.Parallel()
	c, ns, do := ringTestClient(t, false)
	k := c.Keys()
	pool := "general"
	fillStaticRing(c, do, pool, []string{"z"}, map[string]int{"z": 3})
	batch, args := staticBatch(t, c, pool, 3)
	// z ran dry and left the ring (another process's claim took it off);
	// then a joined, its first job in its entry
	do("DEL", k.StaticRing(pool))
	do("HDEL", k.StaticState(pool), "m:z")
	fillStaticRingAs(c, do, pool, []string{"a"}, map[string]int{"a": 4}, true)
	c.batch.send(batch)
	for i, call := range batch {
		_, res, err := parseFinishClaim(call.workerID, args[i], call.reply, call.err)
		if want := fmt.Sprintf(`"args":[%d]`, i); err != nil || !strings.Contains(string(res.Payload), want) {
			t.Errorf("slot %d: %s %v, want the job with %s", i, res.Payload, err, want)
		}
	}
	if d := dumpNamespace(t, c, ns); !strings.Contains(d, "static:ring:general list [a]") || !strings.Contains(d, `static:queue:general:a list [{"class":"J","sourceId":"a","name":"n","args":[3]}]`) {
		t.Errorf("after the batch:\n%s", d)
	}
}
