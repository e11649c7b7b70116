package massqueue

import (
	"time"
)

// Per-source settings apply in every pool, static and batch (claims read
// weight and limit on every turn, so a change takes effect at once; in a
// batch pool they act on the source's active batch on its unit).

// SetWeight makes a source take weight jobs per turn of its pools' rings
// (default 1): with full backlogs, sources' shares follow their weights. In
// a batch pool the source's batch gets weight claims in a row on its unit.

// PauseResult is what client.PauseMassSource did.
type PauseResult struct {
	Source string `json:"source"`
	// Already: the source was paused before (nothing new was parked
	// unless an earlier pause was cut short).
	Already bool `json:"already"`
	// Batches are the source's parked active batches, one per batch pool.
	Batches []PausedBatch `json:"batches"`
}

// PausedBatch is a source's active batch parked off its unit in a pool.
type PausedBatch struct {
	Pool string `json:"pool"`
	ID   string `json:"id"`
	Unit string `json:"unit"`
	// New: this call parked it (else it was parked before).
	New bool `json:"new"`
}

// ResumeOptions are client.ResumeMassSource's; zero values mean the
// defaults.
type ResumeOptions struct {
	// StaticPools are static pools to look in besides those Redis knows.
	StaticPools []string
	// Now is the time units' heartbeats are compared to (default: the
	// Redis server's clock); a unit silent for DeadAfter (default 30 s)
	// is dead.
	Now       time.Time
	DeadAfter time.Duration
}

// ResumeResult is what client.ResumeMassSource did.
type ResumeResult struct {
	Source string `json:"source"`
	// WasPaused: the source was paused, or had a parked batch.
	WasPaused bool `json:"was_paused"`
	// Static are the static pools whose ring the source went back on.
	Static []string `json:"static_pools"`
	// Batches are the parked batches put back to work.
	Batches []ResumedBatch `json:"batches"`
}

// ResumedBatch is a parked batch put back to work.
type ResumedBatch struct {
	Pool string `json:"pool"`
	ID   string `json:"id"`
	// Unit is the unit it was parked on.
	Unit string `json:"unit"`
	// Result: "unit" (back on Unit's list), "committed" (Unit is dead or
	// gone: handed back to committed, an allocator places it on a live
	// unit) or "finished" (it was done).
	Result string `json:"result"`
}

// SourceSetting is a source's settings.
type SourceSetting struct {
	Source string `json:"source"`
	Weight int    `json:"weight"`
	// Limit is 0 without a cap.
	Limit  int  `json:"limit"`
	Paused bool `json:"paused"`
}
