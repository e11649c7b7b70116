package pool

import (
	"errors"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Every unknown key, at any level of every format, is reported as
// `file:line: unknown key "name"`, with the key it most likely misspells.
// A misspelt sets key ("wrokers") used to make the file read as a
// resque-pool file, with a message about process counts.
func TestUnknownKeysSayUnknownKey(t *testing.T) {
	tests := []struct {
		name, text string
		line       int
		key, hint  string
	}{
		{"misspelt workers alone", "wrokers:\n  - queues: a\n    processes: 2\n", 1, "wrokers", `did you mean "workers"?`},
		{"misspelt workers, map form", "wrokers:\n  a: 1\n", 1, "wrokers", `did you mean "workers"?`},
		{"misspelt workers after redis", "redis: redis://127.0.0.1:6379\nwrokers:\n  - queues: a\n", 2, "wrokers", `did you mean "workers"?`},
		{"workers in another case", "Workers:\n  - queues: a\n", 1, "Workers", `did you mean "workers"?`},
		{"misspelt queues (resque-v3)", "queus:\n  default:\n    worker_count: 2\n", 1, "queus", `did you mean "queues"?`},
		{"misspelt top-level key", "namespce: x\nworkers: {a: 1}\n", 1, "namespce", `did you mean "namespace"?`},
		{"unknown top-level key", "colour: red\nworkers: {a: 1}\n", 1, "colour", "known here: redis, namespace"},
		{"resque-v3 key in resque-go format", "statsd: {host: x}\nworkers: {a: 1}\n", 1, "statsd", "known here:"},
		{"set key, list form", "workers:\n  - queues: a\n    fork: true\n    forks: 2\n", 4, "forks", `in workers[0] (did you mean "fork"?)`},
		{"set key, map form", "workers:\n  a:\n    concurency: 2\n", 3, "concurency", `in workers.a (did you mean "concurrency"?)`},
		{"set key, resque-v3", "queues:\n  a:\n    worker_cout: 2\n", 3, "worker_cout", `in queues.a (did you mean "worker_count"?)`},
		{"log key", "log:\n  levle: info\nworkers: {a: 1}\n", 2, "levle", `in log (did you mean "level"?)`},
		{"resque-v3 log key in resque-go format", "log:\n  path: /var/log/x\nworkers: {a: 1}\n", 2, "path", "in log (known here: level, format)"},
		{"handler key", "handlers:\n  A:\n    exce: x\nworkers: {a: 1}\n", 3, "exce", `in handlers.A (did you mean "exec"?)`},
		{"http key", "handlers:\n  A:\n    http:\n      url: http://h\n      tokn: x\nworkers: {a: 1}\n", 5, "tokn", `in handlers.A.http (did you mean "token"?)`},
		{"redis key", "redis:\n  hots: x\nqueues: {a: {worker_count: 1}}\n", 2, "hots", `in redis (did you mean "host"?)`},
		{"redis timeout in resque-go format", "redis:\n  host: x\n  timeout: 3\nworkers: {a: 1}\n", 3, "timeout", "in redis (known here:"},
		{"resque-v3 top-level key", "fail_retires: 3\nqueues: {a: {worker_count: 1}}\n", 1, "fail_retires", `did you mean "fail_retries"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("pool.yml", []byte(tt.text), LoadOptions{})
			if err == nil {
				t.Fatal("no error")
			}
			want := regexp.MustCompile(`(?m)^pool\.yml:` + itoa(tt.line) + `: unknown key "` + regexp.QuoteMeta(tt.key) + `"`)
			if !want.MatchString(err.Error()) || !strings.Contains(err.Error(), tt.hint) {
				t.Errorf("error:\n%v\nwant %s ... %s", err, want, tt.hint)
			}
			if strings.Contains(err.Error(), "missing") || strings.Contains(err.Error(), "whole number") {
				t.Errorf("a misleading message besides the unknown key:\n%v", err)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || !ce.Unknown {
				t.Errorf("error %#v is not an unknown-key *ConfigError", ce)
			}
		})
	}
}

// resque-pool files keep their own reading: their keys are queue lists and
// environments, so nothing there is an unknown key.
func TestResquePoolFilesStayResquePool(t *testing.T) {
	for _, text := range []string{
		"worker: 2\n",                          // a queue that looks like a key
		"workers: 2\nqueues: 1\n",              // queues named like the keys, with counts
		"production:\n  redis: 1\n  mail: 2\n", // an environment section
		"foo: 1\nstaging:\n  \"foo,bar\": 3\n", // resque-pool's README
		"fail_retries: 3\nhigh: 1\n",           // counts only
	} {
		cfg, err := Parse("pool.yml", []byte(text), LoadOptions{Environment: "production"})
		if err != nil || cfg.Format != FormatResquePool {
			t.Errorf("%q: %v %+v", text, err, cfg)
		}
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"queues", "processes", "worker_count", "concurrency", "fork", "log"}
	for in, want := range map[string]string{
		"qeueus": "queues", "proceses": "processes", "worker-count": "worker_count", "FORK": "fork",
		"forks": "fork", "lgo": "log", "logs": "log", "lo": "log", "unrelated": "", "f": "", "cores": "",
	} {
		if got := suggest(in, known); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// The real resque-v3 config file is read unchanged: queues, Redis server,
// fail_retries and log level apply; the rest is ignored with one warning.
func TestParseResqueV3File(t *testing.T) {
	cfg, err := Load(filepath.Join("testdata", "resque-v3.yml"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Format != FormatResqueV3 || cfg.Redis != "redis://redis.internal:6380" || cfg.Work.FailRetries != 5 || cfg.LogLevel != "warn" {
		t.Errorf("settings = %+v", cfg)
	}
	want := []QueueSet{
		{Queues: "default", Processes: 4, Concurrency: 1, Interval: 3 * time.Second},
		{Queues: "reports", Processes: 1, Concurrency: 1, Polling: true, Interval: 10 * time.Second},
		{Queues: "mail", Processes: 2, Concurrency: 1, Interval: DefaultInterval},
	}
	if got := sets(cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("sets = %+v", got)
	}
	ignored := []string{"log.path", "log.application_name", "log.system_name", "log.extra_prefix", "log.context_prefix",
		"log.logstash_version", "statsd", "task_include_path"}
	if !reflect.DeepEqual(cfg.Ignored, ignored) {
		t.Errorf("ignored = %q", cfg.Ignored)
	}
	w := cfg.Warning()
	if strings.Count(w, "\n") != 0 || !strings.HasPrefix(w, filepath.Join("testdata", "resque-v3.yml")+": ignored") ||
		!strings.Contains(w, strings.Join(ignored, ", ")) {
		t.Errorf("warning = %q", w)
	}
	if child := cfg.Child(cfg.Sets[0]); child.Redis.URL != "redis://redis.internal:6380" || child.LogLevel != "warn" {
		t.Errorf("child = %+v", child)
	}

	// The layout of resque-v3 before 3.2: log_level and log_path at the top.
	old, err := Load(filepath.Join("testdata", "resque-v3-3.0.yml"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if old.Redis != "redis://10.0.0.7:6379" || old.LogLevel != "debug" || !reflect.DeepEqual(old.Ignored, []string{"log_path", "task_include_path"}) {
		t.Errorf("3.0 file = %+v", old)
	}
	// A file of resque-go's own making has nothing to warn about.
	if own := parse(t, "workers: {a: 1}\n", LoadOptions{}); own.Warning() != "" {
		t.Errorf("warning = %q", own.Warning())
	}
}

// The redis mapping takes the spellings other Resque configs use too.
func TestParseRedisMapping(t *testing.T) {
	for _, tt := range []struct {
		text, url, ns string
	}{
		{"redis: {hostname: r1}", "redis://r1:6379", ""},
		{"redis: {host: r1, port: 6390, db: 2}", "redis://r1:6390/2", ""},
		{"redis: {host: r1, database: 3, password: 's3cr:t@'}", "redis://:s3cr%3At%40@r1:6379/3", ""},
		{"redis: {host: r1, username: app, password: 1234}", "redis://app:1234@r1:6379", ""},
		{"redis: {host: '::1', namespace: 'resque-v3:'}", "redis://[::1]:6379", "resque-v3"},
		{"redis: {prefix: legacy}", "redis://localhost:6379", "legacy"},
	} {
		cfg := parse(t, tt.text+"\nqueues: {a: {worker_count: 1}}\n", LoadOptions{})
		if cfg.Redis != tt.url || cfg.Namespace != tt.ns {
			t.Errorf("%s: redis %q namespace %q; want %q %q", tt.text, cfg.Redis, cfg.Namespace, tt.url, tt.ns)
		}
		if err := validRedisURL(cfg.Redis); err != nil {
			t.Errorf("%s: %v", tt.text, err)
		}
	}
	for text, want := range map[string]string{
		"redis: {host: r1, port: 0}":            "pool.yml:1: redis.port: 0 is out of range",
		"redis: {host: r1, hostname: r2}":       "pool.yml:1: redis.hostname: host is already given",
		"redis: {db: x}":                        `pool.yml:1: redis.db: want a whole number, got "x"`,
		"namespace: a\nredis: {namespace: b}":   "pool.yml:2: redis.namespace: the namespace is already given at line 1",
		"log: {level: notice}\nlog_level: info": "pool.yml:2: log_level: the log level is already given at line 1",
		"log: {level: verbose}":                 `pool.yml:1: log.level: "verbose": want debug, info, warn or error`,
	} {
		_, err := Parse("pool.yml", []byte(text+"\nqueues: {a: {worker_count: 1}}\n"), LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v\nwant %q", text, err, want)
		}
	}
}
