package rdb_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// Claim, finish (an immediate retry), requeue and dead-worker recovery over
// a source that is not a Resque queue: every way back leads to the list the
// job came from, and the worker record says which list that is.
func TestClaimFinishRecoverOverListSource(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := context.Background()
	k := c.Keys()
	src := protocol.Source{Queue: "general", List: "mass:static:general:s1"}
	list := k.SourceKey(src)
	if list != k.Namespace()+":mass:static:general:s1" {
		t.Fatalf("source key %q", list)
	}
	push := func(p string) {
		t.Helper()
		if _, err := c.Do(ctx, "RPUSH", list, p); err != nil {
			t.Fatal(err)
		}
	}
	items := func() []string {
		t.Helper()
		vs, err := c.List(ctx, list, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(vs))
		for i, v := range vs {
			out[i] = string(v)
		}
		return out
	}
	push(`{"class":"A","args":[1]}`)
	push(`{"class":"B","args":[2]}`)
	const id = "h:1:general"
	args := rdb.ClaimArgs{WorkerID: id, Host: "h", Sources: []protocol.Source{protocol.QueueSource("empty"), src}, Now: time.Now()}

	// claim: from the list, recorded with its source
	a, err := c.Claim(ctx, args)
	if err != nil || a.Source != src || a.Queue != "general" || string(a.Payload) != `{"class":"A","args":[1]}` {
		t.Fatalf("claim: %+v %v", a, err)
	}
	rec, err := c.WorkerRecord(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(rec), `"payload":{"class":"A","args":[1]},"source":"mass:static:general:s1"}`) {
		t.Errorf("record %s", rec)
	}
	parsed, err := protocol.ParseWorkerRecord(rec)
	if err != nil || parsed.SourceOf() != src {
		t.Errorf("record source %+v %v", parsed.SourceOf(), err)
	}

	// finish with an immediate retry: back to the end of the list, not to queue:general
	err = c.Finish(ctx, id, "h", a.Source, rdb.Outcome{Seq: a.Seq, Kind: rdb.OutcomeRetry, Push: a.Payload, Entry: []byte(`{}`), Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if got := items(); len(got) != 2 || got[1] != `{"class":"A","args":[1]}` {
		t.Errorf("after retry the list is %v", got)
	}
	if n, _ := c.Do(ctx, "EXISTS", k.Queue("general")); n.(int64) != 0 {
		t.Error("the retry went to queue:general")
	}

	// requeue (hard stop): back to the head of the list
	b, err := c.Claim(ctx, args)
	if err != nil || string(b.Payload) != `{"class":"B","args":[2]}` {
		t.Fatalf("claim B: %+v %v", b, err)
	}
	if err := c.Requeue(ctx, id, b.Source, b.Payload, "", rdb.JobEnd{}); err != nil {
		t.Fatal(err)
	}
	if got := items(); len(got) != 2 || got[0] != `{"class":"B","args":[2]}` {
		t.Errorf("after requeue the list is %v", got)
	}

	// recovery of a dead worker's job: pushed back to the list its record names
	d, err := c.Claim(ctx, rdb.ClaimArgs{WorkerID: "dead:9:general", Host: "dead", Sources: []protocol.Source{src}, Now: time.Now()})
	if err != nil || d.Payload == nil {
		t.Fatalf("claim by the dead worker: %+v %v", d, err)
	}
	held, err := c.WorkerRecord(ctx, "dead:9:general")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := protocol.ParseWorkerRecord(held)
	res, err := c.Prune(ctx, rdb.PruneArgs{WorkerID: "dead:9:general", Record: held, Queue: r.Queue, Source: r.SourceOf(),
		Payload: r.Payload, MaxRecoveries: 3, Host: "h"})
	if err != nil || res != rdb.PruneRequeued {
		t.Fatalf("prune: %v %v", res, err)
	}
	if got := items(); len(got) != 2 || got[0] != string(d.Payload) {
		t.Errorf("after recovery the list is %v", got)
	}
}
