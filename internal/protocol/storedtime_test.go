package protocol_test

import (
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// The time forms of the fixtures read as the instant they mean; a zone
// abbreviation other than UTC/GMT, and a time without a zone, read as zero
// rather than as a guess.
func TestParseStoredTime(t *testing.T) {
	want := time.Date(2026, 11, 21, 21, 23, 48, 0, time.UTC)
	for _, s := range []string{
		"2026/11/21 21:23:48 UTC",                                        // Ruby failed_at
		"2026-11-21T21:23:48Z",                                           // Ruby run_at
		"2026-11-21T21:23:48+00:00",                                      // heartbeat, php-resque 1.3+
		"2026-11-21T16:23:48-05:00",                                      // heartbeat of a host in New York
		"2026-11-21 21:23:48 +0000",                                      // Ruby started
		"Sat Nov 21 21:23:48 UTC 2026",                                   // php-resque (chrisboulton)
		"Sat Nov 21 2026 21:23:48 GMT+0000 (Coordinated Universal Time)", // node-resque
		"Sat Nov 21 2026 16:23:48 GMT-0500 (Eastern Standard Time)",
		"1795296228", // node-resque started
	} {
		if got := protocol.ParseStoredTime(s); !got.Equal(want) {
			t.Errorf("ParseStoredTime(%q) = %v, want %v", s, got, want)
		}
	}
	for _, s := range []string{"", "2026/11/21 16:23:48 EST", "2026/11/21 16:25:05", "soon", "0", "-5"} {
		if got := protocol.ParseStoredTime(s); !got.IsZero() {
			t.Errorf("ParseStoredTime(%q) = %v, want zero", s, got)
		}
	}
}
