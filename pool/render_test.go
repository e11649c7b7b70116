package pool

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// statusRecords are two managers as their status records read back: one
// with a running child, one in backoff and one crash-looping (with the
// reason its last process gave), and a quitting one.
func statusRecords() []Record {
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	updated := started.Add(95 * time.Minute)
	childUp, restart, soon := updated.Add(-42*time.Second), updated.Add(4*time.Second), updated.Add(30*time.Second)
	return []Record{
		{PID: 4100, Host: "web-1", Config: "/etc/resque/pool.yml", Format: FormatResqueGo, StartedAt: started, UpdatedAt: updated,
			RefreshIntervalS: 5, State: StateRunning, RSSBytes: 12 << 20, CPUPercent: 0.4,
			Children: []Child{
				{Slot: 1, Queues: "critical,high", PID: 4101, State: ChildRunning, Restarts: 1, Recycles: 3, StartedAt: &childUp, UptimeS: 42,
					LastExit: "recycled (max_rss)", RSSBytes: 48 << 20, CPUPercent: 87.5},
				{Slot: 2, Queues: "mail", State: ChildBackoff, Restarts: 1, RestartAt: &restart, LastExit: "exit status 1",
					LastExitReason: "resque-go: start: dial tcp 10.0.0.7:6379: connect: connection refused"},
				{Slot: 3, Queues: "reports", State: ChildCrashLoop, Restarts: 6, RestartAt: &soon, LastExit: "exit status 1",
					LastExitReason: "resque-go: redis redis://:xxx@10.0.0.7:6379: NOAUTH Authentication required."},
			}},
		{PID: 77, Host: "web-2", Config: "config/resque-pool.yml", Format: FormatResquePool, StartedAt: started, UpdatedAt: started.Add(time.Minute),
			RefreshIntervalS: 5, State: StateQuitting, RSSBytes: 9 << 20, Children: []Child{}},
	}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./pool/ -run Golden -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./pool/ -run Golden -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// The JSON of `pool status --json` is a published contract: its golden
// file catches a renamed or dropped field; new fields are added to it.
func TestGoldenStatusJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteStatusJSON(&b, statusRecords()); err != nil {
		t.Fatal(err)
	}
	golden(t, "status.json.golden", b.Bytes())
	b.Reset()
	if err := WriteStatusJSON(&b, nil); err != nil {
		t.Fatal(err)
	}
	golden(t, "status_empty.json.golden", b.Bytes())
}

func TestGoldenStatusText(t *testing.T) {
	var b bytes.Buffer
	if err := RenderStatus(&b, statusRecords()); err != nil {
		t.Fatal(err)
	}
	golden(t, "status.golden", b.Bytes())
}

// Every key of the document is snake_case, and every field is present
// (null or zero rather than left out).
func TestStatusJSONFieldNames(t *testing.T) {
	var b bytes.Buffer
	if err := WriteStatusJSON(&b, statusRecords()); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if !snake.MatchString(k) {
					t.Errorf("%s.%s is not snake_case", path, k)
				}
				walk(path+"."+k, x)
			}
		case []any:
			for _, x := range v {
				walk(path+"[]", x)
			}
		}
	}
	walk("", doc)
	if doc["total"] != 2.0 {
		t.Errorf("total = %v, want 2", doc["total"])
	}
	pool := doc["items"].([]any)[0].(map[string]any)
	child := pool["children"].([]any)[1].(map[string]any)
	for _, f := range []string{"slot", "queues", "pid", "state", "restarts", "started_at", "uptime_s", "restart_at",
		"last_exit", "last_exit_reason", "rss_bytes", "cpu_percent"} {
		if _, ok := child[f]; !ok {
			t.Errorf("child lacks %q", f)
		}
	}
}
