package protocol

import "testing"

// The start times are those of the captured fixtures of each runtime.
func TestGuessRuntime(t *testing.T) {
	for _, c := range []struct{ id, started, want string }{
		{"vm:25407:high,mail", "2026-11-21 21:23:41 +0000", RuntimeRuby},
		{"vm:31477:high,mail", "2026-11-21T21:27:27+00:00", RuntimePHP},
		{"vm:30031:high,mail", "Sat Nov 21 21:26:50 UTC 2026", RuntimePHP},
		{"vm:2351:high,mail", "1795296571", RuntimeNode},
		{"vm:12-3:mail", "2026-11-21 21:23:41 +0000", RuntimeResqueGo},
		{"vm:12:mail", "", ""},
		{"vm:12:mail", "yesterday", ""},
	} {
		id, _ := ParseWorkerID(c.id)
		if got := GuessRuntime(id, c.started); got != c.want {
			t.Errorf("GuessRuntime(%q, %q) = %q, want %q", c.id, c.started, got, c.want)
		}
	}
}
