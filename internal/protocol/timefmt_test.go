package protocol_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // America/New_York without relying on the host's zoneinfo

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/protocol"
)

// rubyTimes collects the time strings Ruby Resque wrote in one dump.
type rubyTimes struct {
	started, heartbeat, runAt, failedAt, retriedAt []string
}

func loadRubyTimes(t *testing.T, dir, scenario string) rubyTimes {
	t.Helper()
	d := fixtures.MustLoad(dir, scenario)
	var r rubyTimes
	for _, name := range d.Names() {
		switch {
		case strings.HasPrefix(name, "resque:worker:") && strings.HasSuffix(name, ":started"):
			r.started = append(r.started, d.String(name))
		case name == "resque:workers:heartbeat":
			for _, v := range d.Hash(name) {
				r.heartbeat = append(r.heartbeat, v)
			}
		case strings.HasPrefix(name, "resque:worker:"):
			var rec struct {
				RunAt string `json:"run_at"`
			}
			if err := json.Unmarshal([]byte(d.String(name)), &rec); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			r.runAt = append(r.runAt, rec.RunAt)
		case name == "resque:failed":
			for _, e := range d.List(name) {
				var f struct {
					FailedAt  string `json:"failed_at"`
					RetriedAt string `json:"retried_at"`
				}
				if err := json.Unmarshal([]byte(e), &f); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				r.failedAt = append(r.failedAt, f.FailedAt)
				if f.RetriedAt != "" {
					r.retriedAt = append(r.retriedAt, f.RetriedAt)
				}
			}
		}
	}
	return r
}

// TestTimeFormatsMatchRuby parses each UTC value Ruby 3.0.0 wrote with our
// layout and formats it again: the bytes must be the same.
func TestTimeFormatsMatchRuby(t *testing.T) {
	t.Parallel()
	running := loadRubyTimes(t, "ruby-resque-3.0.0", "worker-running")
	failure := loadRubyTimes(t, "ruby-resque-3.0.0", "failure")
	requeue := loadRubyTimes(t, "ruby-resque-3.0.0", "failure-requeue")
	tests := []struct {
		name   string
		layout string
		format func(time.Time) string
		values []string
	}{
		{"started", protocol.StartedLayout, protocol.FormatStarted, append(running.started, failure.started...)},
		{"heartbeat", protocol.HeartbeatLayout, protocol.FormatHeartbeat, append(running.heartbeat, failure.heartbeat...)},
		{"run_at", protocol.RunAtLayout, protocol.FormatRunAt, running.runAt},
		{"failed_at", protocol.FailedAtLayout, protocol.FormatFailedAt, append(failure.failedAt, requeue.failedAt...)},
		{"retried_at", protocol.FailedAtLayout, protocol.FormatFailedAt, requeue.retriedAt},
	}
	for _, tt := range tests {
		if len(tt.values) == 0 {
			t.Errorf("%s: no value in the fixtures", tt.name)
		}
		for _, v := range tt.values {
			tm, err := time.Parse(tt.layout, v)
			if err != nil {
				t.Errorf("%s: parse %q with %q: %v", tt.name, v, tt.layout, err)
				continue
			}
			if got := tt.format(tm); got != v {
				t.Errorf("%s: Ruby wrote %q, we format %q", tt.name, v, got)
			}
			// Formatting the same instant from another zone gives the same UTC text.
			if got := tt.format(tm.In(time.FixedZone("X", 9*3600+1800))); got != v {
				t.Errorf("%s: from another zone %q, want %q", tt.name, got, v)
			}
		}
	}
}

func TestTimeFormatsExact(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 21, 16, 25, 1, 987654321, ny) // 21:25:01 UTC
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"started", protocol.FormatStarted(at), "2026-11-21 21:25:01 +0000"},
		{"heartbeat", protocol.FormatHeartbeat(at), "2026-11-21T21:25:01+00:00"},
		{"run_at", protocol.FormatRunAt(at), "2026-11-21T21:25:01Z"},
		{"failed_at", protocol.FormatFailedAt(at), "2026/11/21 21:25:01 UTC"},
		{"failed_at padding", protocol.FormatFailedAt(time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)), "2027/01/02 03:04:05 UTC"},
		{"started padding", protocol.FormatStarted(time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)), "2027-01-02 03:04:05 +0000"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

// TestRubyNewYorkTimes reads the values Ruby wrote under TZ=America/New_York:
// they are the same instants as our UTC forms.
func TestRubyNewYorkTimes(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"ruby-resque-3.0.0", "ruby-resque-2.7.0"} {
		r := loadRubyTimes(t, dir, "failure-tz-new-york")
		if len(r.heartbeat) != 1 || len(r.started) != 1 || len(r.failedAt) != 1 {
			t.Fatalf("%s: unexpected fixture %+v", dir, r)
		}
		hb := r.heartbeat[0]
		if !strings.HasSuffix(hb, "-05:00") {
			t.Fatalf("%s: heartbeat %q has no -05:00 offset", dir, hb)
		}
		parsed, err := protocol.ParseHeartbeat(hb)
		if err != nil {
			t.Fatalf("%s: ParseHeartbeat(%q): %v", dir, hb, err)
		}
		_, off := parsed.Zone()
		if off != -5*3600 {
			t.Errorf("%s: ParseHeartbeat(%q) offset %d", dir, hb, off)
		}
		started, err := time.Parse(protocol.StartedLayout, r.started[0])
		if err != nil {
			t.Fatal(err)
		}
		failedAt, err := time.ParseInLocation(protocol.FailedAtLayout, r.failedAt[0], ny)
		if err != nil {
			t.Fatal(err)
		}
		if !parsed.Equal(started) || !parsed.Equal(failedAt) {
			t.Errorf("%s: heartbeat %v, started %v, failed_at %v are not the same instant", dir, parsed, started, failedAt)
		}
		utc := parsed.UTC()
		want := utc.Format("2006-01-02T15:04:05") + "+00:00"
		if got := protocol.FormatHeartbeat(parsed); got != want {
			t.Errorf("%s: FormatHeartbeat = %q, want %q", dir, got, want)
		}
		if got := protocol.FormatFailedAt(failedAt); got != utc.Format("2006/01/02 15:04:05")+" UTC" {
			t.Errorf("%s: FormatFailedAt = %q", dir, got)
		}
	}
}

func TestParseHeartbeat(t *testing.T) {
	t.Parallel()
	want := time.Date(2026, 11, 21, 21, 23, 41, 0, time.UTC)
	for _, s := range []string{
		"2026-11-21T21:23:41+00:00",
		"2026-11-21T21:23:41Z",
		"2026-11-21T16:23:41-05:00",
		"2026-11-22T06:53:41+09:30",
		protocol.FormatHeartbeat(want),
	} {
		got, err := protocol.ParseHeartbeat(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseHeartbeat(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "garbage", "2026-11-21 21:23:41 +0000", "1795296221", "2026-11-21T21:23:41"} {
		if got, err := protocol.ParseHeartbeat(s); err == nil {
			t.Errorf("ParseHeartbeat(%q) = %v, want an error", s, got)
		}
	}
	// Every heartbeat any fixture holds parses (only Ruby writes them).
	for _, dir := range fixtures.Dirs() {
		for _, sc := range fixtures.Scenarios(dir) {
			for id, v := range fixtures.MustLoad(dir, sc).Hash("resque:workers:heartbeat") {
				if _, err := protocol.ParseHeartbeat(v); err != nil {
					t.Errorf("%s/%s: heartbeat of %s %q: %v", dir, sc, id, v, err)
				}
			}
		}
	}
}
