package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SchedulerMasterLock is resque-scheduler's master lock: the one scheduler
// holding it fires recurring schedules. resque-scheduler 5.0.0
// (lib/resque/scheduler/locking.rb, master_lock_key) builds the name as
// "#{Resque.redis.namespace}:#{prefix}resque_scheduler_master_lock" and then
// hands it to the namespaced client, which prefixes it again: the physical
// key is "resque:resque:resque_scheduler_master_lock" (captured in the
// resque-scheduler-5.0.0 fixtures). prefix is
// RESQUE_SCHEDULER_MASTER_LOCK_PREFIX, followed by ":" when not empty.
func (k Keys) SchedulerMasterLock(prefix string) string {
	if prefix != "" {
		prefix += ":"
	}
	return k.key(k.Namespace(), prefix+"resque_scheduler_master_lock")
}

// SchedulerLockValue is the master lock's value, "<hostname>:<pid>" as
// resque-scheduler's Lock::Base#value writes it.
func SchedulerLockValue(hostname string, pid int) string {
	return hostname + ":" + strconv.Itoa(pid)
}

// SchedulerLockTimeout is resque-scheduler's default LOCK_TIMEOUT: the
// master lock's TTL, renewed on every pass of the master.
const SchedulerLockTimeout = 180 * time.Second

// PersistentSchedules is the hash of dynamic schedules that
// Resque.set_schedule(name, config with persist) writes: name to the JSON of
// the config (without "persist").
func (k Keys) PersistentSchedules() string { return k.key("persistent_schedules") }

// SchedulesChanged is the set of schedule names set_schedule and
// remove_schedule add; a dynamic master scheduler pops them and reloads
// those schedules.
func (k Keys) SchedulesChanged() string { return k.key("schedules_changed") }

// LastEnqueuedAt is resque-scheduler's hash of schedule name to the time it
// last enqueued that schedule's job (Time#to_s); resque-web's Schedule tab
// shows it.
func (k Keys) LastEnqueuedAt() string { return k.key("delayed", "last_enqueued_at") }

// ScheduleSlots is resque-go's hash of schedule name to the last slot
// (Unix seconds) a job was enqueued for: the fire script sets it in the same
// step as the push, so a slot is enqueued at most once across schedulers.
func (k Keys) ScheduleSlots() string { return k.key("resque-go", "schedule_slots") }

// LastEnqueuedAtLayout is Ruby's Time#to_s, the form resque-scheduler writes
// into LastEnqueuedAt ("2026-11-21 21:26:15 +0000").
const LastEnqueuedAtLayout = "2006-01-02 15:04:05 -0700"

// FormatLastEnqueuedAt writes t as Ruby's Time#to_s in t's location.
func FormatLastEnqueuedAt(t time.Time) string { return t.Format(LastEnqueuedAtLayout) }

// ParseLastEnqueuedAt reads a LastEnqueuedAt value: Time#to_s, or the
// "UTC" form Time#to_s gives for a UTC time ("2026-11-21 21:26:15 UTC").
func ParseLastEnqueuedAt(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(LastEnqueuedAtLayout, s); err == nil {
		return t, nil
	}
	if rest, ok := strings.CutSuffix(s, " UTC"); ok {
		if t, err := time.ParseInLocation("2006-01-02 15:04:05", rest, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("protocol: last_enqueued_at %q is not a Ruby Time#to_s", s)
}

// ScheduleArgs turns a schedule's args (JSON text; empty when absent) into
// the args array of its job the way resque-scheduler's enqueue_from_config
// does: params = args.is_a?(Hash) ? [args] : Array(args). So null (or no
// args) is [], an object or a scalar is wrapped in an array, and an array
// is kept as written (compacted, key order and numbers as given).
func ScheduleArgs(args []byte) ([]byte, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		return []byte("[]"), nil
	}
	if !json.Valid(args) {
		return nil, fmt.Errorf("protocol: args are not valid JSON: %s", excerpt(args))
	}
	var b bytes.Buffer
	if err := json.Compact(&b, args); err != nil {
		return nil, fmt.Errorf("protocol: args: %w", err)
	}
	if args[0] == '[' {
		return b.Bytes(), nil
	}
	return []byte("[" + b.String() + "]"), nil
}

// PublishedSchedules is resque-go's hash of the recurring schedules the
// master scheduler fires: schedule name to its config as JSON (the form of
// a persistent_schedules value). The master writes it when it becomes
// master and when its schedules change, and removes it at a clean stop,
// so `resque-go schedule list` shows a master's file schedules from any
// host.
func (k Keys) PublishedSchedules() string { return k.key("resque-go", "schedules") }

// SchedulesPublisher holds the master lock value of the scheduler that
// wrote PublishedSchedules: readers trust the hash only while that
// scheduler holds the lock.
func (k Keys) SchedulesPublisher() string { return k.key("resque-go", "schedules_master") }
