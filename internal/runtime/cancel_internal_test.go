package runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// A request that comes before its claim's job has started is kept for it
// and applied when it starts; one for an earlier claim is dropped; one for
// a later claim waits for that claim.
func TestCancelPendingRequests(t *testing.T) {
	start := func(s *slot, seq string) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		s.mu.Lock()
		s.cur, s.cancel, s.cancelled = &rdb.ClaimResult{Seq: seq}, cancel, false
		if s.pending != nil {
			s.takePending()
		}
		s.mu.Unlock()
		return ctx
	}
	end := func(s *slot) {
		s.mu.Lock()
		s.cur, s.cancel = nil, nil
		s.mu.Unlock()
	}
	s := &slot{w: &Worker{log: zerolog.Nop()}, id: "h:1:q"}

	s.requestCancel(protocol.Cancel{WorkerID: s.id, Seq: "5"}) // between claims
	ctx := start(s, "5")
	if !errors.As(context.Cause(ctx), new(jobCancelled)) {
		t.Fatalf("claim 5 not cancelled by its early request: %v", context.Cause(ctx))
	}
	end(s)

	s.requestCancel(protocol.Cancel{WorkerID: s.id, Seq: "4"}) // an earlier claim
	if ctx := start(s, "6"); ctx.Err() != nil || s.pending != nil {
		t.Fatalf("claim 6 hit by a request for claim 4 (pending %v)", s.pending)
	}
	s.requestCancel(protocol.Cancel{WorkerID: s.id, Seq: "7", Retry: true}) // the next claim, while 6 runs
	end(s)
	if s.pending == nil {
		t.Fatal("a request for the next claim was dropped")
	}
	ctx = start(s, "7")
	var jc jobCancelled
	if !errors.As(context.Cause(ctx), &jc) || !jc.retry {
		t.Fatalf("claim 7: cause %v", context.Cause(ctx))
	}
	// the running claim's own request: applied at once, once
	end(s)
	ctx = start(s, "8")
	s.requestCancel(protocol.Cancel{WorkerID: s.id, Seq: "8"})
	s.requestCancel(protocol.Cancel{WorkerID: s.id, Seq: "8"})
	if !errors.As(context.Cause(ctx), new(jobCancelled)) {
		t.Fatalf("claim 8: cause %v", context.Cause(ctx))
	}
}
