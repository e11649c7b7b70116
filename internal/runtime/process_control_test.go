package runtime_test

import (
	"errors"
	"testing"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
)

// A process request stored while the worker's subscription is down (its
// push missed) is applied when the subscription comes back; pushed ones
// are applied at once: quiet pauses, resume resumes, stop stops the worker
// as Stop does and says so.
func TestProcessRequestsStoredAndPushed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const pid = 4242
	w := e.start(runtime.Config{Queues: "q", PID: pid})
	redistest.Eventually(t, 0, func() bool { return w.Ready() == nil }, "the worker ready")
	k := e.client.Keys()
	// stored, not published: as if the push came while nobody listened
	if _, err := e.client.Do(e.ctx(), "SET", k.ProcessControlKey("testhost", pid), "quiet r1", "EX", 600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Do(e.ctx(), "CLIENT", "KILL", "TYPE", "pubsub"); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool { return w.Paused() }, "the stored quiet applied on resubscription")
	if !errors.Is(w.Ready(), runtime.ErrPaused) {
		t.Errorf("Ready = %v, want ErrPaused", w.Ready())
	}
	if _, err := e.client.ControlProcess(e.ctx(), "testhost", pid, protocol.ActionResume); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool { return !w.Paused() }, "the pushed resume applied")
	// a request to another process of the same host is not this one's:
	// the quiet pushed after it is applied, and the worker still runs
	if _, err := e.client.Do(e.ctx(), "PUBLISH", k.ProcessControlChannel(), "stop r3 testhost:4243"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.Do(e.ctx(), "PUBLISH", k.ProcessControlChannel(), "quiet r4 testhost:4242"); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool { return w.Paused() }, "the pushed quiet applied")
	if w.StopRequested() {
		t.Fatal("a stop request for another pid stopped this worker")
	}
	if _, err := e.client.ControlProcess(e.ctx(), "testhost", pid, protocol.ActionStop); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool {
		select {
		case <-w.Done():
			return true
		default:
			return false
		}
	}, "the worker stopped")
	if !w.StopRequested() {
		t.Error("StopRequested = false after a stop request")
	}
}
