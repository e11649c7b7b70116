package protocol

import "time"

// Time layouts other Resque software reads. Each is pinned by a test against
// what Ruby Resque wrote in the fixtures.
const (
	// RunAtLayout is worker:<id> "run_at": Ruby's Time#utc.iso8601.
	RunAtLayout = "2006-01-02T15:04:05Z"
	// StartedLayout is worker:<id>:started: Ruby's Time#to_s.
	StartedLayout = "2006-01-02 15:04:05 -0700"
	// HeartbeatLayout is the workers:heartbeat value: Ruby's Time#iso8601.
	HeartbeatLayout = "2006-01-02T15:04:05-07:00"
	// FailedAtLayout is failed_at and retried_at: Ruby 3's
	// strftime("%Y/%m/%d %H:%M:%S %Z"); resque-web parses it.
	FailedAtLayout = "2006/01/02 15:04:05 MST"
)

// FormatRunAt formats t for worker:<id> "run_at" (always UTC).
func FormatRunAt(t time.Time) string { return t.UTC().Format(RunAtLayout) }

// FormatStarted formats t for worker:<id>:started (UTC).
func FormatStarted(t time.Time) string { return t.UTC().Format(StartedLayout) }

// FormatHeartbeat formats t for the heartbeat hash (UTC, numeric offset).
func FormatHeartbeat(t time.Time) string { return t.UTC().Format(HeartbeatLayout) }

// ParseHeartbeat reads a heartbeat value written by Ruby (any offset) or us.
func ParseHeartbeat(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }

// FormatFailedAt formats t for failed_at / retried_at (UTC).
func FormatFailedAt(t time.Time) string { return t.UTC().Format(FailedAtLayout) }
