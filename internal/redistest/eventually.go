package redistest

import (
	"testing"
	"time"
)

// Patience is how long Eventually waits when given no timeout: long
// enough for a loaded machine (the race detector, a full suite, few
// cores) to make the progress a test waits for, which never depends on
// being fast.
const Patience = 60 * time.Second

// pollEvery is how often Eventually checks its condition.
const pollEvery = 10 * time.Millisecond

// Eventually waits until cond holds, checking it every 10 ms, and fails t
// with msg (what it waited for) when it has not held after timeout, or
// after Patience when timeout is 0 or less. It is a wait on progress, not
// a measure of speed: pass a timeout only to wait longer than Patience.
// cond is checked once more at the deadline, so a goroutine held up until
// then still counts.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, msg string) {
	t.Helper()
	if timeout <= 0 {
		timeout = Patience
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			if cond() {
				return
			}
			t.Fatalf("timed out after %s waiting for %s", timeout, msg)
		case <-tick.C:
		}
	}
}
