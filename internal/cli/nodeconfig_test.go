package cli

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/node"
)

// A pool child's environment lacks every variable work reads as a
// setting, whatever its name (the one --help shows or an older one), and
// keeps the rest.
func TestChildEnvDropsWorkSettings(t *testing.T) {
	t.Parallel()
	settings := []string{"REDIS_URL", "REDIS_BACKEND", "RESQUE_NAMESPACE", "PREFIX", "QUEUE", "QUEUES", "COUNT", "RESQUE_CONCURRENCY",
		"INTERVAL", "RESQUE_POLLING", "RESQUE_HOSTNAME", "RESQUE_JOB_TIMEOUT", "RESQUE_TERM_TIMEOUT", "GRACEFUL_TERM",
		"RESQUE_DIRTY_EXIT_ON_TERM", "WORKER_HEARTBEAT_INTERVAL", "RESQUE_MAX_RECOVERIES", "RESQUE_FAIL_RETRIES", "FAIL_RETRIES",
		"RESQUE_RETRY_BACKOFF", "RESQUE_MOVER", "RESQUE_METRICS_ADDR", "RESQUE_METRICS_TOKEN", "RESQUE_RUBY_PRUNE", "RESQUE_SERIAL", "RESQUE_MASS", "RESQUE_FORK", "RESQUE_HTTP_TOKEN",
		"RESQUE_HTTP_CONNECT_TIMEOUT", "RESQUE_HTTP_TIMEOUT", "LOG_LEVEL", "LOG_FORMAT", "VERBOSE", "LOGGING", "VVERBOSE",
		"REDIS_TLS_CA_FILE", "REDIS_TLS_CERT_FILE", "REDIS_TLS_KEY_FILE", "REDIS_TLS_SERVER_NAME", "REDIS_TLS_INSECURE_SKIP_VERIFY",
		"REDIS_SENTINEL_PASSWORD", "RESQUE_FAILED_MAX", "RESQUE_FAILED_MAX_AGE", "RESQUE_RETRIES_MAX", "RESQUE_RETRIES_MAX_AGE",
		"RESQUE_FAILED_ARCHIVE", "RESQUE_EVENTS", "RESQUE_EVENTS_MAX_LEN", "RESQUE_EVENTS_MAX_AGE", "RESQUE_LIMITS", "RESQUE_RATES"}
	kept := []string{"PATH=/bin", "HOME=/home/x", "RAILS_ENV=production", "TZ=UTC", "NO_COLOR=1", "GOMAXPROCS=2", "RESQUE_POOL_CONFIG=p.yml", "QUEUE_X=1", "=odd"}
	var env []string
	for _, name := range settings {
		env = append(env, name+"=x")
	}
	env = append(env, kept...)
	if got := childEnv(env); !slices.Equal(got, kept) {
		t.Errorf("child env = %q\nwant %q", got, kept)
	}
	// Every setting variable is in the list above: a new flag's variable
	// must be added there (and to the README).
	for _, name := range workSettingVars() {
		if !slices.Contains(settings, name) {
			t.Errorf("work reads %s, which the test does not list", name)
		}
	}
}

// pipeFD returns the read end of a pipe holding text (a raw descriptor:
// work closes it).
func pipeFD(t *testing.T, text string) int {
	t.Helper()
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	syscall.CloseOnExec(p[0])
	syscall.CloseOnExec(p[1])
	if _, err := syscall.Write(p[1], []byte(text)); err != nil {
		t.Fatal(err)
	}
	syscall.Close(p[1])
	return p[0]
}

func (e *cliEnv) nodeConfig(queues string) node.Config {
	return node.Config{Redis: node.Redis{URL: os.Getenv(redisEnv), Namespace: e.ns}, Queues: queues, Concurrency: 2,
		HeartbeatInterval: 3 * time.Second, Exec: []string{"*=true"}, LogFormat: "json", Hostname: "fdhost"}
}

