package pool

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
	"github.com/resque-go/resque-go/node"
)

// Dialects a config file can be written in.
const (
	// FormatResqueGo is resque-go's own format (examples/pool.yml).
	FormatResqueGo = "resque-go"
	// FormatResquePool is resque-pool's file: "queue,list": count at the top
	// level, optionally overridden per environment ("production:").
	FormatResquePool = "resque-pool"
	// FormatResqueV3 is the resque-v3 style: queues.<name>.worker_count,
	// blocking and interval.
	FormatResqueV3 = "resque-v3"
)

// Defaults the config fills in (the work command's own defaults).
const (
	DefaultInterval    = 5 * time.Second
	DefaultKillTimeout = 10 * time.Second
)

// Config is a pool config file, resolved: what every child runs.
type Config struct {
	// Path is the file it was read from; Format its dialect; Environment the
	// resque-pool environment section applied ("" for none).
	Path        string
	Format      string
	Environment string

	// Redis is the URL children connect to ("" means the work command's
	// default); it reaches them in their node config, through a pipe, never
	// on the command line, where ps would show a password.
	Redis     string
	Namespace string
	// RedisTLS holds the TLS and Sentinel settings of the manager's
	// redis flags (its URL and Namespace fields are unused): every child
	// gets them.
	RedisTLS node.Redis
	// Hostname is the host part of the children's worker ids; "" means
	// this machine's name.
	Hostname  string
	LogLevel  string
	LogFormat string
	// KillTimeout is how long the manager waits after passing TERM before
	// it kills the children that are still running; 0 means 10 s.
	KillTimeout time.Duration

	// Work holds the worker settings the file gives at its top level
	// (fail_retries, term_timeout, retry_backoff, class_retry, mover...:
	// the keys of the worker settings table, internal/worksettings), in
	// node.Config's own terms: max_recoveries 0 is MaxRecoveries -1,
	// mover false NoMover, class_retry {MailJob: 5} ClassRetry
	// ["MailJob=5"] sorted by class. A setting the file leaves out is
	// zero, the node's default. Every child's node config starts from it.
	Work node.Config

	// Mass is the mass-queue section (node_id, pools, mapping), nil
	// without one: the manager runs an allocator and the units'
	// heartbeats, and Sets holds a set per static pool and per unit.
	Mass *massqueue.Config

	// Scheduler, when set (`scheduler: true`, or a mapping with schedule,
	// environment, dynamic), makes the manager run one `resque-go
	// scheduler` child too (node.SchedulerConfig).
	Scheduler *SchedulerSettings

	// Handlers run job classes that have no Go handler, sorted by class.
	Handlers []Handler
	// Sets are the queue sets in file order.
	Sets []QueueSet

	// Ignored are the settings of a resque-v3 file that resque-go has no
	// use for (its log file, statsd, PHP include path), by path: log.path,
	// statsd. Warning describes them.
	Ignored []string
}

// Warning is the one warning a config with ignored settings deserves, ""
// for none.
func (c *Config) Warning() string {
	if len(c.Ignored) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: ignored the resque-v3 settings that resque-go does not use: %s", c.Path, strings.Join(c.Ignored, ", "))
}

// SchedulerSettings are the scheduler child's own settings.
type SchedulerSettings struct {
	// Schedule is a resque-scheduler schedule file (relative paths are
	// taken from the pool file's directory); "" none.
	Schedule    string
	Environment string
	Dynamic     bool
}

// SchedulerLabel stands for the scheduler child where a worker child shows
// its queues (logs, events, status).
const SchedulerLabel = "(scheduler)"

