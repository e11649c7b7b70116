package protocol_test

import (
	"testing"
	"time"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/protocol"
)

// The key names and values resque-scheduler 5.0.0 wrote while running a
// recurring schedule and set_schedule (fixtures resque-scheduler-5.0.0).
func TestScheduleKeysMatchResqueScheduler(t *testing.T) {
	t.Parallel()
	k := protocol.NewKeys("")
	running := fixtures.MustLoad("resque-scheduler-5.0.0", "scheduler-running")
	lock := running.Get(k.SchedulerMasterLock(""))
	if lock == nil || k.SchedulerMasterLock("") != "resque:resque:resque_scheduler_master_lock" {
		t.Fatalf("no master lock at %q", k.SchedulerMasterLock(""))
	}
	if lock.TTL < 170 || lock.TTL > int(protocol.SchedulerLockTimeout/time.Second) {
		t.Errorf("fixture TTL %d, default %v", lock.TTL, protocol.SchedulerLockTimeout)
	}
	if got := protocol.SchedulerLockValue("localhost", 29476); got != running.String(k.SchedulerMasterLock("")) {
		t.Errorf("lock value %q, fixture %q", got, running.String(k.SchedulerMasterLock("")))
	}
	last := running.Hash(k.LastEnqueuedAt())["every_2s"]
	at, err := protocol.ParseLastEnqueuedAt(last)
	if err != nil || protocol.FormatLastEnqueuedAt(at) != last {
		t.Errorf("last_enqueued_at %q: %v %v", last, at, err)
	}
	if running.Get(k.SchedulesChanged()) == nil {
		t.Errorf("no %s", k.SchedulesChanged())
	}
	set := fixtures.MustLoad("resque-scheduler-5.0.0", "set-schedule")
	if set.Hash(k.PersistentSchedules())["persisted_every_5m"] == "" {
		t.Errorf("no persistent schedule at %s", k.PersistentSchedules())
	}
	for _, c := range []struct{ ns, prefix, want string }{
		{"myapp", "", "myapp:myapp:resque_scheduler_master_lock"},
		{"resque:", "MyApp", "resque:resque:MyApp:resque_scheduler_master_lock"},
	} {
		if got := protocol.NewKeys(c.ns).SchedulerMasterLock(c.prefix); got != c.want {
			t.Errorf("%q %q: %q, want %q", c.ns, c.prefix, got, c.want)
		}
	}
	if got := k.ScheduleSlots(); got != "resque:resque-go:schedule_slots" {
		t.Errorf("slots key %q", got)
	}
}

func TestParseLastEnqueuedAt(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"2026-11-21 21:26:15 +0000", time.Date(2026, 11, 21, 21, 26, 15, 0, time.UTC)},
		{"2026-11-21 22:26:15 +0100", time.Date(2026, 11, 21, 21, 26, 15, 0, time.UTC)},
		{"2026-11-21 21:26:15 UTC", time.Date(2026, 11, 21, 21, 26, 15, 0, time.UTC)},
	} {
		if got, err := protocol.ParseLastEnqueuedAt(c.in); err != nil || !got.Equal(c.want) {
			t.Errorf("%q: %v %v", c.in, got, err)
		}
	}
	if _, err := protocol.ParseLastEnqueuedAt("yesterday"); err == nil {
		t.Error("garbage parsed")
	}
}

// resque-scheduler's enqueue_from_config: args.is_a?(Hash) ? [args] : Array(args).
func TestScheduleArgs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"", "[]"}, {"null", "[]"}, {" [1, \"two\" ] ", `[1,"two"]`}, {`{"b":1,"a":2}`, `[{"b":1,"a":2}]`},
		{`"s <&>"`, `["s <&>"]`}, {"12345678901234567890", "[12345678901234567890]"}, {"[]", "[]"}, {"false", "[false]"},
	} {
		got, err := protocol.ScheduleArgs([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("%q: %s %v, want %s", c.in, got, err, c.want)
		}
	}
	if _, err := protocol.ScheduleArgs([]byte("{")); err == nil {
		t.Error("bad JSON accepted")
	}
}
