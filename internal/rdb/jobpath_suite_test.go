package rdb

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// The modules of the job's path, each on its own against a real
// redis-server: a driver script loads a module (after what every per-job
// script starts with: the key grammar and hot_globals.lua) and runs one of
// its operations, so a module is checked without the claim or finish
// around it (river's driver tests: one suite per operation).

// jobpathDriver runs body, a Lua chunk that calls an operation of the
// modules named, with keys and args as its KEYS and ARGV.
func jobpathDriver(t *testing.T, c *Client, modules []string, body string, keys []string, args ...any) (any, error) {
	t.Helper()
	src := keyGrammarLua() + scriptSource("hot_globals.lua") + "\n" + scriptSource("set_aside_key.lua") + "\n" + scriptSource("unique_release.lua") + "\n" +
		jobpathSource(modules) + "hot_globals()\n" + body
	cmd := []any{src, len(keys)}
	for _, k := range keys {
		cmd = append(cmd, k)
	}
	return c.do(context.Background(), "EVAL", append(cmd, args...)...)
}

func TestJobpathEffectRelease(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	lock := k.SerialLock("q")
	release := func(token string) {
		t.Helper()
		if _, err := jobpathDriver(t, c, []string{"effect_release"}, "release_lock(KEYS[1], ARGV[1])", []string{lock}, token); err != nil {
			t.Fatalf("release_lock: %v", err)
		}
	}
	held := func() string { v, _ := redis.String(c.do(context.Background(), "GET", lock)); return v }
	t.Run("own", func(t *testing.T) {
		do("SET", lock, "tok")
		release("tok")
		if v := held(); v != "" {
			t.Errorf("the slot's own lock stays: %q", v)
		}
	})
	t.Run("another slot's", func(t *testing.T) {
		do("SET", lock, "other")
		release("tok")
		if v := held(); v != "other" {
			t.Errorf("another slot's lock: %q", v)
		}
	})
	t.Run("no token", func(t *testing.T) {
		do("SET", lock, "")
		release("")
		if n, _ := redis.Int(c.do(context.Background(), "EXISTS", lock)); n != 1 {
			t.Error("a job from a plain source released a lock")
		}
	})
	t.Run("another type", func(t *testing.T) {
		do("DEL", lock)
		do("HSET", lock, "f", "v")
		release("tok")
		if n, _ := redis.Int(c.do(context.Background(), "HLEN", lock)); n != 1 {
			t.Error("a lock of another type was touched")
		}
	})
	for state, want := range map[string]int64{"running": 1, "running:w1": 1, "queued": 0, "": 0, "hash": 0} {
		t.Run("unique_running/"+state, func(t *testing.T) {
			skey := k.UniqueState("u-" + state)
			switch state {
			case "":
			case "hash":
				do("HSET", skey, "f", "v")
			default:
				do("SET", skey, state)
			}
			got, err := redis.Int64(jobpathDriver(t, c, []string{"effect_release"},
				"if unique_running(KEYS[1]) then return 1 end\nreturn 0", []string{skey}))
			if err != nil || got != want {
				t.Errorf("unique_running: %d %v, want %d", got, err, want)
			}
		})
	}
}

func TestJobpathEffectWake(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	ring, state := k.StaticRing("p"), k.StaticState("p")
	wake := func(source string) error {
		t.Helper()
		_, err := jobpathDriver(t, c, []string{"effect_wake"}, "static_wake(KEYS[1], KEYS[2], ARGV[1])", []string{ring, state}, source)
		return err
	}
	members := func() []string {
		got, _ := redis.Strings(c.do(context.Background(), "LRANGE", ring, 0, -1))
		return got
	}
	if err := wake("s1"); err != nil || !slices.Equal(members(), []string{"s1"}) {
		t.Fatalf("a source off the ring: %v %q", err, members())
	}
	if err := wake("s1"); err != nil || !slices.Equal(members(), []string{"s1"}) {
		t.Errorf("a source on the ring is put there twice: %v %q", err, members())
	}
	do("HSET", state, "m:s2", "p")
	if err := wake("s2"); err != nil || !slices.Equal(members(), []string{"s1"}) {
		t.Errorf("a parked source is put on the ring: %v %q", err, members())
	}
	do("DEL", ring)
	do("SET", ring, "x")
	if err := wake("s3"); err == nil || !strings.Contains(err.Error(), "not a list") {
		t.Errorf("a ring of another type: %v", err)
	}
	if n, _ := redis.Int(c.do(context.Background(), "HEXISTS", state, "m:s3")); n != 0 {
		t.Error("a ring of another type: the source is marked on it all the same")
	}
}

