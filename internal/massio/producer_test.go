package massio_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/massqueue"
	"github.com/resque-go/resque-go/unique"
)

var payloadRE = regexp.MustCompile(`^\{"class":"Imp","sourceId":"s1","name":"imp","args":\{"n":(\d+)\},"id":"[0-9a-f]{32}","queue_time":\d+\.\d{4}\}$`)

func TestEnqueueStatic(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id, err := massio.EnqueueStatic(ctx, e.c, massqueue.Job{Class: "Imp", Source: "s1", Name: "imp", Args: []byte(`{"n":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := massio.EnqueueStatic(ctx, e.c, massqueue.Job{Class: "Imp", Source: "s1", Name: "imp", Args: []byte(`{"n":2}`)}); err != nil {
		t.Fatal(err)
	}
	got := e.strs("LRANGE", e.ns+":unassigned", 0, -1)
	if len(got) != 2 || !payloadRE.MatchString(got[0]) || !payloadRE.MatchString(got[1]) {
		t.Fatalf("unassigned: %q", got)
	}
	// LPUSH, as resqu-client: the oldest is at the tail
	if payloadRE.FindStringSubmatch(got[1])[1] != "1" {
		t.Errorf("order: %q", got)
	}
	var p struct{ ID string }
	_ = json.Unmarshal([]byte(got[1]), &p)
	if p.ID != id {
		t.Errorf("id %q, payload has %q", id, p.ID)
	}
	for _, bad := range []massqueue.Job{{Class: "C", Source: "a:b", Name: "n"}, {Class: "C", Name: "n"}, {Source: "s", Name: "n"}} {
		if _, err := massio.EnqueueStatic(ctx, e.c, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// A batch is built and committed with the commands resqu-client sends: the
// first push creates uncommitted:<id>, later ones LPUSHX, every push sets
// the TTL; commit renames, persists and queues the id.
func TestBatchBuildAndCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	b, err := massio.NewBatch(e.c, "s1", "imp", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^s1:imp:[0-9a-f]{8}$`).MatchString(b.ID()) {
		t.Fatalf("batch id %q", b.ID())
	}
	if err := b.Commit(ctx); !errors.Is(err, massqueue.ErrBatchEmpty) {
		t.Fatalf("empty commit: %v", err)
	}
	for i := 1; i <= 3; i++ {
		if err := b.Push(ctx, massqueue.Job{Class: "Imp", Args: []byte(`{"n":` + string(rune('0'+i)) + `}`)}); err != nil {
			t.Fatal(err)
		}
	}
	unc := e.ns + ":uncommitted:" + b.ID()
	if ttl := e.int("TTL", unc); ttl < 3590 || ttl > 3600 {
		t.Errorf("uncommitted ttl %d", ttl)
	}
	items := e.strs("LRANGE", unc, 0, -1)
	if len(items) != 3 || payloadRE.FindStringSubmatch(items[2])[1] != "1" || payloadRE.FindStringSubmatch(items[0])[1] != "3" {
		t.Fatalf("uncommitted: %q", items)
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if e.int("EXISTS", unc) != 0 || e.int("TTL", e.ns+":committed:"+b.ID()) != -1 {
		t.Error("commit did not rename and persist")
	}
	if got := e.strs("LRANGE", e.ns+":committed", 0, -1); len(got) != 1 || got[0] != b.ID() {
		t.Errorf("committed list %q", got)
	}
	if err := b.Push(ctx, massqueue.Job{Class: "Imp"}); !errors.Is(err, massqueue.ErrBatchCommitted) {
		t.Errorf("push after commit: %v", err)
	}
	if err := massio.CommitBatch(ctx, e.c, b.ID()); !errors.Is(err, massqueue.ErrBatchCommitted) {
		t.Errorf("second commit: %v", err)
	}
}

func TestBatchExpired(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	b, _ := massio.NewBatch(e.c, "s1", "imp", 0)
	if err := b.Push(ctx, massqueue.Job{Class: "Imp"}); err != nil {
		t.Fatal(err)
	}
	e.do("DEL", e.ns+":uncommitted:"+b.ID()) // the TTL passed
	if err := b.Push(ctx, massqueue.Job{Class: "Imp"}); !errors.Is(err, massqueue.ErrBatchExpired) {
		t.Errorf("push: %v", err)
	}
	if err := b.Commit(ctx); !errors.Is(err, massqueue.ErrBatchExpired) {
		t.Errorf("commit: %v", err)
	}
}

// The first push of a new batch whose id is taken draws another id, as
// resqu-client does; OpenBatch (the CLI's push) joins a list that exists.
func TestBatchIDTakenAndOpen(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	b, _ := massio.NewBatch(e.c, "s1", "imp", 0)
	first := b.ID()
	e.do("LPUSH", e.ns+":uncommitted:"+first, "someone else's")
	if err := b.Push(ctx, massqueue.Job{Class: "Imp"}); err != nil {
		t.Fatal(err)
	}
	if b.ID() == first {
		t.Fatal("kept a taken id")
	}
	o, err := massio.OpenBatch(e.c, b.ID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Push(ctx, massqueue.Job{Class: "Imp"}, massqueue.Job{Class: "Imp"}); err != nil {
		t.Fatal(err)
	}
	if n := e.int("LLEN", e.ns+":uncommitted:"+b.ID()); n != 3 {
		t.Errorf("len %d", n)
	}
	// an id nobody created or pushed to is not started by a push
	fresh, _ := massio.OpenBatch(e.c, "s2:imp:00000001", 0)
	if err := fresh.Push(ctx, massqueue.Job{Class: "Imp"}); !errors.Is(err, massqueue.ErrBatchExpired) {
		t.Fatalf("push to an id never created: %v, want ErrBatchExpired", err)
	}
	if _, err := massio.OpenBatch(e.c, "nocolons", 0); err == nil {
		t.Error("bad id accepted")
	}
}

// An id reserved by CreateBatch (`mass batch create`) takes pushes by id;
// once its reservation or its list is gone (expired, committed), a push
// by id is refused instead of starting a batch without its earlier jobs.
func TestCreateBatchThenPushByID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	id, err := massio.CreateBatch(ctx, e.c, "s1", "imp", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	mark := e.c.Keys().BatchCreated(id)
	if ttl := e.int("TTL", mark); ttl <= 0 || ttl > 60 {
		t.Fatalf("reservation ttl %d", ttl)
	}
	push := func(id string, n int) error {
		b, err := massio.OpenBatch(e.c, id, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		jobs := make([]massqueue.Job, n)
		for i := range jobs {
			jobs[i] = massqueue.Job{Class: "Imp", Args: []byte(fmt.Sprintf("[%d]", i))}
		}
		return b.Push(ctx, jobs...)
	}
	if err := push(id, 3); err != nil {
		t.Fatal(err)
	}
	if err := push(id, 2); err != nil {
		t.Fatal(err)
	}
	if n := e.int("LLEN", e.ns+":uncommitted:"+id); n != 5 {
		t.Errorf("len %d, want 5", n)
	}
	if n := e.int("EXISTS", mark); n != 0 {
		t.Error("the reservation outlived the first push")
	}
	// the list expires (as after an hour without a push): a push is refused
	e.do("DEL", e.ns+":uncommitted:"+id)
	if err := push(id, 1); !errors.Is(err, massqueue.ErrBatchExpired) {
		t.Fatalf("push after expiry: %v, want ErrBatchExpired", err)
	}
	if n := e.int("EXISTS", e.ns+":uncommitted:"+id); n != 0 {
		t.Error("a push after expiry started the batch again")
	}
	// a reservation that expired before any push
	id2, err := massio.CreateBatch(ctx, e.c, "s1", "imp", time.Minute)
	if err != nil || id2 == id {
		t.Fatalf("second id %q %v", id2, err)
	}
	e.do("DEL", e.c.Keys().BatchCreated(id2))
	if err := push(id2, 1); !errors.Is(err, massqueue.ErrBatchExpired) {
		t.Fatalf("push after the reservation expired: %v, want ErrBatchExpired", err)
	}
	// committed: a push by id is refused too
	id3, _ := massio.CreateBatch(ctx, e.c, "s1", "imp", time.Minute)
	if err := push(id3, 1); err != nil {
		t.Fatal(err)
	}
	if err := massio.CommitBatch(ctx, e.c, id3); err != nil {
		t.Fatal(err)
	}
	if err := push(id3, 1); !errors.Is(err, massqueue.ErrBatchExpired) {
		t.Fatalf("push after commit: %v, want ErrBatchExpired", err)
	}
	if _, err := massio.CreateBatch(ctx, e.c, "bad source", "imp", 0); err == nil {
		t.Error("bad source accepted")
	}
}

// A unique static job is refused while its uid is queued (docs/protocol.md#unique-jobs),
// and pushed to unassigned like any static job when the uid is free.
func TestUniqueStaticJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	j := massqueue.Job{Class: "Mail", Source: "s1", Name: "mail", UniqueID: "u1"}
	if _, err := massio.EnqueueStatic(ctx, e.c, j); err != nil {
		t.Fatal(err)
	}
	if _, err := massio.EnqueueStatic(ctx, e.c, j); !errors.Is(err, unique.ErrDuplicate) {
		t.Fatalf("second enqueue = %v, want unique.ErrDuplicate", err)
	}
	if n := e.int("LLEN", e.ns+":unassigned"); n != 1 {
		t.Errorf("unassigned holds %d jobs, want 1", n)
	}
	if s := e.str("GET", e.ns+":unique:u1:state"); s != "queued" {
		t.Errorf("state = %q, want queued", s)
	}
	// deferrable with its uid free: queued like any (TestStaticDeferral
	// has the deferral)
	if _, err := massio.EnqueueStatic(ctx, e.c, massqueue.Job{Class: "Mail", Source: "s1", Name: "mail", UniqueID: "u2", Deferrable: true}); err != nil {
		t.Errorf("a deferrable unique static job with its uid free: %v", err)
	}
	if n := e.int("LLEN", e.ns+":unassigned"); n != 2 {
		t.Errorf("unassigned holds %d jobs, want 2", n)
	}
}
