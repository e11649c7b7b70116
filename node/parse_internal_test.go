package node

import (
	"strings"
	"testing"
)

// term_timeout "0" in JSON means no wait (Ruby's TERM_TIMEOUT=0), which
// Config spells and the runtime reads as a negative timeout; empty leaves
// the runtime's default (4 s).
func TestTermTimeoutZeroMeansAtOnce(t *testing.T) {
	for _, c := range []struct {
		v    string
		want func(d durations) bool
	}{
		{"0", func(d durations) bool { return d.termTimeout < 0 }},
		{"0.0", func(d durations) bool { return d.termTimeout < 0 }},
		{"", func(d durations) bool { return d.termTimeout == 0 }},
		{"2.5", func(d durations) bool { return d.termTimeout.Seconds() == 2.5 }},
		{"2500ms", func(d durations) bool { return d.termTimeout.Seconds() == 2.5 }},
	} {
		cfg, err := Decode(strings.NewReader(`{"queues":"a","term_timeout":"` + c.v + `"}`))
		if err != nil {
			t.Fatalf("term_timeout %q: %v", c.v, err)
		}
		d, err := cfg.parseDurations()
		if err != nil || !c.want(d) {
			t.Errorf("term_timeout %q: %v (%v)", c.v, d.termTimeout, err)
		}
	}
}
