package protocol

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestPoolManagerKey(t *testing.T) {
	k := NewKeys("resque-v3:")
	if got, want := k.PoolManager("web-1", 4242), "resque-v3:resque-go:pool:web-1:4242"; got != want {
		t.Errorf("PoolManager = %q, want %q", got, want)
	}
	if got, want := k.PoolManagerPattern(), "resque-v3:resque-go:pool:*"; got != want {
		t.Errorf("PoolManagerPattern = %q, want %q", got, want)
	}
}

func TestParsePoolManager(t *testing.T) {
	k := NewKeys("resque")
	tests := []struct {
		key  string
		host string
		pid  int
		ok   bool
	}{
		{"resque:resque-go:pool:web-1:4242", "web-1", 4242, true},
		{"resque:resque-go:pool:web-1.example.com:1", "web-1.example.com", 1, true},
		{"resque:resque-go:pool:web-1", "", 0, false},
		{"resque:resque-go:pool::4242", "", 0, false},
		{"resque:resque-go:pool:web-1:0", "", 0, false},
		{"resque:resque-go:pool:web-1:12:3", "", 0, false},
		{"resque:resque-go:process:web-1:4242", "", 0, false},
		{"other:resque-go:pool:web-1:4242", "", 0, false},
	}
	for _, tt := range tests {
		host, pid, ok := k.ParsePoolManager(tt.key)
		if host != tt.host || pid != tt.pid || ok != tt.ok {
			t.Errorf("ParsePoolManager(%q) = %q, %d, %v; want %q, %d, %v", tt.key, host, pid, ok, tt.host, tt.pid, tt.ok)
		}
	}
}

// The record's JSON is a published contract: field names, UTC seconds,
// arrays never null, no NaN.
func TestEncodePoolRecord(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 890_000_000, time.FixedZone("x", 3600))
	b, err := EncodePoolRecord(PoolRecord{PID: 1, Host: "h", Config: "c.yml", Format: "resque-pool", StartedAt: at, UpdatedAt: at,
		RefreshIntervalS: 5, State: "running", CPUPercent: math.NaN(),
		Children: []PoolChild{{Slot: 1, Queues: "q", PID: 2, State: "running", StartedAt: &at, UptimeS: math.Inf(1)}, {Slot: 2, Queues: "q", State: "backoff", RestartAt: &at}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"pid":1,"host":"h","config":"c.yml","format":"resque-pool","started_at":"2026-03-04T04:06:07Z","updated_at":"2026-03-04T04:06:07Z",` +
		`"refresh_interval_s":5,"state":"running","rss_bytes":0,"cpu_percent":0,"children":[` +
		`{"slot":1,"queues":"q","pid":2,"state":"running","restarts":0,"recycles":0,"started_at":"2026-03-04T04:06:07Z","uptime_s":0,"restart_at":null,"last_exit":"","last_exit_reason":"","rss_bytes":0,"cpu_percent":0},` +
		`{"slot":2,"queues":"q","pid":0,"state":"backoff","restarts":0,"recycles":0,"started_at":null,"uptime_s":0,"restart_at":"2026-03-04T04:06:07Z","last_exit":"","last_exit_reason":"","rss_bytes":0,"cpu_percent":0}]}`
	if string(b) != want {
		t.Errorf("encoded\n%s\nwant\n%s", b, want)
	}
	if at.Nanosecond() == 0 {
		t.Error("the caller's time was modified")
	}
	empty, _ := EncodePoolRecord(PoolRecord{})
	if !strings.Contains(string(empty), `"children":[]`) {
		t.Errorf("no children: %s", empty)
	}
	r, err := ParsePoolRecord(b)
	if err != nil || r.PID != 1 || len(r.Children) != 2 || !r.Children[1].RestartAt.Equal(at.Truncate(time.Second)) {
		t.Errorf("round trip: %+v %v", r, err)
	}
	if _, err := ParsePoolRecord([]byte("nope")); err == nil {
		t.Error("garbage parsed")
	}
}
