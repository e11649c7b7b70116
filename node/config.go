package node

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/resque-go/resque-go/failure"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// Config is everything a node does, as plain values: what `resque-go work`
// takes as flags, and what a pool manager hands each child whole (as JSON,
// field names in snake_case and stable). The zero value of every optional
// field means its documented default; Queues is required.
//
// Durations are time.Duration; 0 is the setting's default and a negative
// one is refused unless the field says what it means. In JSON they are
// strings: a Go duration ("30s", "250ms") or seconds ("5", "0.5"); ""
// (or no key) is the default.
type Config struct {
	// Redis is the server and the namespace.
	Redis Redis `json:"redis"`

	// Queues is the queue list in priority order: "high,low"; * and globs
	// expand against the queues set; !pattern excludes (required).
	Queues string `json:"queues"`
	// Concurrency is the number of job slots, 1 to 4096, each with its own
	// worker id; 0 means 1.
	Concurrency int `json:"concurrency"`
	// Hostname is the host part of worker ids and queue statistics; ""
	// means this machine's name.
	Hostname string `json:"hostname"`
	// Polling sleeps Interval when the queues are empty instead of blocking
	// waits; Interval 0 means 5 s.
	Polling  bool          `json:"polling"`
	Interval time.Duration `json:"interval"`
	// Drain makes the node work until every queue is empty, then stop by
	// itself (Ruby's INTERVAL=0; in JSON, "interval": "0"). It takes no
	// Interval.
	Drain bool `json:"-"`
	// Mass, instead of Queues, makes the node work a mass-queue pool
	// (docs/massqueue.md#static-pools, docs/massqueue.md#batch-pools): "static:<pool>" serves a static pool's sources
	// round-robin, "unit:<pool>:<unit id>" one unit of a batch pool. The
	// pool manager sets it for the workers of its mass config. The slots
	// poll every Interval (0 means 1 s here) when there is no job.
	Mass string `json:"mass,omitempty"`
	// Serial names queues of Queues that run one job at a time across
	// every process (literal names; docs/protocol.md#serial-queues).
	Serial []string `json:"serial,omitempty"`
	// HeartbeatInterval is 1 to 60 seconds; 0 means 5 s.
	HeartbeatInterval time.Duration `json:"heartbeat_interval"`
	// JobTimeout cancels a job after this long; 0 means none.
	JobTimeout time.Duration `json:"job_timeout"`
	// TermTimeout is how long a hard stop gives cancelled jobs before they
	// are requeued; 0 means 4 s, a negative value at once (Ruby's
	// TERM_TIMEOUT=0; in JSON, "term_timeout": "0").
	TermTimeout time.Duration `json:"term_timeout"`
	// GracefulTerm makes TERM and INT stop the node as QUIT does (Stop,
	// not Shutdown). It is read by whatever maps signals onto the node:
	// resque-go work does.
	GracefulTerm bool `json:"graceful_term"`
	// DirtyExitOnTerm records jobs interrupted by a hard stop in failed as
	// Resque::DirtyExit instead of requeueing them.
	DirtyExitOnTerm bool `json:"dirty_exit_on_term"`
	// MaxRecoveries is how often a dead worker's job is requeued before it
	// is recorded as failed; 0 means 3, a negative number none (work's
	// --max-recoveries 0).
	MaxRecoveries int `json:"max_recoveries"`
	// RubyPrune records a dead worker's job as failed at once, as Ruby
	// Resque does.
	RubyPrune bool `json:"ruby_prune"`
	// Events appends every job's start and end to the namespace's events
	// stream (docs/events.md), in the step that makes the change; off (the
	// default), the job's path sends nothing of it. EventsMaxLen is how
	// many entries the stream keeps (0: 100,000), EventsMaxAge, when set,
	// how long.
	Events       bool          `json:"events,omitempty"`
	EventsMaxLen int           `json:"events_max_len,omitempty"`
	EventsMaxAge time.Duration `json:"events_max_age,omitempty"`
	// FailRetries is the attempts a failing job gets in all (resque-v3's
	// fail_retries); 0 means 3, 1 never retries.
	FailRetries int `json:"fail_retries"`
	// RetryBackoff is the delay before a retry: "none", "fixed:30s" or
	// "exp:BASE[:MAX[:JITTER]]" ("exp:2s:10m:0.2"); "" means none.
	RetryBackoff string `json:"retry_backoff"`
	// ClassRetry overrides the retry policy of classes, each as
	// "Class=ATTEMPTS[:BACKOFF]" ("MailJob=5:exp:2s:10m"); a later entry for
	// the same class wins.
	ClassRetry []string `json:"class_retry"`
	// Limits are concurrency caps across every process (docs/limits.md):
	// "Class=N", "queue:QUEUE=N" or "Class[PATH]=N" (one cap per value at
	// PATH in the payload: "Import[args.0.tenant]=2").
	Limits []string `json:"limits,omitempty"`
	// Rates are rate limits across every process (docs/limits.md):
	// "Class=N/PERIOD" ("Import=100/1m"), "queue:QUEUE=N/PERIOD" or
	// "Class[PATH]=N/PERIOD".
	Rates []string `json:"rates,omitempty"`
	// NoMover turns off promoting due delayed jobs (retries with backoff,
	// reschedules) in this node; the mover is elected, so running it
	// everywhere costs Redis one poll per second in all.
	NoMover bool `json:"no_mover"`
	// MetricsAddr serves Prometheus /metrics, /healthz (liveness) and
	// /readyz (readiness) on this address
	// ("127.0.0.1:9292"; a bare port, ":9292" or "9292", listens on
	// 127.0.0.1 only, "0.0.0.0:9292" on every interface); "" means off.
	MetricsAddr string `json:"metrics_addr"`
	// MetricsToken, when set, is the bearer token /metrics, /healthz and /readyz
	// require (401 without it).
	MetricsToken string `json:"metrics_token,omitempty"`
	// Fork runs every job in a child process (see WithFork).
	Fork bool `json:"fork"`
	// Retention trims the failed and retries lists (docs/retention.md);
	// the zero value keeps everything. One process per namespace trims,
	// elected by a lease, so giving it to every node costs Redis one lease
	// call per node and minute.
	Retention failure.Retention `json:"retention,omitzero"`

	// Exec runs job classes through commands, each as "Class=command args"
	// ("*=command" for any class without a handler).
	Exec []string `json:"exec"`
	// HTTP POSTs the jobs of classes to endpoints, each as "Class=URL"
	// ("*=URL"; {sourceId} in the URL is replaced). They share the token
	// (sent as a bearer token) and the timeouts: connect 0 means 5 s, the
	// whole request 0 means 30 s.
	HTTP               []string      `json:"http"`
	HTTPToken          string        `json:"http_token"`
	HTTPConnectTimeout time.Duration `json:"http_connect_timeout"`
	HTTPTimeout        time.Duration `json:"http_timeout"`

	// LogLevel is debug, info, warn or error ("" means info); LogFormat
	// console or json ("" means console). The node logs through the logger
	// it is given (WithLogger); these say how that logger is built, and
	// resque-go work builds it so.
	LogLevel  string `json:"log_level"`
	LogFormat string `json:"log_format"`

	// MaxJobs, MaxRSS and MaxAge recycle the node: once its slots have
	// claimed MaxJobs jobs, its resident set is over MaxRSS bytes, or it
	// has run MaxAge (the last two checked once a second), it drains as
	// Stop does (running jobs finish) and Recycled names the limit;
	// resque-go work then exits with ExitRecycled, which a pool manager
	// reads as "start a fresh process now". 0 means no limit.
	MaxJobs int           `json:"max_jobs,omitempty"`
	MaxRSS  int64         `json:"max_rss,omitempty"`
	MaxAge  time.Duration `json:"max_age,omitempty"`

	// SupervisorPID, when set, is the pid of the process supervising this
	// one (a pool manager): once it is no longer this process's parent, the
	// node shuts down (as Shutdown).
	SupervisorPID int `json:"supervisor_pid"`

	// Later settings of the scheduler, the planner and the allocator go here.
}

