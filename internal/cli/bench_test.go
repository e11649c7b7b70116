package cli

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// Bad bench settings are one line, exit 2, before anything starts.
func TestBenchUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenarios", "loop,nope"}, `unknown scenario "nope"`},
		{[]string{"--exec", "Other=true"}, "the bench's jobs are of class Noop"},
		{[]string{"--jobs", "0"}, "--jobs 0: want at least 1"},
		{[]string{"--sources", "0"}, "--sources 0: want at least 1"},
		{[]string{"--latency-rate", "0"}, "--latency-rate 0"},
		{[]string{"--idle", "soon"}, `--idle "soon"`},
		{[]string{"extra"}, "bench takes no arguments"},
		{[]string{"--redis", "redis://h:99999"}, "port from 1 to 65535"},
	} {
		out, errOut := newSyncBuffer(), newSyncBuffer()
		code := runCommand(context.Background(), benchCommand(), append(tc.args, "--quiet"), out, errOut)
		if code != ExitUsage || !strings.Contains(errOut.String(), tc.want) || strings.Count(errOut.String(), "\n") > 2 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut.String(), tc.want)
		}
	}
}

// Without --redis and without redis-server on PATH: one line, exit 1.
func TestBenchWithoutRedisServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	out, errOut := newSyncBuffer(), newSyncBuffer()
	code := runCommand(context.Background(), benchCommand(), []string{"--scenarios", "loop", "--quiet"}, out, errOut)
	lines := strings.Split(strings.TrimRight(errOut.String(), "\n"), "\n")
	if code != ExitFailure || len(lines) != 1 || !strings.Contains(lines[0], "redis-server not found on PATH") {
		t.Errorf("exit %d, stderr %q; want exit 1 and one line about redis-server", code, errOut.String())
	}
}

// The scenarios that need no worker process run against a given Redis and
// print JSON (the test binary cannot be `resque-go bench worker`).
func TestBenchJSON(t *testing.T) {
	out, errOut := newSyncBuffer(), newSyncBuffer()
	code := runCommand(context.Background(), benchCommand(), []string{"--redis", os.Getenv(redisEnv), "--scenarios", "loop,latency",
		"--jobs", "100", "--runs", "1", "--latency-jobs", "10", "--latency-rate", "1000", "--latency-slots", "1", "--settle", "10ms", "--json", "--quiet"}, out, errOut)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep struct {
		Throughput []struct {
			Scenario string             `json:"scenario"`
			Median   map[string]float64 `json:"median"`
		} `json:"throughput"`
		Latency *struct {
			Median map[string]float64 `json:"median"`
		} `json:"latency"`
	}
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(rep.Throughput) != 1 || rep.Throughput[0].Scenario != "loop" || !(rep.Throughput[0].Median["redis_cpu_us_per_job"] > 0) {
		t.Errorf("throughput: %+v", rep.Throughput)
	}
	if rep.Latency == nil || !(rep.Latency.Median["p50_ms"] > 0) {
		t.Errorf("latency: %+v", rep.Latency)
	}
}
