package massio

import (
	"context"
	"fmt"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
)

// Failures lists the allocation failures, oldest first.
func Failures(ctx context.Context, c *rdb.Client) ([]massqueue.Failure, error) {
	fs, err := c.AllocationFailures(ctx)
	if err != nil {
		return nil, fmt.Errorf("massqueue: %w", err)
	}
	out := make([]massqueue.Failure, 0, len(fs))
	for _, f := range fs {
		x := massqueue.Failure{Reason: f.Reason, At: f.At, Entry: f.Entry}
		if f.IsStatic() {
			x.Kind = massqueue.KindStatic
			v, _ := protocol.DecodeMassPayload(f.Entry)
			x.Source, x.Job = v.SourceID, v.Name
			if p, err := protocol.DecodePayload(f.Entry); err == nil {
				x.ID = p.ID
			}
		} else {
			x.Kind, x.ID = massqueue.KindBatch, string(f.Entry)
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
	return reallocate(ctx, c, func(f massqueue.Failure) bool { return f.ID == id })
}

// ReallocateAll gives every allocation failure another try.
func ReallocateAll(ctx context.Context, c *rdb.Client) (int, error) {
	return reallocate(ctx, c, func(massqueue.Failure) bool { return true })
}

func reallocate(ctx context.Context, c *rdb.Client, match func(massqueue.Failure) bool) (int, error) {
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