// Redis says where the node's Redis is and how to connect to it. The TLS
// and Sentinel settings are left out of the JSON when unset, so that a
// child of an older build still reads a config that does not use them.
type Redis struct {
	// URL is redis://[[user]:password@]host:port/db (user: an ACL user),
	// rediss://... (TLS), a bare host:port, or
	// redis+sentinel://[[user]:password@]host:port,host:port/master[/db]
	// (rediss+sentinel:// with TLS) for the master the Sentinels name;
	// "" means redis://127.0.0.1:6379.
	URL string `json:"url"`
	// Namespace is the key prefix; "" means "resque" (a trailing ":" is
	// dropped).
	Namespace string `json:"namespace"`
	// TLS settings of a rediss:// URL, as work's --tls-* flags: paths of
	// PEM files (read when the node is built, so a missing or bad file is
	// a config error), the name the server's certificate must carry ("":
	// the URL's host), and skipping verification (tests only; logged as a
	// warning). Giving any with a plain redis:// URL is a config error.
	TLSCAFile             string `json:"tls_ca_file,omitempty"`
	TLSCertFile           string `json:"tls_cert_file,omitempty"`
	TLSKeyFile            string `json:"tls_key_file,omitempty"`
	TLSServerName         string `json:"tls_server_name,omitempty"`
	TLSInsecureSkipVerify bool   `json:"tls_insecure_skip_verify,omitempty"`
	// SentinelPassword authenticates to the Sentinels of a
	// redis+sentinel:// URL (work's --sentinel-password); the URL's own
	// credentials are the master's.
	SentinelPassword string `json:"sentinel_password,omitempty"`
}

