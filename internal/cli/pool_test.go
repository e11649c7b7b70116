package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

func (e *cliEnv) pool(args ...string) (code int, stdout, stderr string) {
	e.t.Helper()
	out, errOut := newSyncBuffer(), newSyncBuffer()
	code = runCommand(context.Background(), poolCommand(), args, out, errOut)
	return code, out.String(), errOut.String()
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pool.yml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// pool check prints the resolved config; flags win over the file.
func TestPoolCheck(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	cfg := writeConfig(t, "namespace: from-file\nqueues:\n  default:\n    worker_count: 2\n    blocking: false\n    interval: 3\n")
	code, out, errOut := e.pool("check", "--config", cfg, "--namespace", "from-flag", "--exec", "*=./run", "--kill-timeout", "3")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"(resque-v3 format)", "namespace:    from-flag", "kill_timeout: 3s",
		"default: 2 process(es) x 1 slot(s), polling every 3s", `"namespace":"from-flag"},"queues":"default",`, `"exec":["*=./run"]`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A bad file, a bad flag or an unknown subcommand: exit 2 with a message
// that names the problem.
func TestPoolUsageErrors(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	bad := writeConfig(t, "workers:\n  - queues: a\n    timeout: forever\n")
	good := writeConfig(t, "workers: {a: 1}\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", bad}, "pool.yml:3: workers[0].timeout: want seconds"},
		{[]string{"check", "--config", bad}, "pool.yml:3: workers[0].timeout"},
		{[]string{"check", "--config", good, "--log-level", "loud"}, "--log-level"},
		{[]string{"check", "--config", good, "--redis", "ftp://x"}, "--redis"},
		{[]string{"check", "--config", good, "--exec", "noclass"}, "--exec"},
		{[]string{"check", "--config", good, "--kill-timeout", "0"}, "--kill-timeout"},
		{[]string{"check", "--config", filepath.Join(t.TempDir(), "none.yml")}, "none.yml"},
		{[]string{"nonsense"}, "unknown command"},
	} {
		code, _, errOut := e.pool(tc.args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// pool status reads the records of every manager.
func TestPoolStatus(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := protocol.PoolRecord{PID: 42, Host: "web-1", Config: "/etc/pool.yml", Format: "resque-pool",
		StartedAt: started, UpdatedAt: started.Add(90 * time.Second), RefreshIntervalS: 5, State: "running", RSSBytes: 10 << 20,
		Children: []protocol.PoolChild{
			{Slot: 1, Queues: "high,low", PID: 43, State: "running", StartedAt: &started, UptimeS: 90, RSSBytes: 20 << 20, CPUPercent: 1.5},
			{Slot: 2, Queues: "mail", State: "crashloop", Restarts: 7, LastExit: "exit status 1"},
		}}
	v, err := protocol.EncodePoolRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.client.SetPoolRecord(context.Background(), "web-1", 42, v, time.Minute); err != nil {
		t.Fatal(err)
	}
	e.do("SET", e.client.Keys().PoolManager("web-2", 7), "not json")

	code, out, errOut := e.pool(append([]string{"status"}, e.redisArgs()...)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"web-1:42", "/etc/pool.yml", "resque-pool", "1/2 running", "high,low", "20.0 MiB", "1m30s",
		"crashloop", "exit status 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "web-2:7") {
		t.Errorf("the unreadable record is not reported: %q", errOut)
	}

	code, out, errOut = e.pool(append([]string{"status", "--json", "--host", "web-1"}, e.redisArgs()...)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Pools []map[string]any `json:"items"`
		Total int
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Pools) != 1 || doc.Total != 1 {
		t.Fatalf("json %v:\n%s", err, out)
	}
	p := doc.Pools[0]
	for _, f := range []string{"pid", "host", "config", "format", "started_at", "updated_at", "refresh_interval_s", "state", "rss_bytes", "cpu_percent", "children"} {
		if _, ok := p[f]; !ok {
			t.Errorf("record lacks %q: %v", f, p)
		}
	}
	child := p["children"].([]any)[1].(map[string]any)
	for f, want := range map[string]any{"slot": 2.0, "queues": "mail", "pid": 0.0, "state": "crashloop", "restarts": 7.0,
		"started_at": nil, "uptime_s": 0.0, "restart_at": nil, "last_exit": "exit status 1", "rss_bytes": 0.0, "cpu_percent": 0.0} {
		if got, ok := child[f]; !ok || got != want {
			t.Errorf("child %s = %v, want %v", f, got, want)
		}
	}

	code, out, _ = e.pool("status", "--redis", os.Getenv(redisEnv), "--namespace", e.ns+"-empty")
	if code != ExitOK || !strings.Contains(out, "no pool manager is running") {
		t.Errorf("empty namespace: exit %d\n%s", code, out)
	}
}

// -c means --concurrency to work; pool refuses it and says to use --config
// (it used to be --config's alias).
func TestPoolShortConfigRefused(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	cfg := writeConfig(t, "workers: {a: 1}\n")
	for _, args := range [][]string{{"-c", cfg}, {"check", "-c", cfg}, {"check", "-c"}, {"-c"}} {
		code, _, errOut := e.pool(args...)
		if code != ExitUsage || !strings.Contains(errOut, "use --config") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and \"use --config\"", args, code, errOut)
		}
	}
	if code, out, errOut := e.pool("check", "--config", cfg); code != ExitOK || !strings.Contains(out, "a: 1 process(es)") {
		t.Errorf("--config: exit %d %s%s", code, out, errOut)
	}
}

// The real resque-v3 config file: its redis mapping is used unless --redis
// (or REDIS_URL) is given, and what does not apply is one warning.
func TestPoolCheckResqueV3File(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	if os.Getenv("REDIS_URL") != "" || os.Getenv("REDIS_BACKEND") != "" {
		t.Skip("REDIS_URL or REDIS_BACKEND is set: it wins over the file")
	}
	file := filepath.Join("..", "..", "pool", "testdata", "resque-v3.yml")
	code, out, errOut := e.pool("check", "--config", file)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"(resque-v3 format)", "redis:        redis://redis.internal:6380", `"url":"redis://redis.internal:6380"`,
		"default: 4 process(es)", `"fail_retries":5`, `"log_level":"warn"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "resque-go: warning: ") ||
		!strings.Contains(errOut, "log.path, log.application_name, log.system_name, log.extra_prefix, log.context_prefix, log.logstash_version, statsd, task_include_path") {
		t.Errorf("want one warning naming the ignored settings, got %q", errOut)
	}
	code, out, _ = e.pool("check", "--config", file, "--redis", "redis://127.0.0.1:6390/1")
	if code != ExitOK || !strings.Contains(out, "redis:        redis://127.0.0.1:6390/1") {
		t.Errorf("--redis does not win over the file: exit %d\n%s", code, out)
	}
}

// pool check says when REDIS_URL (or a flag) replaced the file's redis or
// namespace, and which one did. Not parallel: it sets the environment.
func TestPoolCheckSaysWhatOverridesTheFile(t *testing.T) {
	e := newCLIEnv(t)
	file := filepath.Join("..", "..", "pool", "testdata", "resque-v3.yml")
	t.Setenv("REDIS_BACKEND", "")
	os.Unsetenv("REDIS_BACKEND")
	t.Setenv("REDIS_URL", "redis://:secret@127.0.0.1:6390/1")
	code, out, errOut := e.pool("check", "--config", file)
	if code != ExitOK || !strings.Contains(out, "\nredis: redis://:xxxxx@127.0.0.1:6390/1 from REDIS_URL, not the file's redis://redis.internal:6380\n") ||
		strings.Contains(out, "secret") {
		t.Errorf("REDIS_URL: exit %d %s\n%s", code, errOut, out)
	}
	code, out, errOut = e.pool("check", "--config", file, "--redis", "redis://127.0.0.1:6391")
	if code != ExitOK || !strings.Contains(out, "\nredis: redis://127.0.0.1:6391 from --redis, not the file's redis://redis.internal:6380\n") {
		t.Errorf("--redis: exit %d %s\n%s", code, errOut, out)
	}
	os.Unsetenv("REDIS_URL") // t.Setenv restores it at the end
	code, out, _ = e.pool("check", "--config", writeConfig(t, "redis: redis://127.0.0.1:6392\nnamespace: app\nqueues:\n  default: 1\n"), "--namespace", "other")
	if code != ExitOK || strings.Contains(out, "not the file's redis") || !strings.Contains(out, "\nnamespace: other from --namespace, not the file's app\n") {
		t.Errorf("--namespace: exit %d\n%s", code, out)
	}
	// an empty variable (REDIS_URL= in a shell or a unit file) is no value:
	// the file's settings stand
	t.Setenv("REDIS_URL", "")
	t.Setenv("RESQUE_NAMESPACE", "")
	code, out, errOut = e.pool("check", "--config", writeConfig(t, "redis: redis://127.0.0.1:6392\nnamespace: app\nqueues:\n  default: 1\n"))
	if code != ExitOK || !strings.Contains(out, "redis:        redis://127.0.0.1:6392\n") || !strings.Contains(out, "namespace:    app\n") {
		t.Errorf("empty REDIS_URL and RESQUE_NAMESPACE: exit %d %s\n%s", code, errOut, out)
	}
}