// SchedulerChild returns the scheduler child's config: the file's Redis,
// host name and log settings, and the scheduler's own.
func (c *Config) SchedulerChild() node.SchedulerConfig {
	s := c.Scheduler
	if s == nil {
		s = &SchedulerSettings{}
	}
	return node.SchedulerConfig{
		Redis: node.Redis{URL: c.Redis, Namespace: c.Namespace,
			TLSCAFile: c.RedisTLS.TLSCAFile, TLSCertFile: c.RedisTLS.TLSCertFile, TLSKeyFile: c.RedisTLS.TLSKeyFile,
			TLSServerName: c.RedisTLS.TLSServerName, TLSInsecureSkipVerify: c.RedisTLS.TLSInsecureSkipVerify,
			SentinelPassword: c.RedisTLS.SentinelPassword},
		Hostname: c.Hostname, Schedule: s.Schedule, Environment: s.Environment, Dynamic: s.Dynamic,
		LogLevel: c.LogLevel, LogFormat: c.LogFormat, Retention: c.Work.Retention,
		// the file's events setting: the mover's promotions write theirs
		Events: c.Work.Events, EventsMaxLen: c.Work.EventsMaxLen, EventsMaxAge: c.Work.EventsMaxAge,
	}
}

// Handler runs one job class ("*": any class without a handler) through a
// command or an HTTP endpoint.
type Handler struct {
	Class string
	Exec  string
	HTTP  *HTTPEndpoint
	// Line is where the handler is defined (0 when it came from a flag).
	Line int
}

// HTTPEndpoint is a handler that POSTs each job to URL.
type HTTPEndpoint struct {
	URL            string
	Token          string
	ConnectTimeout time.Duration // 0: work's default
	Timeout        time.Duration // 0: work's default
}

// QueueSet is a group of identical worker processes over one queue list.
type QueueSet struct {
	// Queues is the list as the work command takes it: "high,low", "*".
	Queues string
	// Processes is how many children run it (0: none); Concurrency the job
	// slots in each.
	Processes   int
	Concurrency int
	// Polling sleeps Interval when the queues are empty instead of blocking.
	Polling  bool
	Interval time.Duration
	// Fork runs every job in a child process of the worker.
	Fork bool
	// Timeout is the per-job timeout; 0 means none.
	Timeout time.Duration
	// Serial makes the set's queues (its literal names, not its globs)
	// serial: one job at a time across every process.
	Serial bool
	// MaxJobs, MaxRSS (bytes) and MaxAge recycle a child: past one, it
	// finishes its running jobs, exits and is replaced at once (not a
	// crash). 0 means no limit.
	MaxJobs int
	MaxRSS  int64
	MaxAge  time.Duration
	// Mass, for a set made from the mass-queue section, is the node's
	// Mass setting ("static:<pool>", "unit:<pool>:<unit>"); Queues is
	// then the same text, as a label.
	Mass string
	// Line is where the set is defined.
	Line int
}

// ConfigError is one problem in a config file, at a line and key.
type ConfigError struct {
	File string
	Line int
	// Key is the path of the offending key: workers[1].concurrency,
	// handlers.MailJob.exec, "high,low".
	Key string
	Msg string
	// Unknown marks a key the format does not have; its message starts
	// with `unknown key "name"`, which names the key itself.
	Unknown bool
}

func (e *ConfigError) Error() string {
	if e.Key == "" || e.Unknown {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Key, e.Msg)
}

// LoadOptions tune how a file is read.
type LoadOptions struct {
	// Environment selects the resque-pool environment section that
	// overrides the top-level counts (resque-pool takes it from RACK_ENV,
	// RAILS_ENV or RESQUE_ENV). Other dialects have no sections.
	Environment string
}

// Load reads and parses the config file at path.
func Load(path string, opt LoadOptions) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pool: config: %w", err)
	}
	return Parse(path, data, opt)
}

// Parse parses a config file; name is used in error messages. Every problem
// found is reported (errors.Join of *ConfigError), not only the first.
func Parse(name string, data []byte, opt LoadOptions) (*Config, error) {
	d := &decoder{file: name}
	root, err := parseYAML(name, data)
	if err != nil {
		return nil, err
	}
	cfg := &Config{Path: name}
	switch detectFormat(root) {
	case FormatResqueGo:
		cfg.Format = FormatResqueGo
		d.decodeOwn(cfg, root, "workers")
	case FormatResqueV3:
		cfg.Format = FormatResqueV3
		d.decodeOwn(cfg, root, "queues")
	default:
		cfg.Format = FormatResquePool
		cfg.Environment = opt.Environment
		d.decodeResquePool(cfg, root, opt.Environment)
	}
	cfg.Ignored = d.ignored
	if len(d.errs) == 0 {
		d.errs = append(d.errs, cfg.validate()...)
	}
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	return cfg, nil
}