func encode(t *testing.T, cfg node.Config) string {
	t.Helper()
	var b bytes.Buffer
	if err := cfg.Encode(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// work --node-config-fd runs the config read there: its queues, slots and
// heartbeat interval.
func TestWorkNodeConfigFD(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	fd := pipeFD(t, encode(t, e.nodeConfig("fdq")))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errOut := newSyncBuffer(), newSyncBuffer()
	done := make(chan int, 1)
	go func() {
		done <- runCommand(ctx, workCmd(), []string{"--node-config-fd", strconv.Itoa(fd)}, out, errOut)
	}()
	waitFor(t, errOut, `"message":"worker started"`)
	v, err := e.client.Do(ctx, "SMEMBERS", e.client.Keys().Workers())
	if err != nil {
		t.Fatal(err)
	}
	ids := v.([]any)
	if len(ids) != 2 || !strings.HasPrefix(string(ids[0].([]byte)), "fdhost:") || !strings.HasSuffix(string(ids[0].([]byte)), ":fdq") {
		t.Errorf("workers = %q", ids)
	}
	if iv, _ := e.client.Do(ctx, "HGET", e.client.Keys().WorkerIntervals(), ids[0]); iv == nil || string(iv.([]byte)) != "3" {
		t.Errorf("heartbeat interval %v, want 3", iv)
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit %d: %s", code, errOut.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("work did not stop")
	}
}

// The config on the descriptor is every setting: a flag beside it, a
// config with an unknown field or a bad value is exit 2 with one line.
func TestWorkNodeConfigFDErrors(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	good := encode(t, e.nodeConfig("a"))
	bad := e.nodeConfig("a")
	bad.HeartbeatInterval = 90 * time.Second
	for _, tc := range []struct {
		text  string
		extra []string
		want  string
	}{
		{good, []string{"--queues", "b"}, "resque-go: --node-config-fd: the config read there is every setting; --queues (or its environment variable) is given too"},
		{good, []string{"--concurrency", "3"}, "resque-go: --node-config-fd: the config read there is every setting; --concurrency (or"},
		{`{"queues":"a","queus":"b"}`, nil, `resque-go: node config: json: unknown field "queus"`},
		{encode(t, bad), nil, `resque-go: --heartbeat-interval 1m30s: want 1 to 60 seconds`},
		{"", nil, "resque-go: node config: EOF"},
	} {
		fd := pipeFD(t, tc.text)
		out, errOut := newSyncBuffer(), newSyncBuffer()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		code := runCommand(ctx, workCmd(), append([]string{"--node-config-fd", strconv.Itoa(fd)}, tc.extra...), out, errOut)
		cancel()
		if code != ExitUsage || !strings.HasPrefix(errOut.String(), tc.want) || strings.Count(noHint(errOut.String()), "\n") != 1 {
			t.Errorf("%q %v: exit %d, stderr %q; want 2 and %q", tc.text, tc.extra, code, errOut.String(), tc.want)
		}
	}
}

// Work flags given as 0 or "" that node.Config reads as defaults are still
// refused, with work's messages.
func TestWorkExplicitZeroRefused(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-c", "0"}, "resque-go: --concurrency 0: want 1 to 4096"},
		{[]string{"--fail-retries", "0"}, "resque-go: --fail-retries 0: want 1 or more (1 never retries)"},
		{[]string{"--heartbeat-interval", ""}, `resque-go: --heartbeat-interval "": want 1 to 60 seconds`},
		{[]string{"--log-level", ""}, `resque-go: --log-level "": want debug, info, warn or error`},
		{[]string{"--log-format", ""}, `resque-go: --log-format "": want console or json`},
	} {
		out, errOut := newSyncBuffer(), newSyncBuffer()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a regression would run the worker
		code := runCommand(ctx, workCmd(), append(append(e.redisArgs(), "-q", "a"), tc.args...), out, errOut)
		cancel()
		if code != ExitUsage || !strings.HasPrefix(errOut.String(), tc.want) || strings.Count(noHint(errOut.String()), "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut.String(), tc.want)
		}
	}
}

// VERBOSE and VVERBOSE given to the pool lower its children's level in
// their node config (they no longer inherit the variables).
func TestPoolVerboseReachesChildren(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	cfg := writeConfig(t, "log: {level: error}\nworkers: {a: 1}\n")
	for flag, want := range map[string]string{"--verbose": `"log_level":"info"`, "--very-verbose": `"log_level":"debug"`} {
		code, out, errOut := e.pool("check", "--config", cfg, flag)
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("%s: exit %d, output lacks %s:\n%s%s", flag, code, want, out, errOut)
		}
	}
}
