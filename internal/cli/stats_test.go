package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/stats"
)

// seed writes two queues, counters on two hosts and two workers.
func (e *cliEnv) seed() {
	e.t.Helper()
	e.do("SADD", e.ns+":queues", "high", "low")
	e.do("RPUSH", e.ns+":queue:high", `{"class":"A","args":[]}`, `{"class":"A","args":[]}`)
	e.do("SET", e.ns+":stat:processed", "42")
	e.do("SET", e.ns+":queuestat:web-1:dequeued:high", "7")
	e.do("SET", e.ns+":queuestat:web-2:dequeued:high", "3")
	e.do("SADD", e.ns+":workers", "web-1:11:high,low", "web-2:22:*")
	e.do("SET", e.ns+":worker:web-1:11:high,low", `{"queue":"high","run_at":"2024-05-01T12:00:00Z","payload":{"class":"A","args":[]}}`)
}

func (e *cliEnv) stats(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	e.t.Helper()
	out, errOut := newSyncBuffer(), newSyncBuffer()
	code = runCommand(ctx, statsCommand(), append(e.redisArgs(), args...), out, errOut)
	return code, out.String(), errOut.String()
}

func TestStatsText(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	e.seed()
	code, out, errOut := e.stats(context.Background())
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"QUEUES", "WORKERS", "HOSTS", "TOTALS", "web-1:11:high,low", "working", "web-2:22:*"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, clearScreen) {
		t.Error("a one-shot report must not clear the screen")
	}
}

func TestStatsJSON(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	e.seed()
	e.do("SET", e.ns+":queuestat:web-1:queue_time:high", "100") // ms, summed: 100 / 10 dequeued
	e.do("SET", e.ns+":queuestat:web-2:queue_time:high", "3")
	e.do("SET", e.ns+":worker:web-1:11:high,low:started", "2024-05-01 13:59:00 +0200") // Ruby's Time#to_s
	code, out, errOut := e.stats(context.Background(), "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// times are RFC 3339 in UTC with the stored text beside them; the
	// average is rounded as the table shows it
	var view struct {
		Time    string
		Queues  []map[string]any
		Workers []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &view); err != nil || !strings.HasSuffix(view.Time, "Z") || len(view.Queues) != 2 || len(view.Workers) != 2 {
		t.Fatalf("%v\n%s", err, out)
	}
	if q := view.Queues[0]; q["avg_queue_time_ms"] != 10.3 {
		t.Errorf("avg_queue_time_ms = %v, want 10.3 (103 ms over 10 jobs, one decimal)", q["avg_queue_time_ms"])
	}
	if w := view.Workers[0]; w["run_at"] != "2024-05-01T12:00:00Z" || w["started"] != "2024-05-01T11:59:00Z" ||
		w["started_raw"] != "2024-05-01 13:59:00 +0200" || w["heartbeat"] != nil {
		t.Errorf("worker times: %v", w)
	}
	var s stats.Snapshot
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if s.Totals.Processed != 42 || s.Totals.Pending != 2 || len(s.Queues) != 2 || len(s.Workers) != 2 {
		t.Errorf("snapshot: %+v", s)
	}
	if s.Queues[0].Name != "high" || s.Queues[0].Dequeued != 10 || len(s.Queues[0].Hosts) != 2 {
		t.Errorf("queue high: %+v", s.Queues[0])
	}
}

func TestStatsHostFilter(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	e.seed()
	code, out, errOut := e.stats(context.Background(), "--json", "--host", "web-2")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var s stats.Snapshot
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	if s.HostFilter != "web-2" || len(s.Workers) != 1 || s.Workers[0].ID != "web-2:22:*" || s.Queues[0].Dequeued != 3 {
		t.Errorf("filtered: %+v", s)
	}
}

// watch runs stats --watch until it has written n times, then cancels its
// context (what INT does) and returns the exit code and output.
func (e *cliEnv) watch(n int, args ...string) (int, string) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errOut := newSyncBuffer(), newSyncBuffer()
	done := make(chan int, 1)
	go func() {
		done <- runCommand(ctx, statsCommand(), append(e.redisArgs(), append([]string{"--watch", "--every", "0.05"}, args...)...), out, errOut)
	}()
	deadline := time.After(20 * time.Second)
	for seen := 0; seen < n; seen++ {
		select {
		case <-out.writes:
		case code := <-done:
			e.t.Fatalf("watch returned %d after %d writes: %s", code, seen, errOut.String())
		case <-deadline:
			e.t.Fatalf("watch wrote %d times in 20s, want %d", seen, n)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			e.t.Errorf("stderr: %s", errOut.String())
		}
		return code, out.String()
	case <-time.After(20 * time.Second):
		e.t.Fatal("watch did not return after its context was cancelled")
		return 0, ""
	}
}

