package worker_test

import (
	"testing"
	"time"

	"github.com/resque-go/resque-go/worker"
)

func TestBackoffDelays(t *testing.T) {
	t.Parallel()
	half := func() float64 { return 0.5 }
	for _, tc := range []struct {
		b       worker.Backoff
		attempt int
		want    time.Duration
	}{
		{worker.Backoff{}, 1, 0},
		{worker.Backoff{Base: 30 * time.Second}, 1, 30 * time.Second},
		{worker.Backoff{Base: 30 * time.Second}, 5, 30 * time.Second},
		{worker.Backoff{Base: 2 * time.Second, Exponential: true}, 1, 2 * time.Second},
		{worker.Backoff{Base: 2 * time.Second, Exponential: true}, 2, 4 * time.Second},
		{worker.Backoff{Base: 2 * time.Second, Exponential: true}, 3, 8 * time.Second},
		{worker.Backoff{Base: 2 * time.Second, Exponential: true, Max: 5 * time.Second}, 3, 5 * time.Second},
		{worker.Backoff{Base: 2 * time.Second, Exponential: true, Jitter: 0.5}, 2, 3 * time.Second},
		{worker.Backoff{Base: 10 * time.Second, Exponential: true, Max: 60 * time.Second, Jitter: 1}, 10, 30 * time.Second},
	} {
		if got := tc.b.Delay(tc.attempt, half); got != tc.want {
			t.Errorf("%+v attempt %d: %s, want %s", tc.b, tc.attempt, got, tc.want)
		}
	}
}
