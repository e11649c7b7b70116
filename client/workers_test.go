package client_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/fixtures"
)

// Workers shows Ruby, php-resque and node-resque workers as they registered
// (each runtime writes its times its own way) and resque-go slots.
func TestClientWorkersOfEveryRuntime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	for _, src := range []string{"ruby-resque-3.0.0", "php-resque-resque-master", "php-resque-chrisboulton", "node-resque-9.7.1"} {
		e.load(fixtures.MustLoad(src, "worker-running"))
	}
	// an idle resque-go slot, registered as a resque-go worker registers
	started := time.Date(2026, 11, 21, 21, 0, 0, 0, time.UTC)
	if _, err := e.raw.Register(ctx(), "app-1:42-2:critical,default", started, 5*time.Second, true); err != nil {
		t.Fatal(err)
	}
	// a one-slot resque-go process: no slot in its id, a Ruby-form start
	if _, err := e.raw.Register(ctx(), "app-2:43:mail", started, 5*time.Second, true); err != nil {
		t.Fatal(err)
	}
	ws, err := e.c.Workers(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 6 {
		t.Fatalf("%d workers: %+v", len(ws), ws)
	}
	oneSlot := ws[1]
	if oneSlot.ID != "app-2:43:mail" || oneSlot.Runtime != "resque-go" {
		t.Errorf("one-slot resque-go worker %+v, want runtime resque-go", oneSlot)
	}
	if ws[0].Runtime != "resque-go" {
		t.Errorf("resque-go slot's runtime %q", ws[0].Runtime)
	}
	ws = append(ws[:1], ws[2:]...)
	at := func(s string) time.Time {
		tm, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	goSlot := ws[0]
	if goSlot.ID != "app-1:42-2:critical,default" || goSlot.Host != "app-1" || goSlot.PID != 42 || goSlot.Slot != 2 ||
		fmt.Sprint(goSlot.Queues) != "[critical default]" || goSlot.Job != nil || !goSlot.Started.Equal(started) ||
		goSlot.Heartbeat.IsZero() || !goSlot.RunAt.IsZero() {
		t.Errorf("resque-go slot %+v", goSlot)
	}
	// sorted by pid: node 2351, ruby 25407, chrisboulton 30031, php master 31477
	want := []struct {
		pid            int
		class          string
		started, runAt time.Time
		heartbeat      time.Time
	}{
		{2351, "SleepJob", at("2026-11-21 21:29:31"), at("2026-11-21 21:29:30"), time.Time{}},
		{25407, "SleepJob", at("2026-11-21 21:23:41"), at("2026-11-21 21:23:41"), at("2026-11-21 21:23:41")},
		{30031, "Sleep_Job", at("2026-11-21 21:26:50"), at("2026-11-21 21:26:50"), time.Time{}},
		{31477, "Sleep_Job", at("2026-11-21 21:27:27"), at("2026-11-21 21:27:27"), time.Time{}},
	}
	for i, w := range ws[1:] {
		x := want[i]
		if w.Host != "vm" || w.PID != x.pid || w.Slot != 0 || fmt.Sprint(w.Queues) != "[high mail]" {
			t.Errorf("worker %d: id parts %+v", i, w)
			continue
		}
		if w.Job == nil || w.Job.Class != x.class || w.Job.Queue != "mail" || w.Job.Invalid != "" {
			t.Errorf("worker %s: job %+v", w.ID, w.Job)
		}
		if !w.Started.Equal(x.started) || !w.RunAt.Equal(x.runAt) || !w.Heartbeat.Equal(x.heartbeat) {
			t.Errorf("worker %s: started %v, run at %v, heartbeat %v; want %v, %v, %v",
				w.ID, w.Started, w.RunAt, w.Heartbeat, x.started, x.runAt, x.heartbeat)
		}
	}
}

// A worker record that does not decode still shows the worker as busy.
func TestClientWorkersWithUnreadableRecord(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	e.do("SADD", e.key("workers"), "h:1:q", "odd-id")
	e.do("SET", e.key("worker:h:1:q"), "garbage")
	ws, err := e.c.Workers(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || ws[0].ID != "odd-id" || ws[0].Host != "" || ws[0].Job != nil {
		t.Fatalf("workers %+v", ws)
	}
	if j := ws[1].Job; j == nil || j.Invalid == "" || string(j.Payload) != "garbage" {
		t.Errorf("busy worker with an unreadable record: job %+v", j)
	}
}

// Stats reads the global counters, the failed list's length, pending jobs
// and how many workers are busy.
func TestClientStats(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	e.load(fixtures.MustLoad("ruby-resque-3.0.0", "worker-running")) // one busy worker, queue mail (empty)
	if _, err := e.raw.Register(ctx(), "app-1:42-1:default", time.Now(), time.Second, true); err != nil {
		t.Fatal(err)
	}
	e.do("SET", e.key("stat:processed"), 10)
	e.do("SET", e.key("stat:failed"), 3)
	e.do("SET", e.key("stat:retries"), 2)
	e.do("RPUSH", e.key("failed"), "{}", "{}")
	for _, q := range []string{"a", "a", "b"} {
		if _, err := e.c.Enqueue(ctx(), q, "C"); err != nil {
			t.Fatal(err)
		}
	}
	s, err := e.c.Stats(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if s.Time.IsZero() {
		t.Error("no server time")
	}
	s.Time = time.Time{}
	want := client.Stats{Processed: 10, Failed: 3, Retries: 2, FailedEntries: 2, Pending: 3, Queues: 3, Workers: 2, Working: 1}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("Stats = %+v\nwant    %+v", s, want)
	}
	empty := newEnv(t, client.Options{})
	if s, err := empty.c.Stats(ctx()); err != nil || s.Processed != 0 || s.Queues != 0 || s.Workers != 0 {
		t.Errorf("empty namespace: %+v, %v", s, err)
	}
}
