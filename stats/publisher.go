// Package stats reports on a Resque cluster: Collect reads the counters,
// queues and workers that every Resque runtime writes (plus resque-go's own
// runtime records), Render prints them, and a Publisher keeps this process's
// runtime record (memory, CPU, slots, host load) fresh in Redis.
package stats

import (
	"time"
)

// Record is a runtime record: what a Publisher writes at
// <ns>:resque-go:process:<host>:<pid>. Field names are documented in
// docs/operations.md#runtime-records.
type Record struct {
	PID  int    `json:"pid"`
	Host string `json:"host"`
	// StartedAt is when the process started publishing; UpdatedAt when this
	// value was written. Both UTC, RFC 3339, whole seconds.
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// HeartbeatIntervalS is the seconds between refreshes of the record; it
	// expires after three of them without one.
	HeartbeatIntervalS float64  `json:"heartbeat_interval_s"`
	WorkerIDs          []string `json:"worker_ids"`
	SlotsBusy          int      `json:"slots_busy"`
	SlotsTotal         int      `json:"slots_total"`
	// RSSBytes, CPUPercent (100 = one core) and Goroutines describe the process.
	RSSBytes   uint64  `json:"rss_bytes"`
	CPUPercent float64 `json:"cpu_percent"`
	Goroutines int     `json:"goroutines"`
	// The rest describes the host: CPU busy over all cores (0-100), memory
	// used, load averages.
	HostCPUPercent float64 `json:"host_cpu_percent"`
	MemUsedPercent float64 `json:"mem_used_percent"`
	Load1          float64 `json:"load1"`
	Load5          float64 `json:"load5"`
	Load15         float64 `json:"load15"`
	// WrongTypeQueues are the queues this process's claims skipped in the
	// last two minutes because their key holds another type (a key written
	// by hand): fix or delete the key. Absent when none.
	WrongTypeQueues []string `json:"wrong_type_queues,omitempty"`
}
