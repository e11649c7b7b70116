package protocol

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// PoolManager is the status record of one `resque-go pool` manager:
// <ns>:resque-go:pool:<host>:<pid>. Only resque-go reads or writes it; it
// expires on its own when the manager stops refreshing it.
func (k Keys) PoolManager(host string, pid int) string {
	return k.key("resque-go", "pool", host, strconv.Itoa(pid))
}

// PoolManagerPattern matches every pool status record (for SCAN).
func (k Keys) PoolManagerPattern() string { return k.key("resque-go", "pool", "*") }

// ParsePoolManager splits a pool status key into host and pid.
func (k Keys) ParsePoolManager(key string) (host string, pid int, ok bool) {
	return k.parseHostPID("pool", key)
}

// PoolRecord is the JSON value of a pool status record (Keys.PoolManager).
// Field names are a published contract (`resque-go pool status --json`): add
// fields, never rename them.
type PoolRecord struct {
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
	RSSBytes   uint64      `json:"rss_bytes"`
	CPUPercent float64     `json:"cpu_percent"`
	Children   []PoolChild `json:"children"`
}

// PoolChild is one supervised worker process (or the slot waiting for one).
type PoolChild struct {
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

// EncodePoolRecord writes r as compact JSON: times in UTC truncated to the
// second, children an array even when empty, NaN and infinities as 0.
func EncodePoolRecord(r PoolRecord) ([]byte, error) {
	sec := func(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }
	finite := func(f float64) float64 {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0
		}
		return f
	}
	r.StartedAt, r.UpdatedAt = sec(r.StartedAt), sec(r.UpdatedAt)
	r.RefreshIntervalS, r.CPUPercent = finite(r.RefreshIntervalS), finite(r.CPUPercent)
	children := make([]PoolChild, len(r.Children))
	for i, c := range r.Children {
		for _, t := range []**time.Time{&c.StartedAt, &c.RestartAt} {
			if *t != nil {
				v := sec(**t)
				*t = &v
			}
		}
		c.UptimeS, c.CPUPercent = finite(c.UptimeS), finite(c.CPUPercent)
		children[i] = c
	}
	r.Children = children
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("protocol: encode pool record: %w", err)
	}
	return b, nil
}

// ParsePoolRecord decodes a pool status record.
func ParsePoolRecord(v []byte) (PoolRecord, error) {
	var r PoolRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return PoolRecord{}, fmt.Errorf("protocol: pool record is not JSON: %w", err)
	}
	if r.Children == nil {
		r.Children = []PoolChild{}
	}
	return r, nil
}
