package pool

import (
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/worksettings"
)

func parse(t *testing.T, text string, opt LoadOptions) *Config {
	t.Helper()
	cfg, err := Parse("pool.yml", []byte(text), opt)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return cfg
}

// sets keeps the fields of each set a test compares.
func sets(cfg *Config) []QueueSet {
	out := make([]QueueSet, len(cfg.Sets))
	for i, s := range cfg.Sets {
		s.Line = 0
		out[i] = s
	}
	return out
}

func TestParseResqueGoFormat(t *testing.T) {
	cfg := parse(t, `
redis: redis://:secret@127.0.0.1:6390/2
namespace: "resque-v3:"
hostname: web-1
log: {level: DEBUG, format: json}
fail_retries: 5
term_timeout: 2.5
kill_timeout: 30s
handlers:
  "*":
    exec: ./bin/run-job
  Archive:
    http:
      url: https://jobs.example.com/archive/{sourceId}
      token: t0k
      connect_timeout: 2
      timeout: 1m
workers:
  - queues: critical,high
    processes: 2
    concurrency: 4
  - queues: "low,*"
    polling: true
    interval: 500ms
    fork: true
    timeout: 90
`, LoadOptions{})
	if cfg.Format != FormatResqueGo || cfg.Redis != "redis://:secret@127.0.0.1:6390/2" || cfg.Namespace != "resque-v3" ||
		cfg.Hostname != "web-1" || cfg.LogLevel != "debug" || cfg.LogFormat != "json" || cfg.Work.FailRetries != 5 ||
		cfg.Work.TermTimeout != 2500*time.Millisecond || cfg.KillTimeout != 30*time.Second {
		t.Errorf("settings = %+v", cfg)
	}
	wantHandlers := []Handler{
		{Class: "*", Exec: "./bin/run-job", Line: 10},
		{Class: "Archive", HTTP: &HTTPEndpoint{URL: "https://jobs.example.com/archive/{sourceId}", Token: "t0k", ConnectTimeout: 2 * time.Second, Timeout: time.Minute}, Line: 12},
	}
	if !reflect.DeepEqual(cfg.Handlers, wantHandlers) {
		t.Errorf("handlers = %+v", cfg.Handlers)
	}
	want := []QueueSet{
		{Queues: "critical,high", Processes: 2, Concurrency: 4, Interval: DefaultInterval},
		{Queues: "low,*", Processes: 1, Concurrency: 1, Polling: true, Interval: 500 * time.Millisecond, Fork: true, Timeout: 90 * time.Second},
	}
	if got := sets(cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("sets = %+v\nwant %+v", got, want)
	}
	if cfg.Sets[0].Line != 19 || cfg.Sets[1].Line != 22 {
		t.Errorf("lines = %d, %d", cfg.Sets[0].Line, cfg.Sets[1].Line)
	}
	if cfg.Processes() != 3 {
		t.Errorf("Processes = %d", cfg.Processes())
	}
}

// The mapping form of the sets: queue list -> settings or a bare count.
func TestParseResqueGoMapForm(t *testing.T) {
	cfg := parse(t, `
workers:
  "high,low": 3
  mail:
    processes: 1
    blocking: false
    interval: 2
`, LoadOptions{})
	want := []QueueSet{
		{Queues: "high,low", Processes: 3, Concurrency: 1, Interval: DefaultInterval},
		{Queues: "mail", Processes: 1, Concurrency: 1, Polling: true, Interval: 2 * time.Second},
	}
	if got := sets(cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("sets = %+v", got)
	}
}

