package client_test

import (
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/fixtures"
)

func TestServerInfo(t *testing.T) {
	e := newEnv(t, client.Options{})
	s, err := e.c.ServerInfo(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if s.Version == "" || s.Role == "" || s.UsedMemory <= 0 || s.ConnectedClients < 1 {
		t.Fatalf("ServerInfo = %+v", s)
	}
}

func TestQueuesDetailOldest(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	e := newEnv(t, client.Options{Now: fixedClock(at)})
	for _, q := range []string{"outbox", "outbox"} {
		if _, err := e.c.Enqueue(ctx(), q, "Mailer", 1); err != nil {
			t.Fatal(err)
		}
	}
	// Ruby's payload has no queue_time; a queue in the set with no list
	// is empty.
	e.load(fixtures.MustLoad("ruby-resque-3.0.0", "enqueue"))
	e.do("SADD", e.key("queues"), "empty")
	qs, err := e.c.QueuesDetail(ctx())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]client.QueueDetail{}
	for _, q := range qs {
		got[q.Name] = q
	}
	if m := got["outbox"]; m.Size != 2 || !m.Oldest.Equal(at) {
		t.Errorf("outbox = %+v, want size 2, oldest %v", m, at)
	}
	if m, ok := got["empty"]; !ok || m.Size != 0 || !m.Oldest.IsZero() {
		t.Errorf("empty = %+v", m)
	}
	for name, q := range got {
		if name != "outbox" && !q.Oldest.IsZero() {
			t.Errorf("%s: oldest %v from a payload without queue_time", name, q.Oldest)
		}
	}
}

func TestAuditCapped(t *testing.T) {
	e := newEnv(t, client.Options{})
	for i := range 5 {
		if err := e.c.RecordAudit(ctx(), client.AuditEntry{Who: "ann", Action: "failed.retry", Count: int64(i)}, 3); err != nil {
			t.Fatal(err)
		}
	}
	e.do("RPUSH", e.key("resque-go:web:audit"), "not json")
	got, err := e.c.Audit(ctx(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0].Count != 4 || got[2].Count != 2 || got[0].Who != "ann" || got[0].Time.IsZero() {
		t.Fatalf("Audit = %+v, want the newest 3 first, then the odd one", got)
	}
	if got[3].Action != "unreadable" || got[3].Detail != "not json" {
		t.Errorf("odd entry = %+v", got[3])
	}
	if err := e.c.RecordAudit(ctx(), client.AuditEntry{}, 0); err == nil {
		t.Error("RecordAudit without an action: no error")
	}
}

func TestFailedWhereBulk(t *testing.T) {
	e := newEnv(t, client.Options{})
	e.load(fixtures.MustLoad("ruby-resque-3.0.0", "failure"))
	e.load(fixtures.MustLoad("php-resque-resque-master", "failure"))
	all, err := e.c.Failed(ctx(), 0, 0)
	if err != nil || len(all) < 2 {
		t.Fatalf("Failed = %d entries, %v", len(all), err)
	}
	f := client.FailedFilter{Class: all[0].Job.Class}
	want := 0
	for _, x := range all {
		if x.Job.Class == f.Class {
			want++
		}
	}
	n, err := e.c.CountFailedWhere(ctx(), f)
	if err != nil || n != int64(want) {
		t.Fatalf("CountFailedWhere = %d, %v; want %d", n, err, want)
	}
	r, err := e.c.RetryFailedWhere(ctx(), f)
	if err != nil || r.Done != want {
		t.Fatalf("RetryFailedWhere = %+v, %v; want %d done", r, err, want)
	}
	if sz, _ := e.c.QueueSize(ctx(), all[0].Job.Queue); sz < int64(want) {
		t.Errorf("queue %s holds %d jobs after retrying %d", all[0].Job.Queue, sz, want)
	}
	r, err = e.c.RemoveFailedWhere(ctx(), f)
	if err != nil || r.Done != want {
		t.Fatalf("RemoveFailedWhere = %+v, %v", r, err)
	}
	if left, _ := e.c.FailedCount(ctx()); left != int64(len(all)-want) {
		t.Errorf("%d entries left, want %d", left, len(all)-want)
	}
}