// MaxConcurrency is the most job slots one node runs.
const MaxConcurrency = 4096

// Log levels and formats a Config takes.
var (
	logLevels  = []string{"debug", "info", "warn", "error"}
	logFormats = []string{"console", "json"}
)

// configError is a problem with a Config: Validate's errors, and the
// problems only Start finds (a metrics address that cannot be served).
type configError struct{ err error }

func (e configError) Error() string        { return e.err.Error() }
func (e configError) Unwrap() error        { return e.err }
func (e configError) Is(target error) bool { return target == ErrConfig }

// ErrConfig is matched (errors.Is) by every error that comes from the
// Config rather than from Redis or the system: resque-go work exits 2 for
// them.
var ErrConfig = errors.New("node: bad config")

func badf(format string, args ...any) error { return configError{fmt.Errorf(format, args...)} }

// Validate checks every setting, in the order resque-go work always has,
// and returns the first problem as one line that names the Config field
// ("node: Config.Concurrency 5000: want 1 to 4096"). Its errors match
// ErrConfig.
func (c Config) Validate() error {
	_, err := c.resolve()
	return err
}

// settings are a Config's values parsed.
type settings struct {
	spec      protocol.QueueSpec
	sources   []protocol.Source // from Mass
	durations durations
	retry     retryPolicies
	handlers  handlerSpecs
	redis     rdb.Options
	limits    []protocol.Limit
}

