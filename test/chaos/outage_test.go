package chaos

import (
	"testing"
	"time"
)

// A prune is explained by an outage burst only when the burst cut the
// workers off long enough for a live one to look dead.
func TestCutOffBefore(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// 7.5 s hole, 1 s gap, 1.5 s Redis down, 2 s gap, 5.2 s hole: one burst
	// from 0 to 17.2 s; a 3 s hole alone at 60 s
	outages := []outage{{at(10.5), at(12)}, {at(0), at(7.5)}, {at(14), at(17.2)}, {at(60), at(63)}}
	for _, c := range []struct {
		prune float64
		ok    bool
	}{
		{16, true},  // 16 s into the burst
		{21, true},  // a moment after it ended
		{9, false},  // too early: the last beat is not 3 intervals old
		{23, false}, // the workers beat again after the burst
		{64, false}, // after a short hole
	} {
		if d, ok := cutOffBefore(outages, at(c.prune)); ok != c.ok || (ok && d != 17200*time.Millisecond) {
			t.Errorf("prune at %gs: %s %v, want %v", c.prune, d, ok, c.ok)
		}
	}
}