// Validate checks what a config must satisfy after flags changed it: the
// handlers must agree on the HTTP settings (work takes one token and one
// pair of timeouts per process).
func (c *Config) Validate() error { return errors.Join(c.validate()...) }

func (c *Config) validate() []error {
	var errs []error
	var first *Handler
	for i := range c.Handlers {
		h := &c.Handlers[i]
		if h.HTTP == nil {
			continue
		}
		if first == nil {
			first = h
			continue
		}
		a, b := first.HTTP, h.HTTP
		for _, f := range []struct {
			key  string
			same bool
		}{
			{"token", a.Token == b.Token},
			{"connect_timeout", a.ConnectTimeout == b.ConnectTimeout},
			{"timeout", a.Timeout == b.Timeout},
		} {
			if !f.same {
				errs = append(errs, &ConfigError{File: c.Path, Line: h.Line, Key: "handlers." + quoteKey(h.Class) + ".http." + f.key,
					Msg: "differs from handlers." + quoteKey(first.Class) + ".http." + f.key + "; every HTTP handler of a pool shares one token and one pair of timeouts"})
			}
		}
	}
	return errs
}

// SetHandler adds h, replacing the handler of the same class.
func (c *Config) SetHandler(h Handler) {
	i := slices.IndexFunc(c.Handlers, func(x Handler) bool { return x.Class == h.Class })
	if i >= 0 {
		c.Handlers[i] = h
	} else {
		c.Handlers = append(c.Handlers, h)
	}
	slices.SortStableFunc(c.Handlers, func(a, b Handler) int { return strings.Compare(a.Class, b.Class) })
}

// Processes is the number of children the config asks for.
func (c *Config) Processes() int {
	n := 0
	for _, s := range c.Sets {
		n += s.Processes
	}
	return n
}

