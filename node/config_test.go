package node_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

// Bad values get one line that names the Config field (resque-go work
// says the flag instead).
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
		{func(c *node.Config) { c.Queues = "" }, `node: Config.Queues: none given: name the queues to work, in priority order ("high,low")`},
		{func(c *node.Config) { c.Queues = "a,[b" }, "unmatched ["},
		{func(c *node.Config) { c.Concurrency = 4097 }, "node: Config.Concurrency 4097: want 1 to 4096"},
		{func(c *node.Config) { c.Concurrency = -1 }, "node: Config.Concurrency -1: want 1 to 4096"},
		{func(c *node.Config) { c.Interval = -time.Second }, `node: Config.Interval -1s: must not be negative`},
		{func(c *node.Config) { c.Drain, c.Interval = true, time.Second }, `node: Config.Drain works until the queues are empty: it takes no Config.Interval (1s)`},
		{func(c *node.Config) { c.JobTimeout = -1 }, `node: Config.JobTimeout -1ns: must not be negative`},
		{func(c *node.Config) { c.HeartbeatInterval = 500 * time.Millisecond }, `node: Config.HeartbeatInterval 500ms: want 1 to 60 seconds (heartbeats are stored to the second; Ruby Resque prunes a worker whose heartbeat is 300 s old)`},
		{func(c *node.Config) { c.HeartbeatInterval = 2 * time.Minute }, `node: Config.HeartbeatInterval 2m0s: want 1 to 60 seconds`},
		{func(c *node.Config) { c.Redis.URL = "http://x" }, "bad redis url"},
		{func(c *node.Config) { c.LogLevel = "loud" }, `node: Config.LogLevel "loud": want debug, info, warn or error`},
		{func(c *node.Config) { c.LogFormat = "xml" }, `node: Config.LogFormat "xml": want console or json`},
		{func(c *node.Config) { c.FailRetries = -2 }, "node: Config.FailRetries -2: want 1 or more (1 never retries)"},
		{func(c *node.Config) { c.RetryBackoff = "exp" }, `node: Config.RetryBackoff: backoff "exp": want none, fixed:30s or exp:BASE[:MAX[:JITTER]]`},
		{func(c *node.Config) { c.RetryBackoff = "exp:1s:1m:2" }, `node: Config.RetryBackoff: backoff "exp:1s:1m:2": jitter must be between 0 and 1`},
		{func(c *node.Config) { c.ClassRetry = []string{"Mail"} }, `node: Config.ClassRetry "Mail": want 'Class=ATTEMPTS[:BACKOFF]'`},
		{func(c *node.Config) { c.ClassRetry = []string{"Mail=0"} }, `node: Config.ClassRetry "Mail=0": attempts "0" is not a whole number >= 1`},
		{func(c *node.Config) { c.ClassRetry = []string{"Mail=2:soon"} }, `node: Config.ClassRetry "Mail=2:soon": backoff "soon"`},
		{func(c *node.Config) { c.HTTPConnectTimeout = -3 * time.Second }, `node: Config.HTTPConnectTimeout -3s: must not be negative`},
		{func(c *node.Config) { c.HTTPTimeout = -3 * time.Second }, `node: Config.HTTPTimeout -3s: must not be negative`},
		{func(c *node.Config) { c.Exec = []string{"nocommand"} }, `node: Config.Exec "nocommand": want 'Class=...' or '*=...'`},
		{func(c *node.Config) { c.HTTP = []string{"A=ftp://x"} }, `node: Config.HTTP "A=ftp://x": the URL must start with http:// or https://`},
		{func(c *node.Config) { c.HTTP = []string{"=http://x"} }, `node: Config.HTTP "=http://x": want 'Class=...' or '*=...'`},
		{func(c *node.Config) { c.HTTP = []string{"A=http://x/?s={sourceId}"} }, `node: Config.HTTP "A=http://x/?s={sourceId}": {sourceId} may stand only in the URL's path`},
		{func(c *node.Config) { c.SupervisorPID = -1 }, "node: Config.SupervisorPID -1: want a pid, or 0 for none"},
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
	for _, cfg := range []node.Config{{Queues: "a", Concurrency: 0, FailRetries: 0, MaxRecoveries: 0, HeartbeatInterval: 0, LogLevel: "", LogFormat: ""},
		{Queues: "a", Concurrency: 4096, MaxRecoveries: -1, HeartbeatInterval: time.Minute, Drain: true, TermTimeout: -1, RetryBackoff: "none", LogLevel: "WARN"}} {
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
		ClassRetry: []string{"A=2"}, Exec: []string{"*=true"}, NoMover: true, MaxRecoveries: -1, Interval: 500 * time.Millisecond}
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
	if err := (node.Config{Exec: []string{"A="}}).AddHandlers(worker.NewRegistry()); err == nil || err.Error() != `node: Config.Exec "A=": want 'Class=...' or '*=...'` {
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

// Durations are time.Duration in Go and strings in JSON: a Go duration
// ("30s") as Encode writes it, or seconds ("5", "0.5") as earlier releases
// and work's flags write them; "0" keeps its old meanings (interval: Drain,
// term_timeout: at once).
func TestConfigJSONDurations(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	in := node.Config{Queues: "a", Interval: 30 * time.Second, JobTimeout: 1500 * time.Millisecond, TermTimeout: -1}
	if err := in.Encode(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"interval":"30s"`, `"job_timeout":"1.5s"`, `"term_timeout":"0"`, `"heartbeat_interval":""`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Encode = %s\nwant %s in it", b.String(), want)
		}
	}
	for text, want := range map[string]node.Config{
		`{"queues":"a","interval":"5","heartbeat_interval":"2.5","job_timeout":"250ms"}`: {Queues: "a", Interval: 5 * time.Second,
			HeartbeatInterval: 2500 * time.Millisecond, JobTimeout: 250 * time.Millisecond},
		`{"queues":"a","interval":"0","term_timeout":"0"}`:                 {Queues: "a", Drain: true, TermTimeout: -1},
		`{"queues":"a","interval":"","term_timeout":"","http_timeout":""}`: {Queues: "a"},
		`{"queues":"a","http_connect_timeout":"1m","http_timeout":"90"}`:   {Queues: "a", HTTPConnectTimeout: time.Minute, HTTPTimeout: 90 * time.Second},
	} {
		got, err := node.Decode(strings.NewReader(text))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("Decode(%s) = %+v, %v\nwant %+v", text, got, err, want)
		}
	}
	for text, want := range map[string]string{
		`{"queues":"a","interval":"soon"}`:          `node config: interval "soon": want seconds`,
		`{"queues":"a","job_timeout":"-1"}`:         `node config: job_timeout "-1": must not be negative`,
		`{"queues":"a","heartbeat_interval":"0"}`:   `node config: heartbeat_interval "0": want 1 to 60 seconds`,
		`{"queues":"a","interval":"5","intervl":1}`: `node config: json: unknown field "intervl"`,
	} {
		_, err := node.Decode(strings.NewReader(text))
		if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, node.ErrConfig) {
			t.Errorf("Decode(%s) = %v, want %q", text, err, want)
		}
	}
}