// Each refresh draws the report again; off a terminal (here a buffer) it
// writes no screen-clearing codes, which would litter a file or a pipe.
func TestStatsWatchRedraws(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	e.seed()
	code, out := e.watch(3)
	if code != ExitOK {
		t.Fatalf("exit %d after interrupt, want 0", code)
	}
	if n := strings.Count(out, "QUEUES"); n < 3 {
		t.Errorf("%d reports, want at least 3", n)
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("escape codes off a terminal:\n%q", out)
	}
}

func TestStatsWatchJSON(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	e.seed()
	code, out := e.watch(2, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d, want 0", code)
	}
	if strings.Contains(out, clearScreen) {
		t.Error("--json --watch must print JSON documents only")
	}
	dec := json.NewDecoder(strings.NewReader(out))
	docs := 0
	for {
		var s stats.Snapshot
		err := dec.Decode(&s)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("document %d: %v", docs+1, err)
		}
		if s.Totals.Processed != 42 {
			t.Errorf("document %d: processed %d", docs+1, s.Totals.Processed)
		}
		docs++
	}
	if docs < 2 {
		t.Errorf("%d JSON documents, want at least 2", docs)
	}
}

// TestStatsWatchRedisDown keeps refreshing while Redis is unreachable,
// showing the error, and still exits 0 when interrupted.
func TestStatsWatchRedisDown(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errOut := newSyncBuffer(), newSyncBuffer()
	done := make(chan int, 1)
	go func() {
		done <- runCommand(ctx, statsCommand(), []string{"--redis", closedAddr(t), "--namespace", e.ns, "--watch", "--every", "0.05"}, out, errOut)
	}()
	for range 2 {
		select {
		case <-out.writes:
		case <-time.After(20 * time.Second):
			t.Fatal("no refresh while Redis is down")
		}
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("exit %d, want 0", code)
	}
	if !strings.Contains(out.String(), "resque-go stats: ") {
		t.Errorf("the error is not shown:\n%s", out.String())
	}
}

func TestStatsRedisDown(t *testing.T) {
	t.Parallel()
	out, errOut := newSyncBuffer(), newSyncBuffer()
	code := runCommand(context.Background(), statsCommand(), []string{"--redis", closedAddr(t)}, out, errOut)
	if code != ExitFailure {
		t.Errorf("exit %d, want %d: %s", code, ExitFailure, errOut.String())
	}
}

func TestStatsUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"extra"},
		{"--watch", "--every", "0"},
		{"--every", "soon"},
		{"--every", "-1"},
		{"--redis", "http://example.invalid"},
		{"--log-format", "xml"},
		{"--no-such-flag"},
	} {
		out, errOut := newSyncBuffer(), newSyncBuffer()
		if code := runCommand(context.Background(), statsCommand(), args, out, errOut); code != ExitUsage {
			t.Errorf("stats %q: exit %d, want %d (%s)", args, code, ExitUsage, errOut.String())
		}
	}
}

// closedAddr is a local address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return "127.0.0.1:" + strconv.Itoa(port)
}