// Child returns the node config of one process of set: the file's
// settings and the manager's flags, nothing else (the child reads no
// setting from its environment). A setting the file leaves out is the
// node's default, which is work's. SupervisorPID and MetricsAddr are left
// to the start of each child.
func (c *Config) Child(set QueueSet) node.Config {
	n := c.Work
	n.Redis = node.Redis{URL: c.Redis, Namespace: c.Namespace,
		TLSCAFile: c.RedisTLS.TLSCAFile, TLSCertFile: c.RedisTLS.TLSCertFile, TLSKeyFile: c.RedisTLS.TLSKeyFile,
		TLSServerName: c.RedisTLS.TLSServerName, TLSInsecureSkipVerify: c.RedisTLS.TLSInsecureSkipVerify,
		SentinelPassword: c.RedisTLS.SentinelPassword}
	n.Queues, n.Mass = set.Queues, set.Mass
	n.Concurrency = max(set.Concurrency, 1)
	n.Hostname, n.LogLevel, n.LogFormat = c.Hostname, c.LogLevel, c.LogFormat
	n.Polling, n.Fork = set.Polling, set.Fork
	n.ClassRetry = slices.Clone(c.Work.ClassRetry) // children never share a slice
	if set.Mass != "" {
		// the file's limits and rates count jobs of Resque queues; a mass
		// pool has its own caps (and its child would refuse them)
		n.Queues, n.Limits, n.Rates = "", nil, nil
	}
	if set.Interval > 0 {
		n.Interval = set.Interval
	}
	if set.Serial {
		n.Serial = protocol.LiteralQueues(set.Queues)
	}
	if set.Timeout > 0 {
		n.JobTimeout = set.Timeout
	}
	n.MaxJobs, n.MaxRSS, n.MaxAge = set.MaxJobs, set.MaxRSS, set.MaxAge
	for _, h := range c.Handlers {
		if h.HTTP == nil {
			n.Exec = append(n.Exec, h.Class+"="+h.Exec)
			continue
		}
		// Validate saw to it that every endpoint has the same token and timeouts.
		n.HTTP = append(n.HTTP, h.Class+"="+h.HTTP.URL)
		n.HTTPToken = h.HTTP.Token
		if h.HTTP.ConnectTimeout > 0 {
			n.HTTPConnectTimeout = h.HTTP.ConnectTimeout
		}
		if h.HTTP.Timeout > 0 {
			n.HTTPTimeout = h.HTTP.Timeout
		}
	}
	return n
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// validRedisURL reports whether rdb accepts the URL.
func validRedisURL(u string) error {
	_, err := rdb.NormalizeURL(u)
	return err
}

// Describe writes the resolved config for people: the dialect, the
// settings, and the node config every child of each queue set gets
// (secrets masked).
func (c *Config) Describe(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "config:       %s (%s format", c.Path, c.Format)
	if c.Format == FormatResquePool {
		env := c.Environment
		if env == "" {
			env = "none"
		}
		fmt.Fprintf(&b, ", environment %s", env)
	}
	b.WriteString(")\n")
	fmt.Fprintf(&b, "redis:        %s\n", orDefault(maskURL(c.Redis), "(work's default)"))
	fmt.Fprintf(&b, "namespace:    %s\n", orDefault(c.Namespace, protocol.DefaultNamespace))
	fmt.Fprintf(&b, "hostname:     %s\n", orDefault(c.Hostname, "(this machine's)"))
	fmt.Fprintf(&b, "kill_timeout: %s\n", orDuration(c.KillTimeout, DefaultKillTimeout))
	fmt.Fprintf(&b, "processes:    %d\n", c.Processes())
	if len(c.Handlers) > 0 {
		b.WriteString("handlers:\n")
		for _, h := range c.Handlers {
			if h.HTTP != nil {
				tok := ""
				if h.HTTP.Token != "" {
					tok = " (bearer token set)"
				}
				fmt.Fprintf(&b, "  %s: http %s%s\n", h.Class, h.HTTP.URL, tok)
			} else {
				fmt.Fprintf(&b, "  %s: exec %s\n", h.Class, h.Exec)
			}
		}
	}
	b.WriteString("queue sets:\n")
	for _, s := range c.Sets {
		mode := "blocking"
		if s.Polling {
			mode = "polling every " + s.Interval.String()
		}
		fmt.Fprintf(&b, "  %s: %d process(es) x %d slot(s), %s, fork %v, timeout %s (line %d)\n",
			s.Queues, s.Processes, max(s.Concurrency, 1), mode, s.Fork, timeoutText(s.Timeout), s.Line)
		b.WriteString("    node config: " + describeChild(c.Child(s)) + "\n")
	}
	b.WriteString("(each child also gets supervisor_pid, and metrics_addr with --metrics-addr, when it starts)\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func timeoutText(d time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return d.String()
}

// maskURL hides the password of a Redis URL (every form rdb accepts,
// Sentinel lists included).
func maskURL(raw string) string { return rdb.RedactURL(raw) }

// describeChild is n as one line of JSON without the settings left at
// their defaults (zero values), the Redis and Sentinel passwords and the
// HTTP and metrics tokens masked.
func describeChild(n node.Config) string {
	n.Redis.URL = maskURL(n.Redis.URL)
	if n.HTTPToken != "" {
		n.HTTPToken = "***"
	}
	if n.Redis.SentinelPassword != "" {
		n.Redis.SentinelPassword = "***"
	}
	if n.MetricsToken != "" {
		n.MetricsToken = "***"
	}
	return nonZeroJSON(reflect.ValueOf(n))
}

// nonZeroJSON writes the fields of struct v that are not zero, as JSON
// under their json names, in field order.
func nonZeroJSON(v reflect.Value) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range v.NumField() {
		f := v.Field(i)
		if f.IsZero() {
			continue
		}
		if b.Len() > 1 {
			b.WriteString(",")
		}
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		b.WriteString(strconv.Quote(name) + ":")
		if d, ok := f.Interface().(time.Duration); ok {
			b.WriteString(strconv.Quote(d.String())) // as node.Config's JSON has it
			continue
		}
		if f.Kind() == reflect.Struct {
			b.WriteString(nonZeroJSON(f))
			continue
		}
		var val strings.Builder
		enc := json.NewEncoder(&val)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(f.Interface()) // plain values always encode
		b.WriteString(strings.TrimSuffix(val.String(), "\n"))
	}
	b.WriteString("}")
	return b.String()
}
