package stats

import "time"

// SchedulerInfo is the runtime record of one `resque-go scheduler` process
// (<ns>:resque-go:scheduler:<host>:<pid>), as it writes it and `stats`
// shows it.
type SchedulerInfo struct {
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	// Master is true while this process holds resque-scheduler's master
	// lock (recurring schedules fire only there).
	Master bool `json:"master"`
	// LastPass is the end of the latest pass of any of its services.
	LastPass time.Time `json:"last_pass"`
	// DueItems is the number of delayed buckets due at the latest look
	// (waiting for a mover).
	DueItems int64 `json:"due_items"`
	// NextPlanSlot is the earliest plan slot filed (zero: none).
	NextPlanSlot time.Time `json:"next_plan_slot"`
	// Totals since the process started.
	Promoted       int64 `json:"promoted"`
	PlansFired     int64 `json:"plans_fired"`
	SchedulesFired int64 `json:"schedules_fired"`
	Schedules      int   `json:"schedules"` // recurring schedules loaded
}
