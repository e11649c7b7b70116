package node_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

// Bad values get the one line resque-go work prints for them.
func TestValidateMessages(t *testing.T) {
	t.Parallel()
	ok := node.Config{Queues: "a"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a config with only queues: %v", err)
	}
	for _, tc := range []struct {
		set  func(*node.Config)
		want string
	}{
		{func(c *node.Config) { c.Queues = "" }, "no queues: give --queues high,low (or QUEUE=high,low)"},
		{func(c *node.Config) { c.Queues = "a,[b" }, "unmatched ["},
		{func(c *node.Config) { c.Concurrency = 4097 }, "--concurrency 4097: want 1 to 4096"},
		{func(c *node.Config) { c.Concurrency = -1 }, "--concurrency -1: want 1 to 4096"},
		{func(c *node.Config) { c.Interval = "soon" }, `--interval "soon": want seconds (5, 0.5) or a duration (250ms, 2m)`},
		{func(c *node.Config) { c.JobTimeout = "-1" }, `--timeout "-1": must not be negative`},
		{func(c *node.Config) { c.TermTimeout = "NaN" }, `--term-timeout "NaN": want seconds`},
		{func(c *node.Config) { c.HeartbeatInterval = "0" }, `--heartbeat-interval "0": want 1 to 60 seconds (heartbeats are stored to the second; Ruby Resque prunes a worker whose heartbeat is 300 s old)`},
		{func(c *node.Config) { c.HeartbeatInterval = "2m" }, `--heartbeat-interval "2m": want 1 to 60 seconds`},
		{func(c *node.Config) { c.Redis.URL = "http://x" }, "bad redis url"},
		{func(c *node.Config) { c.LogLevel = "loud" }, `--log-level "loud": want debug, info, warn or error`},
		{func(c *node.Config) { c.LogFormat = "xml" }, `--log-format "xml": want console or json`},
		{func(c *node.Config) { c.FailRetries = -2 }, "--fail-retries -2: want 1 or more (1 never retries)"},
		{func(c *node.Config) { c.RetryBackoff = "exp" }, `--retry-backoff: backoff "exp": want none, fixed:30s or exp:BASE[:MAX[:JITTER]]`},
		{func(c *node.Config) { c.RetryBackoff = "exp:1s:1m:2" }, `--retry-backoff: backoff "exp:1s:1m:2": jitter must be between 0 and 1`},
		{func(c *node.Config) { c.ClassRetry = []string{"Mail"} }, `--class-retry "Mail": want 'Class=ATTEMPTS[:BACKOFF]'`},
		{func(c *node.Config) { c.ClassRetry = []string{"Mail=0"} }, `--class-retry "Mail=0": attempts "0" is not a whole number >= 1`},
		{func(c *node.Config) { c.ClassRetry = []string{"Mail=2:soon"} }, `--class-retry "Mail=2:soon": backoff "soon"`},
		{func(c *node.Config) { c.HTTPConnectTimeout = "x" }, `--http-connect-timeout "x"`},
		{func(c *node.Config) { c.HTTPTimeout = "-3" }, `--http-timeout "-3": must not be negative`},
		{func(c *node.Config) { c.Exec = []string{"nocommand"} }, `--exec "nocommand": want 'Class=...' or '*=...'`},
		{func(c *node.Config) { c.HTTP = []string{"A=ftp://x"} }, `--http "A=ftp://x": the URL must start with http:// or https://`},
		{func(c *node.Config) { c.HTTP = []string{"=http://x"} }, `--http "=http://x": want 'Class=...' or '*=...'`},
		{func(c *node.Config) { c.HTTP = []string{"A=http://x/?s={sourceId}"} }, `--http "A=http://x/?s={sourceId}": {sourceId} may stand only in the URL's path`},
		{func(c *node.Config) { c.SupervisorPID = -1 }, "supervisor_pid -1"},
	} {
		cfg := ok
		tc.set(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) && !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v\nwant %q", cfg, err, tc.want)
		}
		if !errors.Is(err, node.ErrConfig) {
			t.Errorf("%v does not match ErrConfig", err)
		}
		if _, nerr := node.New(cfg, nil); nerr == nil || nerr.Error() != err.Error() {
			t.Errorf("New: %v, want Validate's %v", nerr, err)
		}
	}
	// Zero means the default, including the settings work refuses as 0.
	for _, cfg := range []node.Config{{Queues: "a", Concurrency: 0, FailRetries: 0, MaxRecoveries: 0, HeartbeatInterval: "", LogLevel: "", LogFormat: ""},
		{Queues: "a", Concurrency: 4096, MaxRecoveries: -1, HeartbeatInterval: "60", Interval: "0", TermTimeout: "0", RetryBackoff: "none", LogLevel: "WARN"}} {
		if err := cfg.Validate(); err != nil {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}

// The JSON form has stable snake_case names: a pool manager and its child
// may be different builds during an upgrade.
func TestConfigJSONNames(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := (node.Config{}).Encode(&b); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	var names []string
	for k := range m {
		names = append(names, k)
	}
	want := []string{"class_retry", "concurrency", "dirty_exit_on_term", "exec", "fail_retries", "fork", "graceful_term",
		"heartbeat_interval", "hostname", "http", "http_connect_timeout", "http_timeout", "http_token", "interval",
		"job_timeout", "log_format", "log_level", "max_recoveries", "metrics_addr", "no_mover", "polling", "queues",
		"redis", "retry_backoff", "ruby_prune", "supervisor_pid", "term_timeout"}
	if !sameSet(names, want) {
		t.Errorf("JSON names = %q\nwant %q", names, want)
	}
	if r := m["redis"].(map[string]any); len(r) != 2 || r["url"] != "" || r["namespace"] != "" {
		t.Errorf("redis = %v", r)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]bool{}
	for _, x := range a {
		seen[x] = true
	}
	for _, x := range b {
		if !seen[x] {
			return false
		}
	}
	return true
}

// Decode reads what Encode writes, and refuses unknown fields and trailing
// values.
func TestDecode(t *testing.T) {
	t.Parallel()
	in := node.Config{Redis: node.Redis{URL: "redis://:pw@h:1/2", Namespace: "ns"}, Queues: "a,b", Concurrency: 3,
		ClassRetry: []string{"A=2"}, Exec: []string{"*=true"}, NoMover: true, MaxRecoveries: -1, Interval: "0.5"}
	var b bytes.Buffer
	if err := in.Encode(&b); err != nil {
		t.Fatal(err)
	}
	out, err := node.Decode(&b)
	if err != nil || !reflect.DeepEqual(in, out) {
		t.Errorf("round trip: %+v %v", out, err)
	}
	for text, want := range map[string]string{
		`{"queues":"a","queus":"b"}`: `node config: json: unknown field "queus"`,
		`{"queues":"a"} {}`:          "node config: more than one JSON value",
		`{"concurrency":"2"}`:        "node config: json: cannot unmarshal string",
		``:                           "node config: EOF",
	} {
		_, err := node.Decode(strings.NewReader(text))
		if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, node.ErrConfig) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

// AddHandlers registers Exec and HTTP handlers ("*" as the fallback).
func TestAddHandlers(t *testing.T) {
	t.Parallel()
	reg := worker.NewRegistry()
	if err := (node.Config{Exec: []string{"A=true"}, HTTP: []string{"*=http://127.0.0.1:1/x"}}).AddHandlers(reg); err != nil {
		t.Fatal(err)
	}
	if reg.Empty() {
		t.Error("no handler registered")
	}
	if err := (node.Config{Exec: []string{"A="}}).AddHandlers(worker.NewRegistry()); err == nil || err.Error() != `--exec "A=": want 'Class=...' or '*=...'` {
		t.Errorf("bad spec: %v", err)
	}
}

// Fork needs the job process command.
func TestForkNeedsCommand(t *testing.T) {
	t.Parallel()
	_, err := node.New(node.Config{Queues: "a", Fork: true}, nil)
	if err == nil || !strings.Contains(err.Error(), "WithFork") {
		t.Errorf("New = %v", err)
	}
	n, err := node.New(node.Config{Queues: "a", Fork: true}, nil, node.WithFork(&worker.ForkConfig{Command: []string{"true"}}))
	if err != nil {
		t.Fatal(err)
	}
	n.Stop()
}
