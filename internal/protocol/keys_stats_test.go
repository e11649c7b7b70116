package protocol

import (
	"strings"
	"testing"
	"time"
)

func TestProcessKey(t *testing.T) {
	k := NewKeys("resque-v3:")
	if got, want := k.Process("web-1", 4242), "resque-v3:resque-go:process:web-1:4242"; got != want {
		t.Errorf("Process = %q, want %q", got, want)
	}
	if got, want := k.ProcessPattern(), "resque-v3:resque-go:process:*"; got != want {
		t.Errorf("ProcessPattern = %q, want %q", got, want)
	}
}

func TestParseProcess(t *testing.T) {
	k := NewKeys("resque")
	tests := []struct {
		key  string
		host string
		pid  int
		ok   bool
	}{
		{"resque:resque-go:process:web-1:4242", "web-1", 4242, true},
		{"resque:resque-go:process:web-1.example.com:1", "web-1.example.com", 1, true},
		{"resque:resque-go:process:web-1", "", 0, false},
		{"resque:resque-go:process::4242", "", 0, false},
		{"resque:resque-go:process:web-1:0", "", 0, false},
		{"resque:resque-go:process:web-1:12:3", "", 0, false},
		{"resque:resque-go:process:web-1:x", "", 0, false},
		{"other:resque-go:process:web-1:4242", "", 0, false},
		{"resque:resque-go:heartbeat_interval", "", 0, false},
	}
	for _, tt := range tests {
		host, pid, ok := k.ParseProcess(tt.key)
		if host != tt.host || pid != tt.pid || ok != tt.ok {
			t.Errorf("ParseProcess(%q) = %q, %d, %v; want %q, %d, %v", tt.key, host, pid, ok, tt.host, tt.pid, tt.ok)
		}
		if tt.ok {
			if back := k.Process(host, pid); back != tt.key {
				t.Errorf("Process(ParseProcess(%q)) = %q", tt.key, back)
			}
		}
	}
}

func TestProcessRecordRoundTrip(t *testing.T) {
	at := time.Date(2024, 5, 1, 12, 0, 5, 123456789, time.FixedZone("CEST", 2*3600))
	in := ProcessRecord{PID: 42, Host: "web-1", StartedAt: at, UpdatedAt: at.Add(time.Minute),
		HeartbeatIntervalS: 5, SlotsBusy: 1, SlotsTotal: 2, RSSBytes: 1 << 20, CPUPercent: 12.5,
		Goroutines: 9, HostCPUPercent: 40, MemUsedPercent: 61.25, Load1: 0.5, Load5: 0.25, Load15: 0.125}
	b, err := EncodeProcessRecord(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"pid":42,"host":"web-1","started_at":"2024-05-01T10:00:05Z","updated_at":"2024-05-01T10:01:05Z",` +
		`"heartbeat_interval_s":5,"worker_ids":[],"slots_busy":1,"slots_total":2,"rss_bytes":1048576,` +
		`"cpu_percent":12.5,"goroutines":9,"host_cpu_percent":40,"mem_used_percent":61.25,` +
		`"load1":0.5,"load5":0.25,"load15":0.125}`
	if string(b) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", b, want)
	}
	out, err := ParseProcessRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if !out.StartedAt.Equal(at.Truncate(time.Second)) || out.PID != 42 || len(out.WorkerIDs) != 0 || out.WorkerIDs == nil {
		t.Errorf("round trip: %+v", out)
	}
}

func TestEncodeProcessRecordNonFinite(t *testing.T) {
	var zero float64
	b, err := EncodeProcessRecord(ProcessRecord{CPUPercent: zero / zero, Load1: 1 / zero})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"cpu_percent":0,`) || !strings.Contains(string(b), `"load1":0,`) {
		t.Errorf("non-finite metrics not zeroed: %s", b)
	}
}

func TestParseProcessRecordBad(t *testing.T) {
	if _, err := ParseProcessRecord([]byte("not json")); err == nil {
		t.Error("want an error for a non-JSON record")
	}
}
