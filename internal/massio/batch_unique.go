package massio

import (
	"context"
	"errors"
	"fmt"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
)

func hasUID(jobs []rdb.BatchJob) bool {
	for _, j := range jobs {
		if j.UID != "" {
			return true
		}
	}
	return false
}

// pushChecked pushes jobs (at most pushChunk) with mass_batch_push.lua and
// returns how many were pushed.
func (b *Batch) pushChecked(ctx context.Context, jobs []rdb.BatchJob) (int, error) {
	mode := rdb.BatchPushList
	switch b.state {
	case batchNew:
		mode = rdb.BatchPushNew
	case batchUnknown:
		mode = rdb.BatchPushOpen
	}
	for {
		r, err := b.c.BatchPushChecked(ctx, mode, b.id, jobs, b.ttl, massqueue.BatchUniqueStateTTL(b.ttl), b.now())
		switch {
		case errors.Is(err, rdb.ErrBatchExists) && mode == rdb.BatchPushNew:
			b.id = protocol.NewBatchID(b.source, b.name) // as resqu-client: draw again
			continue
		case errors.Is(err, rdb.ErrBatchMissing) && mode == rdb.BatchPushOpen:
			return 0, fmt.Errorf("%w: %s (pushes by id need an id from mass batch create, or a batch already pushed to)", massqueue.ErrBatchExpired, b.id)
		case errors.Is(err, rdb.ErrBatchMissing):
			return 0, fmt.Errorf("%w: %s", massqueue.ErrBatchExpired, b.id)
		case err != nil:
			return 0, fmt.Errorf("massqueue: %w", err)
		}
		if r.Pushed > 0 {
			b.state = batchOpen
		}
		b.uniq = b.uniq || r.HasUIDs
		if r.Refused != "" {
			return r.Pushed, &massqueue.DuplicateError{Batch: b.id, UID: r.Refused}
		}
		return r.Pushed, nil
	}
}