// resque-pool's README example, unchanged: top-level defaults, and an
// environment section merged over them.
func TestParseResquePoolFormat(t *testing.T) {
	const file = `
foo: 1
bar: 2
"foo,bar,baz": 1

production:
  "foo,bar,baz": 4
  bar: 0
staging:
  qux: 9
`
	tests := []struct {
		env  string
		want []QueueSet
	}{
		{"", []QueueSet{
			{Queues: "foo", Processes: 1, Concurrency: 1, Interval: DefaultInterval},
			{Queues: "bar", Processes: 2, Concurrency: 1, Interval: DefaultInterval},
			{Queues: "foo,bar,baz", Processes: 1, Concurrency: 1, Interval: DefaultInterval},
		}},
		{"production", []QueueSet{
			{Queues: "foo", Processes: 1, Concurrency: 1, Interval: DefaultInterval},
			{Queues: "foo,bar,baz", Processes: 4, Concurrency: 1, Interval: DefaultInterval},
		}},
		{"development", []QueueSet{ // no section: the defaults
			{Queues: "foo", Processes: 1, Concurrency: 1, Interval: DefaultInterval},
			{Queues: "bar", Processes: 2, Concurrency: 1, Interval: DefaultInterval},
			{Queues: "foo,bar,baz", Processes: 1, Concurrency: 1, Interval: DefaultInterval},
		}},
	}
	for _, tt := range tests {
		cfg := parse(t, file, LoadOptions{Environment: tt.env})
		if cfg.Format != FormatResquePool || cfg.Environment != tt.env {
			t.Errorf("%q: format %q env %q", tt.env, cfg.Format, cfg.Environment)
		}
		if got := sets(cfg); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: sets = %+v\nwant %+v", tt.env, got, tt.want)
		}
	}
	cfg := parse(t, file, LoadOptions{Environment: "production"})
	if cfg.Sets[1].Line != 7 {
		t.Errorf("the production count's line = %d, want 7", cfg.Sets[1].Line)
	}
}

func TestParseResqueV3Format(t *testing.T) {
	cfg := parse(t, `
queues:
  default:
    worker_count: 3
    blocking: true
    interval: 5
  reports:
    worker_count: 1
    blocking: false
    interval: 10
`, LoadOptions{})
	want := []QueueSet{
		{Queues: "default", Processes: 3, Concurrency: 1, Interval: 5 * time.Second},
		{Queues: "reports", Processes: 1, Concurrency: 1, Polling: true, Interval: 10 * time.Second},
	}
	if cfg.Format != FormatResqueV3 {
		t.Errorf("format = %q", cfg.Format)
	}
	if got := sets(cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("sets = %+v", got)
	}
}

