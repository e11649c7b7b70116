package massio_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/uniqueio"
	"github.com/resque-go/resque-go/massqueue"
	"github.com/resque-go/resque-go/unique"
)

func uniqueJob(uid string, n int) massqueue.Job {
	return massqueue.Job{Class: "J", Args: []byte(fmt.Sprintf(`{"n":%d}`, n)), UniqueID: uid}
}

func (e *env) newBatch(source string, ttl time.Duration) *massio.Batch {
	e.t.Helper()
	b, err := massio.NewBatch(e.c, source, "import", ttl)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func (e *env) state(uid string) string { return e.str("GET", e.ns+":unique:"+uid+":state") }

// 100 producers push the same uid into 100 batches at once: exactly one
// is accepted, the others refused with ErrDuplicate and nothing written.
func TestBatchUniqueConcurrentPushes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	const n = 100
	batches := make([]*massio.Batch, n)
	for i := range batches {
		batches[i] = e.newBatch(fmt.Sprintf("s%d", i), 0)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = batches[i].Push(ctx, uniqueJob("same", i))
		}()
	}
	wg.Wait()
	accepted := 0
	for i, err := range errs {
		var de *massqueue.DuplicateError
		switch {
		case err == nil:
			accepted++
			if l := e.int("LLEN", e.ns+":uncommitted:"+batches[i].ID()); l != 1 {
				t.Errorf("accepted batch holds %d jobs", l)
			}
		case errors.Is(err, massqueue.ErrDuplicate) && errors.As(err, &de) && de.UID == "same" && de.Index == 0:
			if e.int("EXISTS", e.ns+":uncommitted:"+batches[i].ID()) != 0 {
				t.Errorf("refused batch %s was written", batches[i].ID())
			}
		default:
			t.Errorf("push %d: %v", i, err)
		}
	}
	if accepted != 1 {
		t.Fatalf("%d pushes accepted, want 1", accepted)
	}
	if e.state("same") != "queued" {
		t.Errorf("state %q", e.state("same"))
	}
	if ttl := e.int("TTL", e.ns+":unique:same:state"); ttl <= 0 {
		t.Errorf("an uncommitted batch's queued state has TTL %d, want one", ttl)
	}
}

