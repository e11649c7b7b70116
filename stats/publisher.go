// Package stats holds the snapshot of a Resque cluster (counters, queues,
// workers, resque-go's runtime records) and renders it as text or JSON. A
// program reads a snapshot through package client (Snapshot) and prints
// it with Render or WriteJSON.
package stats

import (
	"time"
)

// Record is a runtime record: what every resque-go process writes at
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
	// Paused is true while the process takes no new job: quieted (resque-go
	// process quiet) or paused by USR2. Absent when it takes jobs.
	Paused bool `json:"paused,omitempty"`
}