// resolve validates c and parses its values.
func (c Config) resolve() (settings, error) {
	var s settings
	if c.Mass != "" {
		src, label, err := massSource(c.Mass)
		if err != nil {
			return s, err
		}
		if c.Queues != "" || len(c.Serial) > 0 {
			return s, badf("node: Config.Mass %q works a mass-queue pool: it takes no Config.Queues or Config.Serial", c.Mass)
		}
		s.sources, c.Queues = []protocol.Source{src}, label
	}
	if c.Queues == "" {
		return s, badf("node: Config.Queues: none given: name the queues to work, in priority order (\"high,low\")")
	}
	spec, err := protocol.ParseQueueSpec(c.Queues)
	if err != nil {
		return s, configError{err}
	}
	s.spec = spec
	literal := protocol.LiteralQueues(c.Queues)
	for _, q := range c.Serial {
		if !slices.Contains(literal, q) {
			return s, badf("node: Config.Serial %q: not one of the queues named in Config.Queues %q (a serial queue is named, not matched by a glob)", q, c.Queues)
		}
	}
	if s.limits, err = c.parseLimits(); err != nil {
		return s, err
	}
	if n := c.Concurrency; n < 0 || n > MaxConcurrency {
		return s, badf("node: Config.Concurrency %d: want 1 to %d", n, MaxConcurrency)
	}
	if s.durations, err = c.parseDurations(); err != nil {
		return s, err
	}
	if s.redis, err = c.Redis.options(); err != nil {
		return s, err
	}
	if c.EventsMaxLen < 0 || c.EventsMaxAge < 0 {
		return s, badf("node: Config.EventsMaxLen and EventsMaxAge: want 0 (the default) or more")
	}
	s.redis.Events = rdb.EventsConfig{On: c.Events, MaxLen: c.EventsMaxLen, MaxAge: c.EventsMaxAge}
	if c.LogLevel != "" && !slices.Contains(logLevels, strings.ToLower(strings.TrimSpace(c.LogLevel))) {
		return s, badf("node: Config.LogLevel %q: want debug, info, warn or error", c.LogLevel)
	}
	if c.LogFormat != "" && !slices.Contains(logFormats, c.LogFormat) {
		return s, badf("node: Config.LogFormat %q: want console or json", c.LogFormat)
	}
	if s.retry, err = c.parseRetry(); err != nil {
		return s, err
	}
	if s.handlers, err = c.parseHandlers(); err != nil {
		return s, err
	}
	if err := c.Retention.Validate(); err != nil {
		return s, badf("node: Config.%s", strings.TrimPrefix(err.Error(), "failure: "))
	}
	if c.MaxJobs < 0 || c.MaxRSS < 0 || c.MaxAge < 0 {
		return s, badf("node: Config.MaxJobs %d, MaxRSS %d, MaxAge %s: must not be negative (0: no limit)", c.MaxJobs, c.MaxRSS, c.MaxAge)
	}
	if c.SupervisorPID < 0 {
		return s, badf("node: Config.SupervisorPID %d: want a pid, or 0 for none", c.SupervisorPID)
	}
	return s, nil
}

// massSource reads Config.Mass: the ring to claim from, and the label the
// worker ids carry where a queue list would be (no ":" in it).
func massSource(v string) (protocol.Source, string, error) {
	kind, rest, _ := strings.Cut(v, ":")
	bad := func() (protocol.Source, string, error) {
		return protocol.Source{}, "", badf("node: Config.Mass %q: want static:POOL or unit:POOL:UNIT", v)
	}
	name := func(s string) bool {
		return s != "" && !strings.ContainsAny(s, ": ,*!")
	}
	switch kind {
	case "static":
		if !name(rest) {
			return bad()
		}
		return protocol.StaticPoolSource(rest), "mass." + rest, nil
	case "unit":
		pool, unit, ok := strings.Cut(rest, ":")
		if !ok || !name(pool) || !name(unit) {
			return bad()
		}
		return protocol.UnitSource(pool, unit), "mass." + pool + "." + unit, nil
	}
	return bad()
}

// Encode writes c as JSON (one object, then a newline).
func (c Config) Encode(w io.Writer) error {
	return json.NewEncoder(w).Encode(c)
}

// configAlias is Config without its JSON methods.
type configAlias Config

// configJSON is Config's JSON form: the durations as strings (their fields
// here hide configAlias's of the same JSON name).
type configJSON struct {
	*configAlias
	Interval           jsonDuration `json:"interval"`
	HeartbeatInterval  jsonDuration `json:"heartbeat_interval"`
	JobTimeout         jsonDuration `json:"job_timeout"`
	TermTimeout        jsonDuration `json:"term_timeout"`
	HTTPConnectTimeout jsonDuration `json:"http_connect_timeout"`
	HTTPTimeout        jsonDuration `json:"http_timeout"`
	MaxAge             jsonDuration `json:"max_age,omitempty"`
}

