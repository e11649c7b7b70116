package massqueue

import (
	"time"
)

// Status is the state of every mass-queue pool (`mass status`). Field
// names are a published contract (--json): add fields, never rename them.
type Status struct {
	// Unassigned static jobs and Committed batches wait for an allocator.
	Unassigned int64 `json:"unassigned"`
	Committed  int64 `json:"committed"`
	Failures   int   `json:"allocation_failures"`
	// Paused are the paused sources (mass pause), by source.
	Paused []string       `json:"paused_sources"`
	Static []StaticStatus `json:"static_pools"`
	Batch  []BatchStatus  `json:"batch_pools"`
}

// StaticStatus is a static pool.
type StaticStatus struct {
	Pool string `json:"pool"`
	// Sources are the sources with jobs waiting, by source.
	Sources []SourceWaiting `json:"sources"`
	Waiting int64           `json:"waiting"`
	// Ring is how many sources take turns; Parked the sources at their limit.
	Ring   int      `json:"ring"`
	Parked []string `json:"parked"`
}

// SourceWaiting is a source's queued static jobs in a pool.
type SourceWaiting struct {
	Source  string `json:"source"`
	Waiting int64  `json:"waiting"`
}

// BatchStatus is a batch pool.
type BatchStatus struct {
	Pool  string       `json:"pool"`
	Units []UnitStatus `json:"units"`
	// Sources are the sources with an active batch or a backlog.
	Sources []SourceBatches `json:"sources"`
}

// UnitStatus is a unit of a batch pool.
type UnitStatus struct {
	Unit     string        `json:"unit"`
	Alive    bool          `json:"alive"`
	LastBeat time.Time     `json:"last_beat,omitzero"`
	Batches  []BatchRemain `json:"batches"`
}

// BatchRemain is a batch and its jobs left (not counting running ones).
type BatchRemain struct {
	ID        string `json:"id"`
	Remaining int64  `json:"remaining"`
}

// SourceBatches is a source's active batch (on Unit) and backlog.
type SourceBatches struct {
	Source  string   `json:"source"`
	Unit    string   `json:"unit,omitempty"`
	Active  string   `json:"active,omitempty"`
	Backlog []string `json:"backlog"`
	// Paused: the source is paused. Parked: its active batch is off
	// Unit's list (not served, and not among the unit's batches) until it
	// resumes. Remaining is the active batch's jobs left (not counting
	// running ones).
	Paused    bool  `json:"paused,omitempty"`
	Parked    bool  `json:"parked,omitempty"`
	Remaining int64 `json:"remaining,omitempty"`
}
