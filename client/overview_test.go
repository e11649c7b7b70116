package client_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/fixtures"
)

// Overview reads what Stats, QueuesDetail and Workers read, each key once;
// a queue key of another type is named and read as empty, and the rest is
// read.
func TestOverviewIsStatsQueuesAndWorkers(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	e := newEnv(t, client.Options{Now: fixedClock(at)})
	for _, q := range []string{"outbox", "outbox", "<b>odd</b> ü"} {
		if _, err := e.c.Enqueue(ctx(), q, "Mailer", 1); err != nil {
			t.Fatal(err)
		}
	}
	e.load(fixtures.MustLoad("ruby-resque-3.0.0", "enqueue"))
	e.load(fixtures.MustLoad("ruby-resque-3.0.0", "worker-running"))
	e.load(fixtures.MustLoad("php-resque-resque-master", "worker-running"))
	e.do("SADD", e.key("queues"), "empty", "hashed")
	e.do("HSET", e.key("queue:hashed"), "a", "b")
	e.do("RPUSH", e.key("queue:garbage"), "not json \xff")
	e.do("SADD", e.key("queues"), "garbage")

	o, err := e.c.Overview(ctx())
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.c.Stats(ctx())
	if err != nil {
		t.Fatal(err)
	}
	qs, err := e.c.QueuesDetail(ctx())
	if err != nil {
		t.Fatal(err)
	}
	ws, err := e.c.Workers(ctx())
	if err != nil {
		t.Fatal(err)
	}
	o.Stats.Time, st.Time = time.Time{}, time.Time{}
	if !reflect.DeepEqual(o.Stats, st) {
		t.Errorf("Overview's stats %+v, Stats %+v", o.Stats, st)
	}
	if !reflect.DeepEqual(o.Queues, qs) {
		t.Errorf("Overview's queues %+v, QueuesDetail %+v", o.Queues, qs)
	}
	if len(o.Workers) != len(ws) || len(ws) < 2 {
		t.Fatalf("Overview's workers %d, Workers %d", len(o.Workers), len(ws))
	}
	for i := range ws {
		if o.Workers[i].ID != ws[i].ID || (o.Workers[i].Job == nil) != (ws[i].Job == nil) || o.Workers[i].Runtime != ws[i].Runtime {
			t.Errorf("worker %d: Overview %+v, Workers %+v", i, o.Workers[i], ws[i])
		}
	}
	var hashed client.QueueDetail
	for _, q := range o.Queues {
		if q.Name == "hashed" {
			hashed = q
		}
	}
	if hashed.Problem == "" || len(o.Stats.Problems) == 0 || o.Stats.Pending < 3 || o.Stats.Working < 1 {
		t.Errorf("hashed %+v, stats %+v", hashed, o.Stats)
	}
}
