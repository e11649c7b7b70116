package rdb

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// depsRun claims the next job of queue q as worker wid and finishes it
// with kind, sending the dependency and group sections as a worker that
// knows dependencies are in use does. It returns the payload run.
func depsRun(t *testing.T, c *Client, q, wid string, kind OutcomeKind) *protocol.Payload {
	t.Helper()
	now := time.Unix(1_800_000_000, 0)
	res, err := c.Claim(context.Background(), ClaimArgs{WorkerID: wid, Host: "h", Queues: []string{q}, Now: now})
	if err != nil || res.Payload == nil {
		t.Fatalf("claim from %s: %+v %v", q, res, err)
	}
	p, err := protocol.DecodePayload(res.Payload)
	if err != nil {
		t.Fatal(err)
	}
	o := Outcome{Seq: res.Seq, Kind: kind, Class: p.Class, Now: now, DepsID: p.ID, Group: protocol.PayloadGroup(p)}
	if kind == OutcomeFail {
		o.Entry = []byte(`{"failed_at":"x","payload":` + string(res.Payload) + `,"exception":"E","error":"e","backtrace":[],"worker":"w","queue":"` + q + `"}`)
	}
	if kind == OutcomeRetry {
		o.Entry, o.Push = []byte(`{}`), res.Payload
	}
	if err := c.Finish(context.Background(), wid, "h", res.Source, o); err != nil {
		t.Fatalf("finish: %v", err)
	}
	return p
}

