package protocol

import (
	"strconv"
	"strings"
	"time"
)

// Every Resque implementation writes its times in its own form. These are
// the forms found in the captured fixtures; a time in any other form, or
// whose zone is an abbreviation other than UTC or GMT (Go cannot tell what
// "EST" means without guessing), reads as the zero time.
var (
	// Layouts that carry a numeric offset: exact.
	storedOffsetLayouts = []string{
		time.RFC3339,                // heartbeats; php-resque 1.3+ failed_at, started, run_at; Ruby run_at
		"2006-01-02 15:04:05 -0700", // Ruby Time#to_s: worker:<id>:started, last_enqueued_at
		"2006/01/02 15:04:05 -0700",
		"Mon Jan 02 2006 15:04:05 GMT-0700", // node-resque: JavaScript Date#toString, without the "(zone name)"
	}
	// Layouts with a zone abbreviation: trusted for UTC and GMT only.
	storedZoneLayouts = []string{
		FailedAtLayout, // Ruby failed_at and retried_at; resque-go
		time.UnixDate,  // php-resque (chrisboulton) date(): failed_at, started, run_at
	}
)

// ParseStoredTime reads a time as Resque software stores it (failed_at,
// retried_at, run_at, started, heartbeats, last_enqueued_at), or returns
// the zero time.
func ParseStoredTime(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}
	}
	// node-resque stores worker:<id>:started as Unix seconds.
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
		return time.Unix(n, 0)
	}
	if i := strings.Index(s, " ("); i > 0 && strings.HasSuffix(s, ")") {
		s = s[:i]
	}
	for _, l := range storedOffsetLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t
		}
	}
	for _, l := range storedZoneLayouts {
		if t, err := time.Parse(l, s); err == nil {
			if name, _ := t.Zone(); name == "UTC" || name == "GMT" {
				return t
			}
			return time.Time{}
		}
	}
	return time.Time{}
}
