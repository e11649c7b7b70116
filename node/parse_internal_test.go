package node

import "testing"

// --term-timeout 0 means no wait (Ruby's TERM_TIMEOUT=0), which the runtime
// reads as a negative timeout; empty leaves the runtime's default (4 s).
func TestTermTimeoutZeroMeansAtOnce(t *testing.T) {
	for _, c := range []struct {
		v    string
		want func(d durations) bool
	}{
		{"0", func(d durations) bool { return d.termTimeout < 0 }},
		{"0.0", func(d durations) bool { return d.termTimeout < 0 }},
		{"", func(d durations) bool { return d.termTimeout == 0 }},
		{"2.5", func(d durations) bool { return d.termTimeout.Seconds() == 2.5 }},
	} {
		d, err := Config{TermTimeout: c.v}.parseDurations()
		if err != nil || !c.want(d) {
			t.Errorf("--term-timeout %q: %v (%v)", c.v, d.termTimeout, err)
		}
	}
}
