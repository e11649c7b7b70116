package massqueue

import (
	"time"
)

// Failure is an entry of batch:allocation_failures: a batch or a static job
// that could not be placed.
type Failure struct {
	Kind Kind `json:"kind"`
	// ID is the batch id, or the static job's id ("" when it has none).
	ID string `json:"id"`
	// Source and Job are the batch's or job's.
	Source string `json:"source,omitempty"`
	Job    string `json:"job,omitempty"`
	// Reason is why (empty for entries the released server wrote).
	Reason string    `json:"reason,omitempty"`
	At     time.Time `json:"at,omitzero"`
	// Entry is the entry's exact bytes (what reallocation moves back).
	Entry []byte `json:"-"`
}
