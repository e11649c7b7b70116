package scheduleio_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/scheduleio"
)

// A master publishes the schedules it fires from its file, so Inspect
// (`resque-go schedule list`) shows them with no file given, on any
// host; a scheduler that is not master publishes nothing; the master's
// clean stop withdraws them, and what a master that is no longer master
// published is not shown.
func TestMasterPublishesItsSchedules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	clk := &clock{t: time.Unix(1795296000, 0)}
	file := entries(t, "tick:\n  every: 1m\n  class: Tick\n  queue: ticks\n  args: [1]\n  description: every minute\n"+
		"Nightly:\n  cron: \"0 3 * * *\"\n  queue: ops\n")
	master := e.scheduler(scheduleio.Config{Entries: file, Hostname: "a", Pid: 1, Now: clk.Now})
	other := e.scheduler(scheduleio.Config{Entries: entries(t, "x:\n  every: 1m\n  class: X\n  queue: q\n"), Hostname: "b", Pid: 2, Now: clk.Now})
	if r := pass(t, master); !r.Master {
		t.Fatal("first scheduler is not master")
	}
	if r := pass(t, other); r.Master {
		t.Fatal("second scheduler is master too")
	}
	o, err := scheduleio.Inspect(ctx, e.c, nil, "", "", clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range o.Schedules {
		got = append(got, s.Name+" "+s.When()+" "+s.Queue+" "+s.Class+" "+s.Source+" "+s.Description)
	}
	want := "Nightly cron 0 3 * * * ops Nightly master |tick every 1m ticks Tick master every minute"
	if strings.Join(got, "|") != want || o.Master != "a:1" {
		t.Errorf("Inspect: master %q, schedules %q\nwant %q", o.Master, strings.Join(got, "|"), want)
	}

	// a master that lost its lock (it expired; another took over) is not
	// trusted any more
	e.do("SET", master.LockKey(), "c:3")
	if o, err := scheduleio.Inspect(ctx, e.c, nil, "", "", clk.Now()); err != nil || len(o.Schedules) != 0 {
		t.Errorf("Inspect with another master: %+v %v", o.Schedules, err)
	}
	e.do("SET", master.LockKey(), "a:1")

	master.Start(ctx)
	master.Stop()
	if n := e.do("EXISTS", e.ns+":resque-go:schedules", e.ns+":resque-go:schedules_master").(int64); n != 0 {
		t.Errorf("%d published keys outlived the master's stop", n)
	}
	if o, err := scheduleio.Inspect(ctx, e.c, nil, "", "", clk.Now()); err != nil || len(o.Schedules) != 0 {
		t.Errorf("Inspect after the master stopped: %+v %v", o.Schedules, err)
	}
}
