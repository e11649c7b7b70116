package protocol

import (
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// ProcessRecord is the JSON value of a runtime record (Keys.Process). Field
// names are a published contract (docs/operations.md#runtime-records): add fields, never
// rename them.
type ProcessRecord struct {
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

// EncodeProcessRecord writes r as compact JSON: times in UTC truncated to the
// second, worker_ids an array even when empty, NaN and infinite metrics as 0
// (JSON has no such numbers).
func EncodeProcessRecord(r ProcessRecord) ([]byte, error) {
	r.StartedAt = r.StartedAt.UTC().Truncate(time.Second)
	r.UpdatedAt = r.UpdatedAt.UTC().Truncate(time.Second)
	if r.WorkerIDs == nil {
		r.WorkerIDs = []string{}
	}
	for _, f := range []*float64{&r.HeartbeatIntervalS, &r.CPUPercent, &r.HostCPUPercent, &r.MemUsedPercent, &r.Load1, &r.Load5, &r.Load15} {
		if math.IsNaN(*f) || math.IsInf(*f, 0) {
			*f = 0
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("protocol: encode runtime record: %w", err)
	}
	return b, nil
}

// ParseProcessRecord decodes a runtime record.
func ParseProcessRecord(v []byte) (ProcessRecord, error) {
	var r ProcessRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return ProcessRecord{}, fmt.Errorf("protocol: runtime record is not JSON: %w", err)
	}
	if r.WorkerIDs == nil {
		r.WorkerIDs = []string{}
	}
	return r, nil
}