func depsPayload(t *testing.T, id string, d protocol.DepFields) []byte {
	t.Helper()
	p, err := protocol.NewPayload("J", []byte(`[1]`), protocol.EnqueueOptions{ID: id, Now: time.Unix(1_800_000_000, 0), Deps: d})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func depsEnqueue(t *testing.T, c *Client, q, id string, policy string, parents []DepParent, group string) string {
	t.Helper()
	d := protocol.DepFields{OnParentFailure: policy, Group: group}
	for _, p := range parents {
		if p.Group {
			d.AfterGroups = append(d.AfterGroups, p.Name)
		} else {
			d.After = append(d.After, p.Name)
		}
	}
	if policy == "" {
		policy = protocol.OnParentFailureFail
	}
	state, _, err := c.EnqueueDeps(context.Background(), DepJob{ID: id, Queue: q, Payload: depsPayload(t, id, d),
		Policy: policy, Parents: parents, Group: group}, time.Unix(1_800_000_000, 0))
	if err != nil {
		t.Fatalf("enqueue %s: %v", id, err)
	}
	return state
}

func queueIDs(t *testing.T, c *Client, q string) []string {
	t.Helper()
	raw, err := redis.ByteSlices(c.do(context.Background(), "LRANGE", c.Keys().Queue(q), 0, -1))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range raw {
		p, err := protocol.DecodePayload(r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	return ids
}

// A chain and a diamond through the real claim and finish: each child is
// queued when, and only when, its last parent succeeds, once.
func TestDepsChainAndDiamond(t *testing.T) {
	t.Parallel()
	c, _, _ := ringTestClient(t, false)
	ctx := context.Background()
	// diamond: a -> b, c -> d
	if s := depsEnqueue(t, c, "q", "a", "", nil, ""); s != "queued" {
		t.Fatalf("a: %s", s)
	}
	for _, id := range []string{"b", "c"} {
		if s := depsEnqueue(t, c, "q", id, "", []DepParent{{Name: "a"}}, ""); s != "held" {
			t.Fatalf("%s: %s", id, s)
		}
	}
	if s := depsEnqueue(t, c, "q", "d", "", []DepParent{{Name: "b"}, {Name: "c"}}, ""); s != "held" {
		t.Fatalf("d: %s", s)
	}
	want := func(ids ...string) {
		t.Helper()
		got := queueIDs(t, c, "q")
		slices.Sort(got)
		if strings.Join(got, ",") != strings.Join(ids, ",") {
			t.Fatalf("queue %v, want %v", got, ids)
		}
	}
	want("a")
	depsRun(t, c, "q", "h:1:q", OutcomeOK)
	want("b", "c")
	first := depsRun(t, c, "q", "h:1:q", OutcomeOK).ID
	other := map[string]string{"b": "c", "c": "b"}[first]
	want(other)
	st, _ := c.DepJob(ctx, "d")
	if st.State != "held" || st.Waiting != 1 || len(st.Parents) != 2 {
		t.Fatalf("d: %+v", st)
	}
	depsRun(t, c, "q", "h:1:q", OutcomeOK)
	want("d")
	// a parent that already succeeded releases at once
	if s := depsEnqueue(t, c, "q", "e", "", []DepParent{{Name: "a"}}, ""); s != "queued" {
		t.Fatalf("after a finished parent: %s", s)
	}
}

// A failed parent fails, runs or drops its children per their policy,
// and a failed or dropped child's own children learn it.
func TestDepsParentFailure(t *testing.T) {
	t.Parallel()
	c, _, _ := ringTestClient(t, false)
	ctx := context.Background()
	depsEnqueue(t, c, "p", "a", "", nil, "")
	depsEnqueue(t, c, "q", "fail", protocol.OnParentFailureFail, []DepParent{{Name: "a"}}, "")
	depsEnqueue(t, c, "q", "run", protocol.OnParentFailureRun, []DepParent{{Name: "a"}}, "")
	depsEnqueue(t, c, "q", "drop", protocol.OnParentFailureDrop, []DepParent{{Name: "a"}}, "")
	depsEnqueue(t, c, "q", "grand", protocol.OnParentFailureRun, []DepParent{{Name: "fail"}}, "")
	// a retry is no end: nothing moves
	depsRun(t, c, "p", "h:1:p", OutcomeRetry)
	if got := queueIDs(t, c, "q"); len(got) != 0 {
		t.Fatalf("released on a retry: %v", got)
	}
	depsRun(t, c, "p", "h:1:p", OutcomeFail)
	if got := queueIDs(t, c, "q"); strings.Join(got, ",") != "run,grand" && strings.Join(got, ",") != "grand,run" {
		t.Fatalf("queue %v", got)
	}
	for id, state := range map[string]string{"fail": "failed", "drop": "dropped", "run": "queued"} {
		st, err := c.DepJob(ctx, id)
		if err != nil || st.State != state {
			t.Errorf("%s: %+v %v", id, st, err)
		}
	}
	n, _ := redis.Int(c.do(ctx, "LLEN", c.Keys().Failed()))
	if n != 2 { // a's own entry and fail's
		t.Errorf("failed entries %d, want 2", n)
	}
	e, _ := redis.String(c.do(ctx, "LINDEX", c.Keys().Failed(), -1))
	if !strings.Contains(e, "ResqueGo::ParentFailed") || !strings.Contains(e, `"id":"fail"`) {
		t.Errorf("entry %s", e)
	}
	if d, _ := redis.Int(c.do(ctx, "GET", c.Keys().DepDropped())); d != 1 {
		t.Errorf("dropped %d", d)
	}
	// a parent that already failed acts at once
	if s := depsEnqueue(t, c, "q", "late", "", []DepParent{{Name: "a"}}, ""); s != "failed" {
		t.Errorf("late child of a failed parent: %s", s)
	}
}

// A group counts each job once at its end (not per attempt), fires its
// callbacks once, and releases the jobs waiting for it.
func TestDepsGroup(t *testing.T) {
	t.Parallel()
	c, _, _ := ringTestClient(t, false)
	ctx := context.Background()
	const n = 2000
	for i := 0; i < n; i++ {
		depsEnqueue(t, c, "q", fmt.Sprintf("j%d", i), "", nil, "g")
	}
	depsEnqueue(t, c, "after", "w", "", []DepParent{{Group: true, Name: "g"}}, "")
	now := time.Unix(1_800_000_000, 0)
	if fired, err := c.SealGroup(ctx, "g", GroupCallback{When: "complete", Queue: "cb", Class: "Done", Args: []byte(`["x"]`), ID: "cb1"}, now); err != nil || fired {
		t.Fatalf("seal: %v %v", fired, err)
	}
	if _, err := c.SealGroup(ctx, "g", GroupCallback{When: "success", Queue: "cb", Class: "AllGood", ID: "cb2"}, now); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		kind := OutcomeOK
		switch {
		case i%10 == 0:
			depsRun(t, c, "q", "h:1:q", OutcomeRetry) // goes back to the end of q
			continue
		case i%7 == 0:
			kind = OutcomeFail
		}
		depsRun(t, c, "q", "h:1:q", kind)
	}
	for {
		if l, _ := redis.Int(c.do(ctx, "LLEN", c.Keys().Queue("q"))); l == 0 {
			break
		}
		depsRun(t, c, "q", "h:1:q", OutcomeOK)
	}
	g, err := c.Group(ctx, "g")
	if err != nil || !g.Fired || g.Pending != 0 || g.Total != n || g.Succeeded+g.Failed != n || g.Failed == 0 {
		t.Fatalf("group %+v %v", g, err)
	}
	cbs, _ := redis.Strings(c.do(ctx, "LRANGE", c.Keys().Queue("cb"), 0, -1))
	want := fmt.Sprintf(`["x",{"group":"g","total":%d,"succeeded":%d,"failed":%d}]`, n, g.Succeeded, g.Failed)
	if len(cbs) != 1 || !strings.Contains(cbs[0], `"args":`+want) {
		t.Fatalf("callbacks %v, want one with args %s", cbs, want)
	}
	if got := queueIDs(t, c, "after"); len(got) != 0 {
		t.Errorf("a job after a group with failures ran: %v", got)
	}
	if st, _ := c.DepJob(ctx, "w"); st.State != "failed" {
		t.Errorf("w: %+v", st)
	}
	if _, _, err := c.EnqueueDeps(ctx, DepJob{ID: "x", Queue: "q", Payload: depsPayload(t, "x", protocol.DepFields{Group: "g"}), Group: "g"}, now); err == nil {
		t.Error("a job joined a fired group")
	}
}

// The effects alone, through a driver: a parent's end settles its held
// jobs; a group's last end fires it.
func TestJobpathEffectDeps(t *testing.T) {
	t.Parallel()
	c, _, _ := ringTestClient(t, false)
	k := c.Keys()
	depsEnqueue(t, c, "q", "child", "", []DepParent{{Name: "p"}}, "")
	body := "finish_deps(KEYS[1], KEYS[2], ARGV[1], ARGV[2], {prefix = ARGV[3], failed_at = 'x', qt = '1', ttl = '60', worker = 'w'})"
	for i := 0; i < 2; i++ { // applied twice: released once
		if _, err := jobpathDriver(t, c, []string{"effect_deps"}, body, []string{k.DepOutcome("p"), k.DepChildren("p")}, "p", "ok", k.DepPrefix()); err != nil {
			t.Fatal(err)
		}
	}
	if got := queueIDs(t, c, "q"); strings.Join(got, ",") != "child" {
		t.Fatalf("queue %v", got)
	}
	if v, _ := redis.String(c.do(context.Background(), "GET", k.DepOutcome("p"))); v != "succeeded" {
		t.Errorf("outcome %q", v)
	}
}

func TestJobpathEffectGroup(t *testing.T) {
	t.Parallel()
	c, _, _ := ringTestClient(t, false)
	k := c.Keys()
	ctx := context.Background()
	depsEnqueue(t, c, "q", "j1", "", nil, "g")
	if _, err := c.SealGroup(ctx, "g", GroupCallback{When: "complete", Queue: "cb", Class: "Done", ID: "cb"}, time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	body := "finish_group(KEYS[1], KEYS[2], ARGV[1], ARGV[2], {prefix = ARGV[3], failed_at = 'x', qt = '1', ttl = '60', worker = 'w'})"
	for _, outcome := range []string{"retry", "ok", "ok"} {
		if _, err := jobpathDriver(t, c, []string{"effect_deps", "effect_group"}, body, []string{k.Group("g"), k.GroupChildren("g")}, "g", outcome, k.DepPrefix()); err != nil {
			t.Fatal(err)
		}
	}
	g, _ := c.Group(ctx, "g")
	if !g.Fired || g.Outcome != "succeeded" {
		t.Errorf("group %+v", g)
	}
	if n, _ := redis.Int(c.do(ctx, "LLEN", k.Queue("cb"))); n != 1 {
		t.Fatalf("callbacks %d, want 1", n)
	}
}

// An enqueue with parents that asks for its events writes the job's
// enqueued event and, when it settles the job at once, its released event
// (its parents have all succeeded) or its failed or discarded one (a
// parent had failed; by its policy), in the same step; one that does not
// ask writes none. A held job's released event is its parent's finish's.
func TestDepsEnqueueEvents(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, false)
	ctx := context.Background()
	do("SET", c.keys.DepOutcome("done"), "succeeded")
	do("SET", c.keys.DepOutcome("bad"), "failed")
	enqueueP := func(id, parent, policy string, event bool) string {
		t.Helper()
		d := protocol.DepFields{After: []string{parent}, OnParentFailure: policy}
		state, _, err := c.EnqueueDeps(ctx, DepJob{ID: id, Queue: "q", Payload: depsPayload(t, id, d), Policy: policy,
			Parents: []DepParent{{Name: parent}}, Event: event, Class: "J"}, time.Now())
		if err != nil {
			t.Fatalf("enqueue %s: %v", id, err)
		}
		return state
	}
	enqueue := func(id, parent string, event bool) string {
		t.Helper()
		return enqueueP(id, parent, protocol.OnParentFailureFail, event)
	}
	if st := enqueue("held", "running", true); st != "held" {
		t.Fatalf("held: %s", st)
	}
	if st := enqueue("now", "done", true); st != "queued" {
		t.Fatalf("now: %s", st)
	}
	if st := enqueue("quiet", "done", false); st != "queued" {
		t.Fatalf("quiet: %s", st)
	}
	if st := enqueue("orphan", "bad", true); st != "failed" {
		t.Fatalf("orphan: %s", st)
	}
	if st := enqueueP("dropped", "bad", protocol.OnParentFailureDrop, true); st != "dropped" {
		t.Fatalf("dropped: %s", st)
	}
	evs, err := c.Events(ctx, "0", 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		f := e.Fields
		got = append(got, strings.Join([]string{f["event"], f["id"], f["class"], f["queue"], f["worker"], f["attempt"]}, " "))
	}
	want := []string{"enqueued held J q  0", "enqueued now J q  0", "released now J q  0",
		"enqueued orphan J q  0", "failed orphan J q  0", "enqueued dropped J q  0", "discarded dropped J q  0"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// Tags go with dependencies and groups: a held or queued job is in its
// tags' indexes from its enqueue; a parent's failure that ends it (policy
// fail or drop) takes it out in the same step; one released and run
// leaves them at its finish; one failed at its enqueue never joins.
func TestDepsTags(t *testing.T) {
	t.Parallel()
	c, _, _ := ringTestClient(t, false)
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	enqueue := func(id, policy string, parents []DepParent, group string, tags ...string) string {
		t.Helper()
		d := protocol.DepFields{OnParentFailure: policy, Group: group}
		for _, p := range parents {
			d.After = append(d.After, p.Name)
		}
		payload, err := protocol.NewPayload("J", []byte(`[1]`), protocol.EnqueueOptions{ID: id, Now: now, Deps: d, Tags: tags})
		if err != nil {
			t.Fatal(err)
		}
		state, _, err := c.EnqueueDeps(ctx, DepJob{ID: id, Queue: "q", Payload: payload, Policy: policy, Parents: parents, Group: group, Tags: tags}, now)
		if err != nil {
			t.Fatalf("enqueue %s: %v", id, err)
		}
		return state
	}
	tagged := func(tag string) string {
		t.Helper()
		ids, err := redis.Strings(c.do(ctx, "ZRANGE", c.Keys().Tag(tag), 0, -1))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(ids)
		return strings.Join(ids, ",")
	}
	depsEnqueue(t, c, "p", "a", "", nil, "")
	for _, j := range []struct{ id, policy string }{{"c1", protocol.OnParentFailureFail}, {"c2", protocol.OnParentFailureDrop}, {"c3", protocol.OnParentFailureRun}} {
		if s := enqueue(j.id, j.policy, []DepParent{{Name: "a"}}, "", "t", "u<b>"); s != "held" {
			t.Fatalf("%s: %s", j.id, s)
		}
	}
	if s := enqueue("g1", "", nil, "G", "t"); s != "queued" {
		t.Fatalf("g1: %s", s)
	}
	if got := tagged("t"); got != "c1,c2,c3,g1" {
		t.Fatalf("tag t holds %q after the enqueues", got)
	}
	depsRun(t, c, "p", "h:1:p", OutcomeFail)
	if got, got2 := tagged("t"), tagged("u<b>"); got != "c3,g1" || got2 != "c3" {
		t.Errorf("after the parent failed: t %q, u<b> %q; want the ended jobs out", got, got2)
	}
	// the released c3 (after g1 in the queue) runs, and leaves at its finish
	for range 2 {
		res, err := c.Claim(ctx, ClaimArgs{WorkerID: "h:2:q", Host: "h", Queues: []string{"q"}, Now: now})
		if err != nil || res.Payload == nil {
			t.Fatalf("claim: %+v %v", res, err)
		}
		p, err := protocol.DecodePayload(res.Payload)
		if err != nil {
			t.Fatal(err)
		}
		o := Outcome{Seq: res.Seq, Kind: OutcomeOK, Class: p.Class, Now: now, DepsID: p.ID, JobID: p.ID, Group: protocol.PayloadGroup(p), Tags: p.Tags()}
		if err := c.Finish(ctx, "h:2:q", "h", res.Source, o); err != nil {
			t.Fatal(err)
		}
	}
	if got, got2 := tagged("t"), tagged("u<b>"); got != "" || got2 != "" {
		t.Errorf("after the runs: t %q, u<b> %q; want empty", got, got2)
	}
	// a child of a parent that has already failed is failed at its enqueue
	// and never joins
	if s := enqueue("late", protocol.OnParentFailureFail, []DepParent{{Name: "a"}}, "", "t"); s != "failed" {
		t.Fatalf("late: %s", s)
	}
	if got := tagged("t"); got != "" {
		t.Errorf("a job failed at its enqueue is in tag t: %q", got)
	}
}