// MarshalJSON writes the durations as strings: "30s", "" for 0, and "0"
// for Drain (in interval) and a negative TermTimeout, the forms work's
// flags and every earlier release read so.
func (c Config) MarshalJSON() ([]byte, error) {
	j := configJSON{configAlias: (*configAlias)(&c),
		Interval: durationString(c.Interval), HeartbeatInterval: durationString(c.HeartbeatInterval),
		JobTimeout: durationString(c.JobTimeout), TermTimeout: durationString(c.TermTimeout),
		HTTPConnectTimeout: durationString(c.HTTPConnectTimeout), HTTPTimeout: durationString(c.HTTPTimeout),
		MaxAge: durationString(c.MaxAge)}
	if c.Drain {
		j.Interval = "0"
	}
	if c.TermTimeout < 0 {
		j.TermTimeout = "0"
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes, and seconds ("5", "0.5").
func (c *Config) UnmarshalJSON(data []byte) error {
	var a configAlias
	j := configJSON{configAlias: &a}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	var err error
	for _, f := range []struct {
		name string
		v    jsonDuration
		d    *time.Duration
	}{
		{"interval", j.Interval, &a.Interval}, {"heartbeat_interval", j.HeartbeatInterval, &a.HeartbeatInterval},
		{"job_timeout", j.JobTimeout, &a.JobTimeout}, {"term_timeout", j.TermTimeout, &a.TermTimeout},
		{"http_connect_timeout", j.HTTPConnectTimeout, &a.HTTPConnectTimeout}, {"http_timeout", j.HTTPTimeout, &a.HTTPTimeout},
		{"max_age", j.MaxAge, &a.MaxAge},
	} {
		if *f.d, err = parseSeconds(f.name, string(f.v)); err != nil {
			return err
		}
	}
	set := func(v jsonDuration) bool { return strings.TrimSpace(string(v)) != "" }
	a.Drain = set(j.Interval) && a.Interval == 0
	if set(j.TermTimeout) && a.TermTimeout == 0 {
		a.TermTimeout = -1
	}
	if set(j.HeartbeatInterval) && a.HeartbeatInterval == 0 {
		// "0" was always refused; keep it refused rather than read as 5 s
		return badf("heartbeat_interval %q: want 1 to 60 seconds", string(j.HeartbeatInterval))
	}
	*c = Config(a)
	return nil
}

// jsonDuration is a duration setting as JSON holds it.
type jsonDuration string

func durationString(d time.Duration) jsonDuration {
	if d <= 0 {
		return ""
	}
	return jsonDuration(d.String())
}

// Decode reads a Config written by Encode: one JSON object with no field
// Config does not have (a misspelt or newer setting is an error, never
// ignored). It does not Validate.
func Decode(r io.Reader) (Config, error) {
	var c Config
	data, err := io.ReadAll(r)
	if err != nil {
		return c, fmt.Errorf("node: read config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, badf("node config: %v", err)
	}
	if dec.More() {
		return Config{}, badf("node config: more than one JSON value")
	}
	return c, nil
}

// parseLimits reads Limits and Rates.
func (c Config) parseLimits() ([]protocol.Limit, error) {
	var out []protocol.Limit
	for _, spec := range c.Limits {
		l, err := protocol.ParseLimit(spec)
		if err != nil {
			return nil, badf("node: Config.Limits: %v", err)
		}
		out = append(out, l)
	}
	for _, spec := range c.Rates {
		l, err := protocol.ParseRate(spec)
		if err != nil {
			return nil, badf("node: Config.Rates: %v", err)
		}
		out = append(out, l)
	}
	if len(out) > 0 && c.Mass != "" {
		return nil, badf("node: Config.Mass %q: limits and rates count jobs of Resque queues; a mass-queue pool has its own (docs/massqueue.md)", c.Mass)
	}
	return out, nil
}
