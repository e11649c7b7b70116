package poolrun

import (
	"context"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/failure"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/pool"
)

// workSettings sets every work setting a pool file has to something other
// than its default.
const workSettings = `
redis: redis://:pw@127.0.0.1:1/3
namespace: ns-all
log: {level: warn, format: json}
fail_retries: 5
term_timeout: 7
retry_backoff: exp:2s:10m:0.2
class_retry:
  MailJob: "5:fixed:30s"
  Archive: 2
max_recoveries: 0
heartbeat_interval: 2.5
mover: false
ruby_prune: yes
graceful_term: true
dirty_exit_on_term: true
events: true
events_max_len: 5000
events_max_age: 24h
limits: {Import: 5, "Import[args.0.tenant]": 2}
rates: {Mailer: 100/1m}
retention: {failed_max: 1000, failed_max_age: 30d, retries_max: 200, retries_max_age: 12h, archive: /var/log/trimmed.jsonl}
handlers:
  "*": {exec: "true"}
  Hook: {http: {url: "http://h/{sourceId}", token: tok, connect_timeout: 1.5, timeout: 9}}
`

// allSet is the node config of a child of workSettings and allSets,
// without SupervisorPID and MetricsAddr.
var allSet = node.Config{
	Redis:  node.Redis{URL: "redis://:pw@127.0.0.1:1/3", Namespace: "ns-all"},
	Queues: "a,b", Concurrency: 3, Hostname: "pool-test", Polling: true, Interval: 500 * time.Millisecond,
	HeartbeatInterval: 2500 * time.Millisecond, JobTimeout: time.Minute, TermTimeout: 7 * time.Second, GracefulTerm: true, DirtyExitOnTerm: true,
	MaxRecoveries: -1, RubyPrune: true, FailRetries: 5, RetryBackoff: "exp:2s:10m:0.2",
	ClassRetry: []string{"Archive=2", "MailJob=5:fixed:30s"}, NoMover: true, Fork: true,
	Exec: []string{"*=true"}, HTTP: []string{"Hook=http://h/{sourceId}"}, HTTPToken: "tok",
	HTTPConnectTimeout: 1500 * time.Millisecond, HTTPTimeout: 9 * time.Second, LogLevel: "warn", LogFormat: "json", Serial: []string{"a", "b"},
	Retention: failure.Retention{FailedMax: 1000, FailedMaxAge: 30 * 24 * time.Hour, RetriesMax: 200, RetriesMaxAge: 12 * time.Hour,
		Archive: "/var/log/trimmed.jsonl"},
	MaxJobs: 1000, MaxRSS: 512 << 20, MaxAge: 6 * time.Hour,
	Events: true, EventsMaxLen: 5000, EventsMaxAge: 24 * time.Hour,
	Limits: []string{"Import=5", "Import[args.0.tenant]=2"}, Rates: []string{"Mailer=100/1m"},
}

const allSets = "workers:\n  - {queues: \"a,b\", processes: 1, concurrency: 3, polling: true, interval: 0.5, fork: true, timeout: 60, serial: true,\n      max_jobs: 1000, max_rss: 512MB, max_age: 6h}\n"

// Every setting of the file becomes the node config field of the same
// meaning, in both formats that take work settings.
func TestChildConfigHasEverySetting(t *testing.T) {
	for _, sets := range []string{allSets, "queues: {\"a,b\": {worker_count: 1, blocking: false, interval: 0.5, serial: true}}\n"} {
		cfg := parse(t, "hostname: pool-test\n"+workSettings+sets, pool.LoadOptions{})
		got := cfg.Child(cfg.Sets[0])
		want := allSet
		if !strings.HasPrefix(sets, "workers") { // resque-v3 sets have no concurrency, fork or timeout
			want.Concurrency, want.Fork, want.JobTimeout = 1, false, 0
			want.MaxJobs, want.MaxRSS, want.MaxAge = 0, 0, 0
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%schild = %+v\nwant    %+v", sets, got, want)
		}
	}
	// Left out, each setting is the node's default (its zero value).
	cfg := parse(t, "workers: {a: 1}\n", pool.LoadOptions{})
	if got, want := cfg.Child(cfg.Sets[0]), (node.Config{Queues: "a", Concurrency: 1, Interval: 5 * time.Second}); !reflect.DeepEqual(got, want) {
		t.Errorf("defaults: %+v", got)
	}
}

