package rdb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// endsClaim claims the next job of q as wid (under l, when not nil).
func endsClaim(t *testing.T, c *Client, q, wid string, l *ClaimLimits) (ClaimResult, *protocol.Payload) {
	t.Helper()
	res, err := c.Claim(context.Background(), ClaimArgs{WorkerID: wid, Host: "h", Queues: []string{q}, Now: time.Now(), Limits: l})
	if err != nil || res.Payload == nil {
		t.Fatalf("claim from %s: %+v %v", q, res, err)
	}
	p, err := protocol.DecodePayload(res.Payload)
	if err != nil {
		t.Fatal(err)
	}
	return res, p
}

// endsPrune recovers dead worker wid's job as the recovery service does,
// requeueing it up to maxRecoveries times.
func endsPrune(t *testing.T, c *Client, wid string, maxRecoveries int, end JobEnd) PruneResult {
	t.Helper()
	ctx := context.Background()
	rec, err := c.WorkerRecord(ctx, wid)
	if err != nil || rec == nil {
		t.Fatalf("record of %s: %q %v", wid, rec, err)
	}
	r, err := protocol.ParseWorkerRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	f := protocol.Failure{FailedAt: time.Now(), Payload: r.Payload, Exception: protocol.ExcPruneDirtyExit, Error: "dead",
		Backtrace: []string{}, Worker: wid, Queue: r.Queue}
	end.Now = time.Now()
	res, err := c.Prune(ctx, PruneArgs{WorkerID: wid, Record: rec, Queue: r.Queue, Source: r.SourceOf(), Payload: r.Payload,
		MaxRecoveries: maxRecoveries, Failure: f.Encode(), Host: "h", End: end})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// endsEvents are the events stream's entries as "event id worker".
func endsEvents(t *testing.T, c *Client) []string {
	t.Helper()
	es, err := redis.Values(c.do(context.Background(), "XRANGE", c.keys.Events(), "-", "+"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		v, _ := redis.Values(e, nil)
		kv, _ := redis.StringMap(v[1], nil)
		out = append(out, kv["event"]+" "+kv["id"]+" "+kv["worker"])
	}
	return out
}

// A parent recovered past its maximum is recorded as failed and settles
// its held jobs and its group as a failed finish does, with its event and
// those of the held jobs it settles; a
// parent recovered and requeued has not ended: its children wait.
func TestPruneSettlesAFailedParent(t *testing.T) {
	t.Parallel()
	c, _, _ := ringTestClient(t, false)
	c.events = newEventsParts(c.keys, EventsConfig{On: true})
	ctx := context.Background()
	depsEnqueue(t, c, "p", "a", "", nil, "g")
	depsEnqueue(t, c, "q", "fail", protocol.OnParentFailureFail, []DepParent{{Name: "a"}}, "")
	depsEnqueue(t, c, "q", "run", protocol.OnParentFailureRun, []DepParent{{Name: "a"}}, "")
	if _, err := c.SealGroup(ctx, "g", GroupCallback{When: "complete", Queue: "cb", Class: "Done", ID: "cb1"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	end := func(p *protocol.Payload) JobEnd {
		return JobEnd{DepsID: p.ID, Group: protocol.PayloadGroup(p), JobID: p.ID, Class: p.Class}
	}
	_, p := endsClaim(t, c, "p", "h:1:p", nil)
	if r := endsPrune(t, c, "h:1:p", 1, end(p)); r != PruneRequeued {
		t.Fatalf("first recovery: %s", r)
	}
	if got := queueIDs(t, c, "q"); len(got) != 0 {
		t.Fatalf("children released by a requeue: %v", got)
	}
	if g, _ := c.Group(ctx, "g"); g.Fired || g.Pending != 1 {
		t.Fatalf("group counted a requeue: %+v", g)
	}
	_, p = endsClaim(t, c, "p", "h:2:p", nil)
	if r := endsPrune(t, c, "h:2:p", 1, end(p)); r != PruneFailed {
		t.Fatalf("second recovery: %s", r)
	}
	if got := queueIDs(t, c, "q"); !slices.Equal(got, []string{"run"}) {
		t.Fatalf("queue q %v, want [run]", got)
	}
	if st, _ := c.DepJob(ctx, "fail"); st.State != "failed" {
		t.Errorf("fail: %+v", st)
	}
	if g, _ := c.Group(ctx, "g"); !g.Fired || g.Failed != 1 {
		t.Errorf("group %+v", g)
	}
	if cbs := queueIDs(t, c, "cb"); !slices.Equal(cbs, []string{"cb1"}) {
		t.Errorf("callbacks %v", cbs)
	}
	// the held jobs the parent's recorded end settles have their events
	// after the parent's, in the order of its set of held jobs: one
	// failed by it (policy fail), one released (policy run)
	want := []string{"started a h:1:p", "requeued a h:1:p", "started a h:2:p", "failed a h:2:p", "failed fail ", "released run "}
	got := endsEvents(t, c)
	if len(got) == len(want) {
		slices.Sort(got[4:])
	}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// A plain job with every feature off: the recovery sends no section and
// writes no key of them.
func TestPrunePlainSendsNothing(t *testing.T) {
	t.Parallel()
	c, ns, do := ringTestClient(t, false)
	do("RPUSH", c.keys.Queue("q"), `{"class":"C","args":[]}`)
	endsClaim(t, c, "q", "h:1:q", nil)
	if r := endsPrune(t, c, "h:1:q", 0, JobEnd{Class: "C"}); r != PruneFailed {
		t.Fatalf("recovery: %s", r)
	}
	keys, _ := redis.Strings(c.do(context.Background(), "KEYS", ns+":resque-go:*"))
	for _, k := range keys {
		if strings.Contains(k, ":events") || strings.Contains(k, ":deps:") || strings.Contains(k, ":limit:") {
			t.Errorf("wrote %s", k)
		}
	}
}

// A requeue and a recovery free the job's cap slot at once (not when its
// lease ends) and move a parked job back; a requeue writes its event.
func TestEndsFreeCapSlots(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	c.events = newEventsParts(c.keys, EventsConfig{On: true})
	ctx := context.Background()
	k := c.Keys()
	l := NewClaimLimits(limitsRules(t, "A=1"), time.Hour)
	do("RPUSH", k.Queue("q"), `{"class":"A","args":[1],"id":"x"}`, `{"class":"A","args":[2],"id":"y"}`)
	holders := k.LimitBase("class:A") + protocol.LimitHoldersSuffix
	res, p := endsClaim(t, c, "q", "h:1:q", l)
	if cls, _ := claimClass(t, c, "h:2:q", l, time.Now(), "q"); cls != "" {
		t.Fatalf("over the cap: %q", cls) // y parked
	}
	end := JobEnd{Limits: LimitHoldsOf(l.Rules(), res.Source, res.Queue, p.Class, res.Payload), Seq: res.Seq,
		JobID: p.ID, Class: p.Class, Queue: res.Queue, Now: time.Now()}
	if err := c.Requeue(ctx, "h:1:q", res.Source, res.Payload, "", end); err != nil {
		t.Fatal(err)
	}
	if n, _ := redis.Int(c.do(ctx, "ZCARD", holders)); n != 0 {
		t.Fatalf("holders after the requeue: %d", n)
	}
	// x back at the head, then the parked y moved back before it (as a
	// finish moves a parked job back: to the head)
	if got := queueIDs(t, c, "q"); !slices.Equal(got, []string{"y", "x"}) {
		t.Fatalf("queue %v", got)
	}
	do("LPOP", k.Queue("q")) // y
	res, p = endsClaim(t, c, "q", "h:3:q", l)
	end.Seq = ""
	end.Limits = LimitHoldsOf(l.Rules(), res.Source, res.Queue, p.Class, res.Payload)
	if r := endsPrune(t, c, "h:3:q", 3, end); r != PruneRequeued {
		t.Fatalf("recovery: %s", r)
	}
	if n, _ := redis.Int(c.do(ctx, "ZCARD", holders)); n != 0 {
		t.Fatalf("holders after the recovery: %d", n)
	}
	want := []string{"started x h:1:q", "requeued x h:1:q", "started x h:3:q", "requeued x h:3:q"}
	if got := endsEvents(t, c); !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// ends.lua reads the finish's sections m, p and g as their Go layouts
// append them, and its own e section as appendEnds does.
func TestEndsSectionsMatchLayouts(t *testing.T) {
	src := scriptSource("ends.lua")
	sizes := map[string][2]int{}
	line := src[strings.Index(src, "local ends_sizes = {"):]
	line = line[:strings.Index(line, "\n")]
	for _, part := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "local ends_sizes = {"), "}"), "}, ") {
		var tag string
		var k, a int
		if _, err := fmt.Sscanf(strings.TrimSuffix(part, "}"), "%s = {%d, %d", &tag, &k, &a); err != nil {
			t.Fatalf("%q: %v", part, err)
		}
		sizes[tag] = [2]int{k, a}
	}
	for tag, l := range map[string]jobpathLayout{"m": effectLimitsLayout, "p": effectDepsLayout, "g": effectGroupLayout} {
		if got, want := sizes[tag], [2]int{len(l.Keys), len(l.Args)}; got != want {
			t.Errorf("section %s: ends.lua reads %v, %s appends %v", tag, got, l.Module, want)
		}
	}
	c := &Client{keys: protocol.NewKeys("ns"), events: newEventsParts(protocol.NewKeys("ns"), EventsConfig{On: true})}
	keys, args := c.appendEnds(nil, nil, "w", JobEnd{})
	if got, want := sizes["e"], [2]int{len(keys), len(args)}; got != want || args[0] != "e" {
		t.Errorf("section e: ends.lua reads %v, appendEnds appends %v (%v)", got, want, args)
	}
	// nothing applies: nothing is sent
	c.events = nil
	if keys, args := c.appendEnds(nil, nil, "w", JobEnd{Class: "C", Queue: "q", Limits: []LimitHold{{Name: "x", Cap: 1}}}); len(keys)+len(args) != 0 {
		t.Errorf("a plain job sends %v %v", keys, args)
	}
}
