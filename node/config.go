package node

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// Config is everything a node does, as plain values: what `resque-go work`
// takes as flags, and what a pool manager hands each child whole (as JSON,
// field names in snake_case and stable). The zero value of every optional
// field means its documented default; Queues is required.
//
// Durations are strings, as work's flags take them: seconds ("5", "0.5")
// or a Go duration ("250ms", "2m"). "" is the default; "0" is zero, which a
// setting may refuse (heartbeat_interval) or read as its default (interval,
// term_timeout), as work always did.
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
	// waits; Interval "" means 5 s. "0" (Ruby's INTERVAL=0) makes the node
	// work until every queue is empty, then stop by itself.
	Polling  bool   `json:"polling"`
	Interval string `json:"interval"`
	// Mass, instead of Queues, makes the node work a mass-queue pool
	// (docs/massqueue.md#static-pools, docs/massqueue.md#batch-pools): "static:<pool>" serves a static pool's sources
	// round-robin, "unit:<pool>:<unit id>" one unit of a batch pool. The
	// pool manager sets it for the workers of its mass config. The slots
	// poll every Interval ("" means 1 s here) when there is no job.
	Mass string `json:"mass,omitempty"`
	// Serial names queues of Queues that run one job at a time across
	// every process (literal names; docs/protocol.md#serial-queues).
	Serial []string `json:"serial,omitempty"`
	// HeartbeatInterval is 1 to 60 seconds; "" means 5 s.
	HeartbeatInterval string `json:"heartbeat_interval"`
	// JobTimeout cancels a job after this long; "" or "0" means none.
	JobTimeout string `json:"job_timeout"`
	// TermTimeout is how long a hard stop gives cancelled jobs before they
	// are requeued; "" means 4 s (so does "0").
	TermTimeout string `json:"term_timeout"`
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
	// NoMover turns off promoting due delayed jobs (retries with backoff,
	// reschedules) in this node; the mover is elected, so running it
	// everywhere costs Redis one poll per second in all.
	NoMover bool `json:"no_mover"`
	// MetricsAddr serves Prometheus /metrics and /healthz on this address
	// ("127.0.0.1:9292"; a bare port, ":9292" or "9292", listens on
	// 127.0.0.1 only, "0.0.0.0:9292" on every interface); "" means off.
	MetricsAddr string `json:"metrics_addr"`
	// MetricsToken, when set, is the bearer token /metrics and /healthz
	// require (401 without it).
	MetricsToken string `json:"metrics_token,omitempty"`
	// Fork runs every job in a child process (see WithFork).
	Fork bool `json:"fork"`

	// Exec runs job classes through commands, each as "Class=command args"
	// ("*=command" for any class without a handler).
	Exec []string `json:"exec"`
	// HTTP POSTs the jobs of classes to endpoints, each as "Class=URL"
	// ("*=URL"; {sourceId} in the URL is replaced). They share the token
	// (sent as a bearer token) and the timeouts: connect "" means 5 s, the
	// whole request "" means 30 s.
	HTTP               []string `json:"http"`
	HTTPToken          string   `json:"http_token"`
	HTTPConnectTimeout string   `json:"http_connect_timeout"`
	HTTPTimeout        string   `json:"http_timeout"`

	// LogLevel is debug, info, warn or error ("" means info); LogFormat
	// console or json ("" means console). The node logs through the logger
	// it is given (WithLogger); these say how that logger is built, and
	// resque-go work builds it so.
	LogLevel  string `json:"log_level"`
	LogFormat string `json:"log_format"`

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
// and returns the first problem as the one line work prints (the message
// names the work flag of the setting). Its errors match ErrConfig.
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
			return s, badf("--mass %q works a mass-queue pool: it takes no --queues or --serial", c.Mass)
		}
		s.sources, c.Queues = []protocol.Source{src}, label
	}
	if c.Queues == "" {
		return s, badf("no queues: give --queues high,low (or QUEUE=high,low)")
	}
	spec, err := protocol.ParseQueueSpec(c.Queues)
	if err != nil {
		return s, configError{err}
	}
	s.spec = spec
	literal := protocol.LiteralQueues(c.Queues)
	for _, q := range c.Serial {
		if !slices.Contains(literal, q) {
			return s, badf("--serial %q: not one of the queues named in --queues %q (a serial queue is named, not matched by a glob)", q, c.Queues)
		}
	}
	if n := c.Concurrency; n < 0 || n > MaxConcurrency {
		return s, badf("--concurrency %d: want 1 to %d", n, MaxConcurrency)
	}
	if s.durations, err = c.parseDurations(); err != nil {
		return s, err
	}
	if s.redis, err = c.Redis.options(); err != nil {
		return s, err
	}
	if c.LogLevel != "" && !slices.Contains(logLevels, strings.ToLower(strings.TrimSpace(c.LogLevel))) {
		return s, badf("--log-level %q: want debug, info, warn or error", c.LogLevel)
	}
	if c.LogFormat != "" && !slices.Contains(logFormats, c.LogFormat) {
		return s, badf("--log-format %q: want console or json", c.LogFormat)
	}
	if s.retry, err = c.parseRetry(); err != nil {
		return s, err
	}
	if s.handlers, err = c.parseHandlers(); err != nil {
		return s, err
	}
	if c.SupervisorPID < 0 {
		return s, badf("supervisor_pid %d: want a pid, or 0 for none", c.SupervisorPID)
	}
	return s, nil
}

// massSource reads Config.Mass: the ring to claim from, and the label the
// worker ids carry where a queue list would be (no ":" in it).
func massSource(v string) (protocol.Source, string, error) {
	kind, rest, _ := strings.Cut(v, ":")
	bad := func() (protocol.Source, string, error) {
		return protocol.Source{}, "", badf("--mass %q: want static:POOL or unit:POOL:UNIT", v)
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