func TestJobpathSourceUnitRing(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	src := protocol.UnitSource("bp", "u1")
	ring := k.SourceKey(src)
	// batches a (empty) and b, c; LPUSHed: the oldest at the tail
	do("LPUSH", ring, "s1:a:1", "s1:b:1", "s2:c:1")
	do("LPUSH", k.Committed("s1:b:1"), "b2", "b1")
	do("LPUSH", k.Committed("s2:c:1"), "c1")
	take := func() []string {
		t.Helper()
		got, err := redis.Strings(jobpathDriver(t, c, []string{"source_ring", "source_unit_ring"},
			"return {ring_unit(KEYS[1], KEYS[2], KEYS[3], ARGV, 1, nil)}", []string{ring, k.UnitTurns("bp", "u1"), k.ClaimSeqs()},
			c.ringArgs(src)...))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// the tail (a) is empty: passed over; b serves, then c, then b again
	for i, want := range []string{"b2", "c1", "b1"} {
		got := take()
		if len(got) != 3 || got[0] != want || !strings.HasPrefix(got[1], protocol.CommittedPrefix) || !strings.HasSuffix(got[2], strings.TrimPrefix(got[1], protocol.CommittedPrefix)) {
			t.Fatalf("claim %d: %q, want %s with its list and holders", i+1, got, want)
		}
	}
	if got := take(); len(got) != 0 {
		t.Errorf("no job left: %q", got)
	}
}

func TestJobpathSourceStaticRing(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	src := protocol.StaticPoolSource("p")
	fillStaticRing(c, do, "p", []string{"s1", "s2"}, map[string]int{"s1": 2, "s2": 1})
	take := func() []string {
		t.Helper()
		got, err := redis.Strings(jobpathDriver(t, c, []string{"source_ring", "source_static_batch", "source_static_ring"},
			"local payload, s = ring_static(KEYS[1], KEYS[2], KEYS[3], ARGV, 1, nil)\nreturn {payload, s}",
			[]string{k.StaticRing("p"), k.StaticState("p"), k.ClaimSeqs()}, c.ringArgs(src)...))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	var served []string
	for got := take(); len(got) == 2; got = take() {
		served = append(served, got[1])
	}
	if !slices.Equal(served, []string{"s1", "s2", "s1"}) {
		t.Errorf("the sources took turns as %q, want s1 s2 s1", served)
	}
	if n, _ := redis.Int(c.do(context.Background(), "LLEN", k.StaticRing("p"))); n != 0 {
		t.Errorf("drained sources left on the ring: %d", n)
	}
	if n, _ := redis.Int(c.do(context.Background(), "HLEN", k.StaticState("p"))); n != 0 {
		t.Errorf("drained sources still marked: %d", n)
	}
}

// The queue and serial queue sources are inline in the core claim: the
// driver runs claim() alone, laid out as Claim lays it out.
func TestJobpathSourceQueue(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	serial := protocol.Source{Queue: "s", Serial: true}
	do("RPUSH", k.Queue("s"), `{"class":"C","args":[1]}`, `{"class":"C","args":[2]}`)
	do("RPUSH", k.Queue("q"), `{"class":"C","args":[3]}`)
	claim := func(wid string) []any {
		t.Helper()
		keys, args := c.claimKeysArgs(ClaimArgs{WorkerID: wid, Sources: []protocol.Source{serial, protocol.QueueSource("q")}, Token: wid + "-token"})
		ks := make([]string, len(keys))
		for i, key := range keys {
			ks[i] = key.(string)
		}
		got, err := redis.Values(jobpathDriver(t, c, []string{"effect_marks", "effect_attempts", "source_ring",
			"source_static_batch", "source_static_ring", "source_unit_ring", "claim"}, "return claim(KEYS, ARGV)", ks, args...))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// the serial source first, taking its lock; the next slot skips it
	if got := claim("h:1:a"); len(got) < 2 || string(got[1].([]byte)) != `{"class":"C","args":[1]}` {
		t.Fatalf("first claim: %q", got)
	}
	if v, _ := redis.String(c.do(context.Background(), "GET", k.SerialLock("s"))); v != "h:1:a-token" {
		t.Errorf("the serial lock: %q", v)
	}
	if got := claim("h:2:a"); len(got) < 2 || string(got[1].([]byte)) != `{"class":"C","args":[3]}` {
		t.Errorf("second claim, the serial source held: %q", got)
	}
}

// A finish whose serial lock or unique state is a key of another type
// (written by hand) records the job's end and leaves that key alone, as
// the hard stop's requeue and the recovery do (effect_release.lua).
func TestFinishLeavesLockAndUniqueStateOfWrongType(t *testing.T) {
	t.Parallel()
	src := protocol.Source{Queue: "q", Serial: true}
	payload := `{"class":"C","args":[],"unique":{"uid":"u1"}}`
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	ctx := context.Background()
	const wid = "h:1:q"
	do("RPUSH", k.Queue("q"), payload)
	res, err := c.Claim(ctx, ClaimArgs{WorkerID: wid, Sources: []protocol.Source{src}, Token: "tok"})
	if err != nil || res.Payload == nil {
		t.Fatalf("claim: %v %v", res, err)
	}
	do("DEL", k.SerialLock("q"), k.UniqueState("u1"))
	do("HSET", k.SerialLock("q"), "f", "v")
	do("HSET", k.UniqueState("u1"), "f", "v")
	if err := c.Finish(ctx, wid, "h", src, Outcome{Seq: res.Seq, Kind: OutcomeOK, Class: "C", Token: "tok", UniqueID: "u1"}); err != nil {
		t.Fatalf("finish: %v", err)
	}
	if n, _ := redis.Int(c.do(ctx, "EXISTS", k.Worker(wid))); n != 0 {
		t.Error("worker:<id> is still there")
	}
	for _, key := range []string{k.SerialLock("q"), k.UniqueState("u1")} {
		if n, _ := redis.Int(c.do(ctx, "HLEN", key)); n != 1 {
			t.Errorf("%s was touched", key)
		}
	}
}

// A claim whose sources are a unit's ring and a static pool's ring finds
// each ring's description where its flag says, whatever its kind's length
// (a unit's is shorter: it sends no record queue or parked list).
func TestClaimFromTwoRingsOfEachKind(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	ctx := context.Background()
	unit, static := protocol.UnitSource("bp", "u1"), protocol.StaticPoolSource("p")
	fillStaticRing(c, do, "p", []string{"s1"}, map[string]int{"s1": 1})
	do("LPUSH", k.SourceKey(unit), "s2:b:1")
	do("LPUSH", k.Committed("s2:b:1"), `{"class":"C","args":["unit"]}`)
	for i, want := range []string{`"unit"`, `"class"`} {
		res, err := c.Claim(ctx, ClaimArgs{WorkerID: "h:" + strconv.Itoa(i) + ":q", Sources: []protocol.Source{unit, static}})
		if err != nil || res.Payload == nil || !strings.Contains(string(res.Payload), want) {
			t.Fatalf("claim %d: %s %v, want a payload with %s", i+1, res.Payload, err, want)
		}
		if i == 1 && !strings.HasPrefix(res.Source.List, protocol.StaticSourcePrefix("p")) {
			t.Errorf("the static job's source: %+v", res.Source)
		}
	}
	res, err := c.Claim(ctx, ClaimArgs{WorkerID: "h:9:q", Sources: []protocol.Source{unit, static}})
	if err != nil || res.Payload != nil {
		t.Errorf("both rings empty: %s %v", res.Payload, err)
	}
}

func TestJobpathEffectStatus(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	ctx := context.Background()
	set := func(key, status string) {
		t.Helper()
		if _, err := jobpathDriver(t, c, []string{"effect_status"}, "finish_status(KEYS[1], ARGV[1], ARGV[2])", []string{key}, status, "1700000000"); err != nil {
			t.Fatal(err)
		}
	}
	set(k.JobStatus("v3"), "v3:completed")
	if v, _ := redis.String(c.do(ctx, "GET", k.JobStatus("v3"))); v != `{"status":"completed","updated":1700000000}` {
		t.Errorf("resque-v3 status: %s", v)
	}
	// php-resque's only when the producer asked for tracking (the key exists)
	set(k.JobStatus("php-untracked"), "php:4")
	if n, _ := redis.Int(c.do(ctx, "EXISTS", k.JobStatus("php-untracked"))); n != 0 {
		t.Error("an untracked php-resque job got a status")
	}
	do("SET", k.JobStatus("php"), `{"status":2,"updated":1}`)
	set(k.JobStatus("php"), "php:4")
	if v, _ := redis.String(c.do(ctx, "GET", k.JobStatus("php"))); !strings.Contains(v, `"status":4`) || !strings.Contains(v, `"updated":1700000000`) {
		t.Errorf("php-resque status: %s", v)
	}
	if ttl, _ := redis.Int(c.do(ctx, "TTL", k.JobStatus("php"))); ttl <= 0 {
		t.Errorf("a finished php-resque job's status does not expire: %d", ttl)
	}
}

func TestJobpathEffectAttempts(t *testing.T) {
	t.Parallel()
	c, _, _ := ringTestClient(t, false)
	k := c.Keys()
	ctx := context.Background()
	key, index := k.Attempts("d1"), k.AttemptsIndex()
	write := func(attempts string) {
		t.Helper()
		if _, err := jobpathDriver(t, c, []string{"effect_attempts"}, "finish_attempts(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])",
			[]string{key, index}, attempts, "60", "1700000000"); err != nil {
			t.Fatal(err)
		}
	}
	write("2")
	if v, _ := redis.String(c.do(ctx, "GET", key)); v != "2" {
		t.Errorf("the counter: %q", v)
	}
	if at, _ := redis.Int64(c.do(ctx, "ZSCORE", index, key)); at != 1700000060 {
		t.Errorf("the index entry expires at %d", at)
	}
	write("0")
	if n, _ := redis.Int(c.do(ctx, "EXISTS", key, index)); n != 0 {
		t.Errorf("the counter and its index entry stay: %d", n)
	}
}

func TestJobpathFinishDelayed(t *testing.T) {
	t.Parallel()
	c, _, _ := ringTestClient(t, false)
	k := c.Keys()
	ctx := context.Background()
	item := []byte(`{"class":"C","args":[],"queue":"q"}`)
	keys := []string{k.Delayed(1700000100), k.Timestamps(item), k.DelayedSchedule()}
	got, err := redis.Strings(jobpathDriver(t, c, []string{"finish_delayed"},
		"local undo = {}\nfinish_delayed(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2], ARGV[3], undo)\nreturn undo",
		keys, item, "1700000100", protocol.DelayedMember(1700000100)))
	if err != nil || !slices.Equal(got, keys[:1]) {
		t.Fatalf("undo: %q %v, want the bucket", got, err)
	}
	if v, _ := redis.Strings(c.do(ctx, "LRANGE", keys[0], 0, -1)); len(v) != 1 || v[0] != string(item) {
		t.Errorf("the bucket: %q", v)
	}
	if ok, _ := redis.Bool(c.do(ctx, "SISMEMBER", keys[1], protocol.DelayedMember(1700000100))); !ok {
		t.Error("the item's timestamps do not name the bucket")
	}
	if s, _ := redis.Int64(c.do(ctx, "ZSCORE", keys[2], "1700000100")); s != 1700000100 {
		t.Errorf("the schedule: %d", s)
	}
}

func TestJobpathEffectEvents(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	stream := c.Keys().Events()
	// the finish's side: ARGV[1..7] the finish's own (worker-id, seq,
	// outcome, now, entry, class, queue), then the section past its tag
	_, err := jobpathDriver(t, c, []string{"effect_events"}, "finish_event(KEYS, ARGV, {1, 9}, 0, 0)", []string{stream},
		"h:1:q", "1", "fail", "1700000000", "", "Mail", "q", "e", "failed", "100", "0", "j1", "2", "1500")
	if err != nil {
		t.Fatal(err)
	}
	// the claim's side: the section is maxlen, max-age, queue prefix
	_, err = jobpathDriver(t, c, []string{"effect_events"},
		"claim_event(KEYS[1], ARGV, 1, ARGV[4], KEYS[2], nil, 'h:1:q', '1', '1700000000')",
		[]string{stream, c.Keys().Queue("mail")}, "100", "0", c.Keys().QueuePrefix(), `{"class":"Mail","args":[],"id":7,"failCount":3}`)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := c.Events(context.Background(), "", 10)
	if err != nil || len(evs) != 2 {
		t.Fatalf("%v %v", evs, err)
	}
	f, s := evs[0].Fields, evs[1].Fields
	if f["event"] != "failed" || f["id"] != "j1" || f["class"] != "Mail" || f["queue"] != "q" || f["worker"] != "h:1:q" ||
		f["attempt"] != "2" || f["duration_ms"] != "1500" {
		t.Errorf("finish event %v", f)
	}
	if s["event"] != "started" || s["id"] != "7" || s["queue"] != "mail" || s["attempt"] != "4" {
		t.Errorf("claim event %v (the attempt after the payload's failCount 3)", s)
	}
	// max-age trims entries older than it (ids are the server's time), by
	// whole nodes (100 entries each by default)
	do("DEL", stream)
	for i := 1; i <= 250; i++ {
		do("XADD", stream, "1-"+strconv.Itoa(i), "event", "old")
	}
	if _, err := jobpathDriver(t, c, []string{"effect_events"}, "events_add(KEYS[1], '100', '1000', ARGV[1], 'event', 'new')",
		[]string{stream}, strconv.FormatInt(time.Now().Unix(), 10)); err != nil {
		t.Fatal(err)
	}
	if evs, _ := c.Events(context.Background(), "", 1); len(evs) == 0 || evs[0].StreamID == "1-1" {
		t.Errorf("the old entries' first node stays: %v", evs)
	}
}

func TestJobpathEffectTags(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	do("ZADD", k.Tag("a"), 1, "j1", 2, "j2")
	do("ZADD", k.Tag("b"), 1, "j1")
	if _, err := jobpathDriver(t, c, []string{"effect_tags"}, "finish_tags(KEYS, ARGV, 1, 2)", []string{k.Tag("a"), k.Tag("b")}, "t", "2", "j1"); err != nil {
		t.Fatal(err)
	}
	for tag, want := range map[string]int{"a": 1, "b": 0} {
		if _, n, err := c.TagJobs(context.Background(), tag, 0, 0); err != nil || n != want {
			t.Errorf("tag %s: %d ids, want %d (%v)", tag, n, want, err)
		}
	}
}

// Run as scripts (EVALSHA, as on Redis 6.2), where the claim and the
// finish alone carry only their modules, events are written as with the
// function library.
func TestEventsAsScripts(t *testing.T) {
	t.Parallel()
	c, _, _ := ringTestClient(t, true)
	c.hotScripts = newHotScripts(false, nil)
	c.events = newEventsParts(c.keys, EventsConfig{On: true})
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if err := c.Enqueue(ctx, "q", []byte(`{"class":"C","args":[],"id":"`+id+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	args := ClaimArgs{WorkerID: "h:1:q", Host: "h", Queues: []string{"q"}, Now: time.Now()}
	res, err := c.Claim(ctx, args)
	if err != nil || res.Payload == nil {
		t.Fatal(res, err)
	}
	ferr, res, err := c.FinishAndClaim(ctx, "h:1:q", "h", protocol.QueueSource("q"), Outcome{Seq: res.Seq, JobID: "a", Class: "C", Now: time.Now()}, args)
	if err != nil || ferr != nil || res.Payload == nil {
		t.Fatal(ferr, err)
	}
	if err := c.Finish(ctx, "h:1:q", "h", protocol.QueueSource("q"), Outcome{Seq: res.Seq, JobID: "b", Class: "C", Kind: OutcomeDiscard, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	evs, err := c.Events(ctx, "", 10)
	var got []string
	for _, e := range evs {
		got = append(got, e.Fields["id"]+":"+e.Fields["event"])
	}
	if want := []string{"a:started", "a:succeeded", "b:started", "b:discarded"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("events %v %v, want %v", got, err, want)
	}
}