// zeroFields names the fields of v (recursively) that hold their zero
// value.
func zeroFields(v reflect.Value, prefix string) []string {
	var out []string
	for i := range v.NumField() {
		f, name := v.Field(i), prefix+v.Type().Field(i).Name
		if f.Kind() == reflect.Struct {
			out = append(out, zeroFields(f, name+".")...)
		} else if f.IsZero() {
			out = append(out, name)
		}
	}
	return out
}

// The children a supervisor starts get the node config of their file
// section whole, every field of it set (a field added to node.Config that
// a pool file cannot set fails here), on file descriptor 3: nothing of it
// is on their command line.
func TestSupervisorPassesEverySetting(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().(*net.TCPAddr)
	l.Close()
	// a bare port: the manager and its children listen on 127.0.0.1
	h := newHarness(t, workSettings+allSets, func(p *Params) {
		p.MetricsAddr, p.MetricsToken = ":"+strconv.Itoa(addr.Port), "t0ken"
	})
	h.sup.Start(context.Background())
	evs := h.waitFor("child", func(evs []pool.Event) bool { return count(evs, pool.EventStarted, "a,b") == 1 })
	pid := pidsOf(evs, pool.EventStarted, "a,b")[0]
	h.ready(pid)
	got := h.childConfig(pid)
	want := allSet
	want.SupervisorPID = os.Getpid()
	want.MetricsAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(addr.Port+1))
	want.MetricsToken = "t0ken"
	if !reflect.DeepEqual(got, want) {
		t.Errorf("child config = %+v\nwant           %+v", got, want)
	}
	// The TLS and Sentinel settings come from the manager's flags, not the
	// file (TestChildGetsManagersRedisTLS); Mass excludes Queues and comes
	// from the mass-queue section (TestParseMassSection); a pool's children
	// never Drain (they would stop and be started again).
	var zero []string
	for _, f := range zeroFields(reflect.ValueOf(got), "") {
		if !strings.HasPrefix(f, "Redis.TLS") && f != "Redis.SentinelPassword" && f != "Mass" && f != "Drain" {
			zero = append(zero, f)
		}
	}
	if len(zero) > 0 {
		t.Errorf("settings the pool does not pass: %v", zero)
	}
	if log := h.childLog(pid); !strings.HasPrefix(log, "args work --node-config-fd 3\n") || strings.Contains(log, "config error") {
		t.Errorf("child log:\n%s", log)
	}
	h.sup.Shutdown()
}

func TestWorkSettingsErrors(t *testing.T) {
	for text, want := range map[string]string{
		"retry_backoff: exp":              `pool.yml:1: retry_backoff: backoff "exp": want none, fixed:30s or exp:BASE[:MAX[:JITTER]]`,
		"retry_backoff: fixed:soon":       `pool.yml:1: retry_backoff: backoff "fixed:soon"`,
		"retry_backoff: exp:1s:1m:2":      `pool.yml:1: retry_backoff: backoff "exp:1s:1m:2"`,
		"class_retry: {A: 0}":             `pool.yml:1: class_retry.A: "0": want ATTEMPTS[:BACKOFF]`,
		"class_retry: {A: '3:sometimes'}": `pool.yml:1: class_retry.A: backoff "sometimes"`,
		"class_retry: [A]":                `pool.yml:1: class_retry: want a mapping`,
		"max_recoveries: -1":              "pool.yml:1: max_recoveries: -1 is out of range",
		"heartbeat_interval: 0.5":         "pool.yml:1: heartbeat_interval: must be at least 1s",
		"heartbeat_interval: 2m":          "pool.yml:1: heartbeat_interval: must be at most 1m0s",
		"mover: sometimes":                `pool.yml:1: mover: want true or false, got "sometimes"`,
		"graceful_terms: true":            `pool.yml:1: unknown key "graceful_terms" (did you mean "graceful_term"?)`,
	} {
		_, err := pool.Parse("pool.yml", []byte(text+"\nworkers: {a: 1}\n"), pool.LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v\nwant %q", text, err, want)
		}
	}
}

func parse(t *testing.T, text string, opt pool.LoadOptions) *pool.Config {
	t.Helper()
	cfg, err := pool.Parse("pool.yml", []byte(text), opt)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return cfg
}
