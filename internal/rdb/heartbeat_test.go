package rdb_test

import (
	"context"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// One heartbeat step for all slots of a process; slots another runtime
// unregistered are registered again with the given start time.
func TestHeartbeatAllSlots(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := context.Background()
	k := c.Keys()
	ids := []string{"h:1-1:q", "h:1-2:q", "h:1-3:q"}
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, id := range ids {
		if _, err := c.Register(ctx, id, started, 5*time.Second, true); err != nil {
			t.Fatal(err)
		}
	}
	// a Ruby startup prune removes slot 2
	for _, cmd := range [][]any{{"SREM", k.Workers(), ids[1]}, {"DEL", k.WorkerStarted(ids[1])}, {"HDEL", k.Heartbeats(), ids[1]}} {
		if _, err := c.Do(ctx, cmd[0].(string), cmd[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	hb, again, counters, err := c.Heartbeat(ctx, ids, started.Add(time.Hour), 5*time.Second)
	if err != nil || hb == "" || again != 1 || counters != 0 {
		t.Fatalf("heartbeat %q, %d again, %v", hb, again, err)
	}
	for _, id := range ids {
		if v, _ := c.Do(ctx, "SISMEMBER", k.Workers(), id); v.(int64) != 1 {
			t.Errorf("%s not in workers", id)
		}
		if v, _ := c.Do(ctx, "HGET", k.Heartbeats(), id); v == nil || string(v.([]byte)) != hb {
			t.Errorf("%s heartbeat %v, want %s", id, v, hb)
		}
	}
	if v, _ := c.Do(ctx, "GET", k.WorkerStarted(ids[0])); string(v.([]byte)) != "2026-01-02 03:04:05 +0000" {
		t.Errorf("slot 1 :started changed to %s", v)
	}
	if v, _ := c.Do(ctx, "GET", k.WorkerStarted(ids[1])); string(v.([]byte)) != "2026-01-02 04:04:05 +0000" {
		t.Errorf("slot 2 :started = %s, want the time given", v)
	}
}

// Registration keeps the claim-sequence hash a hash table whatever the
// number of workers (its field ~ has a value too long for the compact
// encoding, whose HINCRBY scans every field), and claims and finishes go on
// reading and moving each worker's own sequence.
func TestClaimSeqsStayAHashTable(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := context.Background()
	k := c.Keys()
	if _, err := c.Register(ctx, "h:1:q", time.Now(), 5*time.Second, true); err != nil {
		t.Fatal(err)
	}
	if err := c.Enqueue(ctx, "q", []byte(`{"class":"A","args":[]}`)); err != nil {
		t.Fatal(err)
	}
	a := rdb.ClaimArgs{WorkerID: "h:1:q", Host: "h", Sources: []protocol.Source{protocol.QueueSource("q")}, Now: time.Now()}
	res, err := c.Claim(ctx, a)
	if err != nil || res.Payload == nil {
		t.Fatalf("claim: %+v %v", res, err)
	}
	enc, err := c.Do(ctx, "OBJECT", "ENCODING", k.ClaimSeqs())
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := enc.([]byte); string(s) != "hashtable" {
		t.Errorf("encoding of %s: %s, want hashtable", k.ClaimSeqs(), s)
	}
	if err := c.Finish(ctx, "h:1:q", "h", res.Source, rdb.Outcome{Seq: res.Seq, Kind: rdb.OutcomeOK, Class: "A", Now: time.Now()}); err != nil {
		t.Fatalf("finish: %v", err)
	}
}
