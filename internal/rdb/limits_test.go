package rdb

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// limitsRules parses specs: caps, and rates after "rate:".
func limitsRules(t *testing.T, specs ...string) []protocol.Limit {
	t.Helper()
	var out []protocol.Limit
	for _, s := range specs {
		var l protocol.Limit
		var err error
		if r, ok := strings.CutPrefix(s, "rate:"); ok {
			l, err = protocol.ParseRate(r)
		} else {
			l, err = protocol.ParseLimit(s)
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

// claimClass claims for wid and returns the job's class ("" for none).
func claimClass(t *testing.T, c *Client, wid string, l *ClaimLimits, now time.Time, queues ...string) (string, ClaimResult) {
	t.Helper()
	res, err := c.Claim(context.Background(), ClaimArgs{WorkerID: wid, Host: "h", Queues: queues, Now: now, Limits: l})
	if err != nil {
		t.Fatal(err)
	}
	if res.Empty || res.Paused {
		return "", res
	}
	p, err := protocol.DecodePayload(res.Payload)
	if err != nil {
		t.Fatal(err)
	}
	return p.Class, res
}

// holdsOf is what the runtime computes for a claimed job: the caps' slots.
func holdsOf(l *ClaimLimits, res ClaimResult) []LimitHold {
	p, _ := protocol.DecodePayload(res.Payload)
	var hs []LimitHold
	for _, r := range l.Rules() {
		if r.Kind != protocol.LimitCap {
			continue
		}
		if name, ok := r.LimitHeld(res.Queue, p.Class, res.Payload); ok {
			hs = append(hs, LimitHold{Name: name, Cap: r.N})
		}
	}
	return hs
}

func TestLimitsCapParksAndReleases(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	l := NewClaimLimits(limitsRules(t, "A=2"), 15*time.Second)
	for _, cls := range []string{"A", "A", "A", "B"} {
		do("RPUSH", k.Queue("q"), `{"class":"`+cls+`","args":[]}`)
	}
	now := time.Now()
	var held []ClaimResult
	for i, want := range []string{"A", "A", "B", ""} {
		cls, res := claimClass(t, c, fmt.Sprintf("w%d", i), l, now, "q")
		if cls != want {
			t.Fatalf("claim %d: %q, want %q", i, cls, want)
		}
		if cls == "A" {
			held = append(held, res)
		}
	}
	if n, _ := redis.Int(c.do(context.Background(), "LLEN", k.LimitBase("class:A")+protocol.LimitParkedSuffix)); n != 1 {
		t.Fatalf("parked: %d, want 1", n)
	}
	states, err := c.Limits(context.Background(), now)
	if err != nil || len(states) != 1 || states[0].Holders != 2 || states[0].Parked != 1 {
		t.Fatalf("limits: %+v %v", states, err)
	}
	// a finish frees its slot and moves the parked job back
	res := held[0]
	if err := c.Finish(context.Background(), "w0", "h", protocol.QueueSource("q"), Outcome{Seq: res.Seq, Now: now, Class: "A",
		Limits: holdsOf(l, res)}); err != nil {
		t.Fatal(err)
	}
	if cls, _ := claimClass(t, c, "w0", l, now, "q"); cls != "A" {
		t.Fatalf("after the finish: %q, want the parked A", cls)
	}
	// a holder killed: its lease runs out, the sweep (or a claim) frees it
	do("RPUSH", k.Queue("q"), `{"class":"A","args":[1]}`)
	if cls, _ := claimClass(t, c, "w9", l, now, "q"); cls != "" {
		t.Fatalf("over the cap: %q", cls)
	}
	later := now.Add(16 * time.Second)
	if swept, err := c.SweepLimits(context.Background(), l, nil, later, "h:1:q"); err != nil || swept.Moved != 1 {
		t.Fatalf("sweep moved %d, %v; want 1", swept.Moved, err)
	}
	if cls, _ := claimClass(t, c, "w9", l, later, "q"); cls != "A" {
		t.Fatalf("after the leases ran out: %q", cls)
	}
}

func TestLimitsPerKeyCap(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	l := NewClaimLimits(limitsRules(t, "Import[args.0.tenant]=1"), 15*time.Second)
	for _, tenant := range []string{"a", "a", "b", "7"} {
		do("RPUSH", k.Queue("q"), `{"class":"Import","args":[{"tenant":"`+tenant+`"}]}`)
	}
	do("RPUSH", k.Queue("q"), `{"class":"Import","args":[{"tenant":7}]}`)
	now := time.Now()
	var got []string
	for i := range 5 {
		_, res := claimClass(t, c, fmt.Sprintf("w%d", i), l, now, "q")
		if res.Payload == nil {
			break
		}
		hs := holdsOf(l, res)
		got = append(got, hs[0].Name)
	}
	// "7" and 7 are one key
	want := []string{"class:Import[args.0.tenant]=a", "class:Import[args.0.tenant]=b", "class:Import[args.0.tenant]=7"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("held %q, want %q", got, want)
	}
}

// A rate of 100 a minute over 60 s of a test clock, claims every 10 ms
// from a queue that always has jobs: the starts are within 5% of 100.
func TestLimitsRateOverAMinute(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	l := NewClaimLimits(limitsRules(t, "rate:R=100/1m"), 15*time.Second)
	for range 400 {
		do("RPUSH", k.Queue("q"), `{"class":"R","args":[]}`)
	}
	do("RPUSH", k.Queue("q"), `{"class":"Other","args":[]}`)
	start := time.UnixMilli(1_800_000_000_000)
	starts, others := 0, 0
	for ms := 0; ms < 60_000; ms += 10 {
		now := start.Add(time.Duration(ms) * time.Millisecond)
		if ms%1000 == 0 {
			if _, err := c.SweepLimits(context.Background(), l, nil, now, "h:1:q"); err != nil {
				t.Fatal(err)
			}
		}
		cls, res := claimClass(t, c, "w", l, now, "q")
		if cls == "" {
			continue
		}
		if cls == "R" {
			starts++
		} else {
			others++
		}
		if err := c.Finish(context.Background(), "w", "h", protocol.QueueSource("q"), Outcome{Seq: res.Seq, Now: now, Class: cls}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d starts of R in 60 s at 100/1m", starts)
	if starts < 95 || starts > 105 {
		t.Errorf("%d starts in 60 s at 100/1m", starts)
	}
	if others != 1 {
		t.Errorf("the other class ran %d times, want 1", others)
	}
	// nothing lost: queue + waiting + started = 401
	ql, _ := redis.Int(c.do(context.Background(), "LLEN", k.Queue("q")))
	wl, _ := redis.Int(c.do(context.Background(), "LLEN", k.LimitBase("class:R")+protocol.LimitWaitingSuffix))
	if ql+wl+starts+others != 401 {
		t.Errorf("queue %d + waiting %d + started %d != 401", ql, wl, starts+others)
	}
}

// limitsBatch finishes each claimed job in res (a success, with the caps
// it holds under l) and claims again for the same slots in one batched
// call (finish_claim_batch.lua), as a busy process's slots do; it returns
// each slot's new job.
func limitsBatch(t *testing.T, c *Client, l *ClaimLimits, now time.Time, res map[string]ClaimResult) map[string]ClaimResult {
	t.Helper()
	var calls []*batchCall
	args := map[*batchCall]ClaimArgs{}
	for wid, r := range res {
		a := ClaimArgs{WorkerID: wid, Host: "h", Queues: []string{"q"}, Now: now, Limits: l}
		ck, ca := c.claimKeysArgs(a)
		var holds []LimitHold
		if l != nil {
			holds = holdsOf(l, r)
		}
		call := &batchCall{workerID: wid, host: "h", src: r.Source, ck: ck, ca: ca, sources: 1,
			o: Outcome{Seq: r.Seq, Kind: OutcomeOK, Class: "A", Now: now, Limits: holds}, done: make(chan struct{})}
		calls = append(calls, call)
		args[call] = a
	}
	(&finishBatcher{c: c}).send(calls)
	out := map[string]ClaimResult{}
	for _, call := range calls {
		_, r, err := parseFinishClaim(call.workerID, args[call], call.reply, call.err)
		if err != nil {
			t.Fatal(err)
		}
		out[call.workerID] = r
	}
	return out
}

func TestLimitsBatchFreesAndTakesCaps(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	l := NewClaimLimits(limitsRules(t, "A=2"), 15*time.Second)
	for _, cls := range []string{"A", "A", "B", "B", "B", "B", "A", "A"} {
		do("RPUSH", k.Queue("q"), `{"class":"`+cls+`","args":[]}`)
	}
	now := time.Now()
	res := map[string]ClaimResult{}
	for i := 0; i < 4; i++ {
		wid := fmt.Sprintf("w%d", i)
		_, res[wid] = claimClass(t, c, wid, l, now, "q")
	}
	// the two A jobs finish in the same call as the claims that need
	// their slots: the finishes (short form with caps) come first
	next := limitsBatch(t, c, l, now, res)
	holders := k.LimitBase("class:A") + protocol.LimitHoldersSuffix
	members, err := redis.Strings(c.do(context.Background(), "ZRANGE", holders, "0", "-1"))
	if err != nil {
		t.Fatal(err)
	}
	var as []string
	for wid, r := range next {
		p, _ := protocol.DecodePayload(r.Payload)
		if p != nil && p.Class == "A" {
			as = append(as, LimitMember(wid, r.Seq))
		}
	}
	if len(as) != 2 || len(members) != 2 || !(members[0] == as[0] && members[1] == as[1] || members[0] == as[1] && members[1] == as[0]) {
		t.Fatalf("holders %v, want the new A jobs' %v", members, as)
	}
	if n, _ := redis.Int(c.do(context.Background(), "LLEN", k.LimitBase("class:A")+protocol.LimitParkedSuffix)); n != 0 {
		t.Fatalf("parked: %d, want 0", n)
	}
}

func TestLimitsBatchRateCountsEachStart(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	k := c.Keys()
	for _, cls := range []string{"B", "B", "B", "A", "A", "A"} {
		do("RPUSH", k.Queue("q"), `{"class":"`+cls+`","args":[]}`)
	}
	now := time.Now()
	res := map[string]ClaimResult{}
	for i := 0; i < 3; i++ {
		wid := fmt.Sprintf("w%d", i)
		_, res[wid] = claimClass(t, c, wid, nil, now, "q")
	}
	// one start in 30 s: of three claims in one call, one starts an A and
	// the other As wait
	l := NewClaimLimits(limitsRules(t, "rate:A=2/1m"), 15*time.Second)
	started := 0
	for _, r := range limitsBatch(t, c, l, now, res) {
		if r.Payload != nil {
			started++
		}
	}
	waiting := k.LimitBase("class:A") + protocol.LimitWaitingSuffix
	if n, _ := redis.Int(c.do(context.Background(), "LLEN", waiting)); started != 1 || n != 2 {
		t.Fatalf("started %d, waiting %d; want 1 and 2", started, n)
	}
	if tat, _ := redis.Float64(c.do(context.Background(), "GET", k.LimitBase("class:A")+protocol.LimitTATSuffix)); tat < float64(now.UnixMilli()+29000) {
		t.Fatalf("tat %v, want 30 s on", tat)
	}
}