// The commented example in the repository parses.
func TestExampleFileParses(t *testing.T) {
	cfg, err := Load(filepath.Join("..", "examples", "pool.yml"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Format != FormatResqueGo || cfg.Processes() == 0 || len(cfg.Handlers) == 0 {
		t.Errorf("example: %+v", cfg)
	}
}

// Every bad key or value is reported with file, line and key.
func TestParseErrorsNameFileLineAndKey(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"unknown top-level key", "redis: redis://x:1\nworkerz: 1\nworkers: []\n", []string{`pool.yml:2: unknown key "workerz" (did you mean "workers"?)`}},
		{"unknown set key", "workers:\n  - queues: a\n    proceses: 2\n", []string{`pool.yml:3: unknown key "proceses" in workers[0] (did you mean "processes"?)`}},
		{"bad count", "workers:\n  - queues: a\n    processes: many\n", []string{`pool.yml:3: workers[0].processes: want a whole number, got "many"`}},
		{"negative count", "workers:\n  a:\n    processes: -1\n", []string{"pool.yml:3: workers.a.processes: -1 is out of range"}},
		{"concurrency zero", "workers:\n  - queues: a\n    concurrency: 0\n", []string{"pool.yml:3: workers[0].concurrency: 0 is out of range"}},
		{"bad bool", "workers:\n  - queues: a\n    fork: maybe\n", []string{`pool.yml:3: workers[0].fork: want true or false, got "maybe"`}},
		{"bad interval", "workers:\n  - queues: a\n    polling: true\n    interval: soon\n", []string{`pool.yml:4: workers[0].interval: want seconds`}},
		{"negative timeout", "workers:\n  - queues: a\n    timeout: -5\n", []string{"pool.yml:3: workers[0].timeout: must not be negative"}},
		{"missing queues", "workers:\n  - processes: 2\n", []string{"pool.yml:2: workers[0].queues: missing"}},
		{"bad queue list", "workers:\n  - queues: \"a,[b\"\n", []string{`pool.yml:2: workers[0].queues: bad queue list "a,[b"`}},
		{"blocking contradicts polling", "workers:\n  - queues: a\n    blocking: true\n    polling: true\n", []string{"pool.yml:4: workers[0].polling: contradicts blocking"}},
		{"duplicate key", "workers:\n  a: 1\n  a: 2\n", []string{"pool.yml:3: workers.a: defined twice"}},
		{"bad redis", "redis: ftp://x\nworkers: []\n", []string{"pool.yml:1: redis: ", `"ftp://x"`, "scheme"}},
		{"bad log level", "log:\n  level: loud\nworkers: []\n", []string{`pool.yml:2: log.level: "loud": want debug`}},
		{"unknown log key", "log:\n  colour: red\nworkers: []\n", []string{`pool.yml:2: unknown key "colour" in log (known here: level, format)`}},
		{"fail_retries zero", "fail_retries: 0\nworkers: []\n", []string{"pool.yml:1: fail_retries: 0 is out of range"}},
		{"handler with both", "handlers:\n  A:\n    exec: x\n    http: http://h\nworkers: []\n", []string{"pool.yml:2: handlers.A: want exactly one of exec or http"}},
		{"handler unknown key", "handlers:\n  A:\n    run: x\nworkers: []\n", []string{`pool.yml:3: unknown key "run" in handlers.A`}},
		{"http url scheme", "handlers:\n  A:\n    http:\n      url: ftp://h\nworkers: []\n", []string{`pool.yml:4: handlers.A.http.url: "ftp://h": the URL must start with http:// or https://`}},
		{"http timeout", "handlers:\n  A:\n    http:\n      url: http://h\n      timeout: 0\nworkers: []\n", []string{"pool.yml:5: handlers.A.http.timeout: must be at least 1ms"}},
		{"http tokens differ", "handlers:\n  A:\n    http: {url: 'http://a', token: x}\n  B:\n    http: {url: 'http://b', token: y}\nworkers: []\n", []string{"pool.yml:4: handlers.B.http.token: differs from handlers.A.http.token"}},
		{"queues key in map form", "workers:\n  a:\n    queues: b\n", []string{`pool.yml:3: workers.a.queues: the queues are the key of this set`}},
		{"processes and worker_count", "queues:\n  a:\n    worker_count: 1\n    processes: 2\n", []string{"pool.yml:4: queues.a.processes: worker_count is already given"}},
		{"v3 bad blocking", "queues:\n  a:\n    worker_count: 2\n    blocking: sometimes\n", []string{`pool.yml:4: queues.a.blocking: want true or false`}},
		{"v3 unknown key", "queues:\n  a:\n    workers: 2\n", []string{`pool.yml:3: unknown key "workers" in queues.a`}},
		{"resque-pool bad count", "foo: 1\nbar: lots\n", []string{`pool.yml:2: bar: want a whole number, got "lots"`}},
		{"resque-pool bad env count", "foo: 1\nproduction:\n  foo: 1.5\n", []string{`pool.yml:3: production.foo: want a whole number, got "1.5"`}},
		{"resque-pool nested env", "production:\n  foo:\n    bar: 1\n", []string{"pool.yml:2: production.foo: want a process count"}},
		{"resque-pool bad queue", "\"a,[b\": 1\n", []string{`pool.yml:1: "a,[b": bad queue list`}},
		{"not a mapping", "- a\n- b\n", []string{"pool.yml:1: want a mapping at the top level"}},
		{"empty", "", []string{"pool.yml:1: the file is empty"}},
		{"yaml syntax", "workers:\n  - queues: a\n   processes: 1\n", []string{"pool.yml:1: invalid YAML: did not find expected '-' indicator"}},
		{"several at once", "workers:\n  - queues: a\n    concurrency: x\n  - queues: b\n    fork: 3\n", []string{
			`pool.yml:3: workers[0].concurrency: want a whole number`, `pool.yml:5: workers[1].fork: want true or false`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("pool.yml", []byte(tt.text), LoadOptions{Environment: "production"})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Errorf("error %T is not a *ConfigError", err)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yml"), LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "nope.yml") {
		t.Errorf("err = %v", err)
	}
}

// Describe shows each set's node config with the secrets masked.
func TestDescribeMasksSecrets(t *testing.T) {
	cfg := parse(t, `
redis: redis://:pw@127.0.0.1:6390
namespace: ns
handlers:
  B: {exec: "php artisan b <x> & y"}
  A: {http: {url: "http://h/{sourceId}", token: sekret, connect_timeout: 1, timeout: 2.5}}
workers:
  - {queues: "high,low", processes: 2, concurrency: 3, polling: true, interval: 0.5, fork: true, timeout: 60}
`, LoadOptions{})
	var b strings.Builder
	if err := cfg.Describe(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "sekret") || strings.Contains(out, ":pw@") {
		t.Errorf("Describe shows a secret:\n%s", out)
	}
	// Only what differs from the defaults, in field order.
	for _, want := range []string{`    node config: {"redis":{"url":"redis://:xxxxx@127.0.0.1:6390","namespace":"ns"},"queues":"high,low","concurrency":3,` +
		`"polling":true,"interval":"500ms","job_timeout":"1m0s","fork":true,"exec":["B=php artisan b <x> & y"],"http":["A=http://h/{sourceId}"],` +
		`"http_token":"***","http_connect_timeout":"1s","http_timeout":"2.5s"}` + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("Describe lacks %q:\n%s", want, out)
		}
	}
}

// Handlers given on the command line replace the file's per class.
func TestSetHandler(t *testing.T) {
	cfg := parse(t, "handlers:\n  B: {exec: b}\n  '*': {exec: any}\nworkers: {q: 1}\n", LoadOptions{})
	cfg.SetHandler(Handler{Class: "B", Exec: "b2"})
	cfg.SetHandler(Handler{Class: "A", HTTP: &HTTPEndpoint{URL: "http://a"}})
	classes := []string{}
	for _, h := range cfg.Handlers {
		classes = append(classes, h.Class+"="+h.Exec)
	}
	if !slices.Equal(classes, []string{"*=any", "A=", "B=b2"}) {
		t.Errorf("handlers = %v", classes)
	}
}

// max_rss takes bytes or a size with a unit, every unit a power of 1024;
// anything else is an error naming the file, line and key.
func TestParseRecycleLimits(t *testing.T) {
	for in, want := range map[string]int64{"536870912": 512 << 20, "512MB": 512 << 20, "512M": 512 << 20, "512mb": 512 << 20,
		"1.5GiB": 3 << 29, "64KB": 64 << 10, "2G": 2 << 30, "100B": 100} {
		cfg := parse(t, "workers:\n  - {queues: a, max_rss: "+in+", max_jobs: 10, max_age: 90m}\n", LoadOptions{})
		s := cfg.Sets[0]
		if s.MaxRSS != want || s.MaxJobs != 10 || s.MaxAge != 90*time.Minute {
			t.Errorf("max_rss %s: got %d, %d, %s; want %d", in, s.MaxRSS, s.MaxJobs, s.MaxAge, want)
		}
	}
	for _, bad := range []string{"max_rss: 512XB", "max_rss: -1MB", "max_rss: lots", "max_jobs: -1", "max_jobs: 1.5", "max_age: soon", "max_age: -5"} {
		_, err := Parse("pool.yml", []byte("workers:\n  - queues: a\n    "+bad+"\n"), LoadOptions{})
		key, _, _ := strings.Cut(bad, ":")
		if err == nil || !strings.Contains(err.Error(), "pool.yml:3") || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: err = %v, want one naming pool.yml:3 and %s", bad, err, key)
		}
	}
}

