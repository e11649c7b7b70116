package massqueue

import (
	"context"
	"fmt"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
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

// Failures lists the allocation failures, oldest first.
func Failures(ctx context.Context, c *rdb.Client) ([]Failure, error) {
	fs, err := c.AllocationFailures(ctx)
	if err != nil {
		return nil, fmt.Errorf("massqueue: %w", err)
	}
	out := make([]Failure, 0, len(fs))
	for _, f := range fs {
		x := Failure{Reason: f.Reason, At: f.At, Entry: f.Entry}
		if f.IsStatic() {
			x.Kind = KindStatic
			v, _ := protocol.DecodeMassPayload(f.Entry)
			x.Source, x.Job = v.SourceID, v.Name
			if p, err := protocol.DecodePayload(f.Entry); err == nil {
				x.ID = p.ID
			}
		} else {
			x.Kind, x.ID = KindBatch, string(f.Entry)
			x.Source, x.Job, _, _ = protocol.ParseBatchID(x.ID)
		}
		out = append(out, x)
	}
	return out, nil
}

// Reallocate gives the allocation failures with this id (a batch id, or a
// static job's id) another try: each goes back to the tail of committed or
// unassigned, where the allocators take it next. It returns how many.
func Reallocate(ctx context.Context, c *rdb.Client, id string) (int, error) {
	return reallocate(ctx, c, func(f Failure) bool { return f.ID == id })
}

// ReallocateAll gives every allocation failure another try.
func ReallocateAll(ctx context.Context, c *rdb.Client) (int, error) {
	return reallocate(ctx, c, func(Failure) bool { return true })
}

func reallocate(ctx context.Context, c *rdb.Client, match func(Failure) bool) (int, error) {
	fs, err := Failures(ctx, c)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, f := range fs {
		if !match(f) {
			continue
		}
		ok, err := c.Reallocate(ctx, f.Entry)
		if err != nil {
			return n, fmt.Errorf("massqueue: %w", err)
		}
		if ok {
			n++
		}
	}
	return n, nil
}

func parseBatch(id string) (source, name, suffix string, err error) {
	return protocol.ParseBatchID(id)
}