// A uid queued as a queue job refuses the batch push; one queued in a
// batch refuses the queue job and the static job.
func TestBatchUniqueAgainstQueueJobs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	p, err := protocol.NewPayload("J", []byte(`[]`), protocol.EnqueueOptions{Unique: protocol.Unique{UID: "q1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uniqueio.Enqueue(ctx, e.c, unique.Job{Queue: "mail", Payload: p}); err != nil {
		t.Fatal(err)
	}
	b := e.newBatch("s1", 0)
	if err := b.Push(ctx, uniqueJob("q1", 1)); !errors.Is(err, massqueue.ErrDuplicate) {
		t.Fatalf("batch push of a uid queued in a queue: %v", err)
	}
	if e.int("TTL", e.ns+":unique:q1:state") != -1 {
		t.Error("the refused push touched the queue job's state")
	}

	if err := b.Push(ctx, uniqueJob("b1", 2)); err != nil {
		t.Fatal(err)
	}
	p2, err := protocol.NewPayload("J", []byte(`[]`), protocol.EnqueueOptions{Unique: protocol.Unique{UID: "b1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uniqueio.Enqueue(ctx, e.c, unique.Job{Queue: "mail", Payload: p2}); !errors.Is(err, unique.ErrDuplicate) {
		t.Fatalf("queue enqueue of a uid queued in a batch: %v", err)
	}
	if _, err := massio.EnqueueStatic(ctx, e.c, massqueue.Job{Class: "J", Source: "s1", Name: "n", UniqueID: "b1"}); !errors.Is(err, unique.ErrDuplicate) {
		t.Fatalf("static enqueue of a uid queued in a batch: %v", err)
	}
	if n := e.int("LLEN", e.ns+":queue:mail"); n != 1 {
		t.Errorf("queue holds %d jobs, want 1", n)
	}
}

// A push stops at its refused job: the jobs before it are in the batch,
// it and those after it are not; a uid repeated in one push, or pushed
// again to the same batch, is refused the same way.
func TestBatchUniquePushStopsAtRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	b := e.newBatch("s1", 0)
	if err := b.Push(ctx, uniqueJob("taken", 0)); err != nil {
		t.Fatal(err)
	}
	err := b.Push(ctx, uniqueJob("a", 1), massqueue.Job{Class: "J"}, uniqueJob("taken", 3), uniqueJob("c", 4))
	var de *massqueue.DuplicateError
	if !errors.As(err, &de) || de.UID != "taken" || de.Index != 2 || de.Batch != b.ID() {
		t.Fatalf("push: %v (%+v)", err, de)
	}
	if n := e.int("LLEN", e.ns+":uncommitted:"+b.ID()); n != 3 {
		t.Errorf("batch holds %d jobs, want 3", n)
	}
	if e.state("a") != "queued" || e.state("c") != "" {
		t.Errorf("states a=%q c=%q", e.state("a"), e.state("c"))
	}
	err = b.Push(ctx, uniqueJob("x", 5), uniqueJob("x", 6))
	if !errors.As(err, &de) || de.UID != "x" || de.Index != 1 {
		t.Fatalf("repeated uid: %v", err)
	}
	if n := e.int("LLEN", e.ns+":uncommitted:"+b.ID()); n != 4 {
		t.Errorf("batch holds %d jobs, want 4", n)
	}
	// a refusal at the first job of a push by id writes nothing, even the
	// reservation stays
	id, err := massio.CreateBatch(ctx, e.c, "s2", "import", 0)
	if err != nil {
		t.Fatal(err)
	}
	ob, err := massio.OpenBatch(e.c, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := ob.Push(ctx, uniqueJob("a", 7)); !errors.Is(err, massqueue.ErrDuplicate) {
		t.Fatalf("push by id: %v", err)
	}
	if e.int("EXISTS", e.ns+":uncommitted:"+id) != 0 || e.int("EXISTS", e.ns+":resque-go:batch_created:"+id) != 1 {
		t.Error("a refused first push by id wrote the list or dropped the reservation")
	}
	if err := ob.Push(ctx, uniqueJob("d", 8)); err != nil {
		t.Fatal(err)
	}
	// more than one chunk: the index counts from the push's first job
	jobs := make([]massqueue.Job, 0, 1300)
	for i := range 1200 {
		jobs = append(jobs, uniqueJob(fmt.Sprintf("m%d", i), i))
	}
	jobs = append(jobs, uniqueJob("m3", 0))
	if err := b.Push(ctx, jobs...); !errors.As(err, &de) || de.Index != 1200 || de.UID != "m3" {
		t.Fatalf("long push: %v", err)
	}
	if n := e.int("LLEN", e.ns+":uncommitted:"+b.ID()); n != 1204 {
		t.Errorf("batch holds %d jobs, want 1204", n)
	}
	if n := e.int("ZCARD", e.ns+":resque-go:batch_uids:"+b.ID()); n != 1203 {
		t.Errorf("batch records %d uids, want 1203", n)
	}
}

// Deferral is refused for a batch (as for a static job), before anything
// is written.
func TestBatchUniqueDeferrableRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	b := e.newBatch("s1", 0)
	j := uniqueJob("d", 1)
	j.Deferrable = true
	if err := b.Push(ctx, uniqueJob("ok", 0), j); !errors.Is(err, massqueue.ErrDeferrableInBatch) {
		t.Fatalf("push: %v", err)
	}
	p := []byte(`{"class":"J","sourceId":"s1","name":"import","unique":{"uid":"d","deferrableBy":5},"id":"x","queue_time":1.5}`)
	if err := b.PushPayloads(ctx, [][]byte{p}); !errors.Is(err, massqueue.ErrDeferrableInBatch) {
		t.Fatalf("push payloads: %v", err)
	}
	if e.state("ok") != "" || e.state("d") != "" || e.int("EXISTS", e.ns+":uncommitted:"+b.ID()) != 0 {
		t.Error("a refused push wrote something")
	}
}

// The uid follows the batch job: queued with a time to live while the
// batch is built, permanent once committed, running when claimed, free
// after the job succeeds.
func TestBatchUniqueLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	clk := newClock()
	a := e.allocator(mustConfig(t, testConfig), clk)
	e.beat("imports", "n1-0")
	b := e.newBatch("s1", 0)
	if err := b.Push(ctx, massqueue.Job{Class: "J"}, uniqueJob("life", 1)); err != nil {
		t.Fatal(err)
	}
	// a raw payload's uid is checked too
	p := []byte(`{"class":"J","sourceId":"s1","name":"import","unique":{"uid":"life"},"id":"x","queue_time":1.5}`)
	if err := b.PushPayloads(ctx, [][]byte{p}); !errors.Is(err, massqueue.ErrDuplicate) {
		t.Fatalf("raw payload with a queued uid: %v", err)
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if e.state("life") != "queued" || e.int("TTL", e.ns+":unique:life:state") != -1 {
		t.Errorf("after commit: state %q, TTL %d; want queued without expiry", e.state("life"), e.int("TTL", e.ns+":unique:life:state"))
	}
	if e.int("EXISTS", e.ns+":resque-go:batch_uids:"+b.ID()) != 0 {
		t.Error("the batch's uid index outlived the commit")
	}
	if err := e.newBatch("s2", 0).Push(ctx, uniqueJob("life", 2)); !errors.Is(err, massqueue.ErrDuplicate) {
		t.Fatalf("push while committed: %v", err)
	}
	e.pass(a)
	w := e.worker(1, protocol.UnitSource("imports", "n1-0"))
	for {
		res, ok := w.claim()
		if !ok {
			t.Fatal("the unique job was never claimed")
		}
		u, isUnique, err := protocol.ParseUnique(res.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if !isUnique {
			w.finish(res, rdb.OutcomeOK)
			continue
		}
		if e.state("life") != "running" {
			t.Errorf("claimed: state %q", e.state("life"))
		}
		if err := e.newBatch("s3", 0).Push(ctx, uniqueJob("life", 3)); !errors.Is(err, massqueue.ErrDuplicate) {
			t.Fatalf("push while running: %v", err)
		}
		o := rdb.Outcome{Seq: res.Seq, Kind: rdb.OutcomeOK, Class: "J", UniqueID: u.UID, Now: time.Now()}
		if err := e.c.Finish(ctx, w.id, "h", res.Source, o); err != nil {
			t.Fatal(err)
		}
		break
	}
	if e.state("life") != "" {
		t.Errorf("after success: state %q", e.state("life"))
	}
	if err := e.newBatch("s4", 0).Push(ctx, uniqueJob("life", 4)); err != nil {
		t.Fatalf("push after the job ran: %v", err)
	}
}

// An abandoned batch's uid is free again once the batch and the margin
// have passed (ttl 1s: the state lives 2s).
func TestBatchUniqueAbandoned(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	b := e.newBatch("s1", time.Second)
	if err := b.Push(ctx, uniqueJob("gone", 1)); err != nil {
		t.Fatal(err)
	}
	if ttl := e.int("TTL", e.ns+":unique:gone:state"); ttl <= 0 || ttl > 2 {
		t.Errorf("state TTL %d, want 1..2", ttl)
	}
	if got, want := massqueue.BatchUniqueStateTTL(time.Hour), 70*time.Minute; got != want {
		t.Errorf("state TTL for a 1h batch: %v, want %v", got, want)
	}
	redistest.Eventually(t, 0, func() bool {
		return e.int("EXISTS", e.ns+":unique:gone:state", e.ns+":uncommitted:"+b.ID(), e.ns+":resque-go:batch_uids:"+b.ID()) == 0
	}, "the abandoned batch's uid to be free")
	if err := e.newBatch("s2", 0).Push(ctx, uniqueJob("gone", 2)); err != nil {
		t.Fatalf("push after the batch expired: %v", err)
	}
}

// A state cleared by hand while the batch waits is taken again at commit
// (its job is still in the batch); a state some other job took since is
// left as it is.
func TestBatchUniqueCommitRetakes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	b := e.newBatch("s1", 0)
	if err := b.Push(ctx, uniqueJob("c1", 1), uniqueJob("c2", 2)); err != nil {
		t.Fatal(err)
	}
	e.do("DEL", e.ns+":unique:c1:state")
	e.do("SET", e.ns+":unique:c2:state", "running")
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if e.state("c1") != "queued" || e.int("TTL", e.ns+":unique:c1:state") != -1 || e.state("c2") != "running" {
		t.Errorf("after commit: c1 %q, c2 %q", e.state("c1"), e.state("c2"))
	}
}