// Every queue-set key of the worker settings table is read from a set,
// with the table's bounds, and reaches that set's children.
func TestQueueSetTakesTheTablesSetKeys(t *testing.T) {
	text := "workers:\n  - queues: q\n    concurrency: 3\n    polling: true\n    interval: 2\n    fork: true\n    timeout: 7\n  - queues: r\n"
	for _, k := range worksettings.SetKeys() {
		if !strings.Contains(text, "    "+k+":") {
			t.Fatalf("the test's file does not give set key %s", k)
		}
	}
	cfg := parse(t, text, LoadOptions{})
	c := cfg.Child(cfg.Sets[0])
	if c.Concurrency != 3 || !c.Polling || c.Interval != 2*time.Second || !c.Fork || c.JobTimeout != 7*time.Second {
		t.Errorf("child of the set: %+v", c)
	}
	if d := cfg.Child(cfg.Sets[1]); d.Concurrency != 1 || d.Polling || d.Fork || d.JobTimeout != 0 {
		t.Errorf("child of a set without them: %+v", d)
	}
	for _, tc := range []struct{ key, value, want string }{
		{"concurrency", "0", "workers[0].concurrency"},
		{"interval", "0", "must be at least 1ms"},
		{"timeout", "-1", "must not be negative"},
		{"fork", "maybe", "workers[0].fork"},
		{"concurency", "2", `did you mean "concurrency"`},
	} {
		_, err := Parse("pool.yml", []byte("workers:\n  - queues: q\n    "+tc.key+": "+tc.value+"\n"), LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), "pool.yml:3:") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %s: error %v, want line 3 and %q", tc.key, tc.value, err, tc.want)
		}
	}
}
