package redistest

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// Eventually returns once the condition holds, checking it again and again.
func TestEventuallyWaitsForTheCondition(t *testing.T) {
	var n atomic.Int32
	Eventually(t, 0, func() bool { return n.Add(1) >= 3 }, "three checks")
	if got := n.Load(); got != 3 {
		t.Fatalf("checked %d times, want 3", got)
	}
}

// A condition that never holds fails the test with what it waited for.
func TestEventuallyFailsWithTheMessage(t *testing.T) {
	ft := &fatalT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Eventually(ft, time.Millisecond, func() bool { return false }, "the moon")
	}()
	<-done
	if want := "timed out after 1ms waiting for the moon"; ft.msg != want {
		t.Fatalf("failed with %q, want %q", ft.msg, want)
	}
}

// fatalT records Fatalf's message and ends the goroutine as testing does.
type fatalT struct {
	testing.TB
	msg string
}

func (f *fatalT) Helper() {}

func (f *fatalT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
