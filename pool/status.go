package pool

import (
	"time"
)

// Record is the status record a manager keeps at
// <ns>:resque-go:pool:<host>:<pid>.
type Record struct {
	PID  int    `json:"pid"`
	Host string `json:"host"`
	// Config is the path of the config file and Format the dialect it was
	// read as: resque-go, resque-pool or resque-v3.
	Config string `json:"config"`
	Format string `json:"format"`
	// StartedAt is when the manager started; UpdatedAt when this value was
	// written. Both UTC, RFC 3339, whole seconds.
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// RefreshIntervalS is the seconds between refreshes; the record expires
	// after three of them without one.
	RefreshIntervalS float64 `json:"refresh_interval_s"`
	// State is running, quitting (QUIT: children finish their jobs) or
	// terminating (TERM: children are cancelled, then killed).
	State string `json:"state"`
	// RSSBytes and CPUPercent (100 = one core) describe the manager itself.
	RSSBytes   uint64  `json:"rss_bytes"`
	CPUPercent float64 `json:"cpu_percent"`
	Children   []Child `json:"children"`
}

// Child is one supervised worker process (or the slot waiting for one) of a
// Record.
type Child struct {
	// Slot numbers the manager's children from 1, in config order.
	Slot   int    `json:"slot"`
	Queues string `json:"queues"`
	// PID is 0 while no process runs in the slot.
	PID int `json:"pid"`
	// State is running, backoff (waiting to be restarted), crashloop
	// (backoff after several quick deaths in a row) or stopping.
	State    string `json:"state"`
	Restarts int    `json:"restarts"`
	// Recycles counts the processes started after one recycled itself
	// (max_jobs, max_rss, max_age): not crashes, not in Restarts.
	Recycles int `json:"recycles"`
	// StartedAt is when the current process started (zero without one);
	// UptimeS its age when the record was written.
	StartedAt *time.Time `json:"started_at"`
	UptimeS   float64    `json:"uptime_s"`
	// RestartAt is when a slot in backoff starts its next process.
	RestartAt *time.Time `json:"restart_at"`
	// LastExit describes how the previous process ended ("exit status 1",
	// "signal: killed"); empty before any.
	LastExit string `json:"last_exit"`
	// LastExitReason is the last line that process wrote to stderr, the
	// reason a child that fails at start gives ("resque-go: ..."; the
	// message and error of a JSON log line), without colours or URL
	// passwords; empty when it wrote none.
	LastExitReason string `json:"last_exit_reason"`
	// RSSBytes and CPUPercent (100 = one core busy) describe the running
	// process; 0 without one.
	RSSBytes   uint64  `json:"rss_bytes"`
	CPUPercent float64 `json:"cpu_percent"`
}
