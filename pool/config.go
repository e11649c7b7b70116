package pool

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
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
	// default); it reaches them in REDIS_URL, never on the command line,
	// where ps would show a password.
	Redis     string
	Namespace string
	// Hostname is the host part of the children's worker ids; "" means
	// this machine's name.
	Hostname  string
	LogLevel  string
	LogFormat string
	// FailRetries is work's --fail-retries; 0 leaves the work default.
	FailRetries int
	// TermTimeout is the children's --term-timeout (nil: work's default).
	TermTimeout *time.Duration
	// KillTimeout is how long the manager waits after passing TERM before
	// it kills the children that are still running; 0 means 10 s.
	KillTimeout time.Duration

	// Work settings passed to every child as the work flag of the same name
	// (retry_backoff is --retry-backoff) when the file gives them; unset
	// (""/nil) leaves work's default or its environment variable.
	RetryBackoff      string       // none, fixed:30s, exp:BASE[:MAX[:JITTER]]
	ClassRetry        []ClassRetry // sorted by class
	MaxRecoveries     *int
	HeartbeatInterval *time.Duration
	Mover             *bool
	RubyPrune         *bool
	GracefulTerm      *bool
	DirtyExitOnTerm   *bool

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

// ClassRetry overrides the retry policy of one class: Spec is
// ATTEMPTS[:BACKOFF], as work's --class-retry takes it after "Class=".
type ClassRetry struct {
	Class string
	Spec  string
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

// ChildSpec is how a child process is started: the arguments after the
// binary's name, and variables added to the manager's environment.
type ChildSpec struct {
	Args []string
	Env  []string
}

// key identifies a spec: children with equal keys are interchangeable.
func (s ChildSpec) key() string {
	return strings.Join(s.Args, "\x00") + "\x01" + strings.Join(s.Env, "\x00")
}

// Child returns the work command that runs one process of set. Every
// setting whose environment variable the child could inherit from the
// manager is passed explicitly, so the file alone decides.
func (c *Config) Child(set QueueSet) ChildSpec {
	ns := c.Namespace
	if ns == "" {
		ns = protocol.DefaultNamespace
	}
	args := []string{"work",
		"--queues", set.Queues,
		"--concurrency", strconv.Itoa(max(set.Concurrency, 1)),
		"--namespace", ns,
		"--log-level", orDefault(c.LogLevel, "info"),
		"--log-format", orDefault(c.LogFormat, "console"),
		"--polling=" + strconv.FormatBool(set.Polling),
		"--interval", seconds(orDuration(set.Interval, DefaultInterval)),
		"--timeout", seconds(set.Timeout),
		"--fork=" + strconv.FormatBool(set.Fork),
		// One port cannot serve several children: RESQUE_METRICS_ADDR of
		// the manager's environment must not reach them.
		"--metrics-addr=",
	}
	if c.Hostname != "" {
		args = append(args, "--hostname", c.Hostname)
	}
	if c.FailRetries > 0 {
		args = append(args, "--fail-retries", strconv.Itoa(c.FailRetries))
	}
	if c.TermTimeout != nil {
		args = append(args, "--term-timeout", seconds(*c.TermTimeout))
	}
	if c.RetryBackoff != "" {
		args = append(args, "--retry-backoff", c.RetryBackoff)
	}
	for _, r := range c.ClassRetry {
		args = append(args, "--class-retry", r.Class+"="+r.Spec)
	}
	if c.MaxRecoveries != nil {
		args = append(args, "--max-recoveries", strconv.Itoa(*c.MaxRecoveries))
	}
	if c.HeartbeatInterval != nil {
		args = append(args, "--heartbeat-interval", seconds(*c.HeartbeatInterval))
	}
	for _, f := range []struct {
		flag string
		v    *bool
	}{{"mover", c.Mover}, {"ruby-prune", c.RubyPrune}, {"graceful-term", c.GracefulTerm}, {"dirty-exit-on-term", c.DirtyExitOnTerm}} {
		if f.v != nil {
			args = append(args, "--"+f.flag+"="+strconv.FormatBool(*f.v))
		}
	}
	var env []string
	if c.Redis != "" {
		env = append(env, "REDIS_URL="+c.Redis)
	}
	var http *HTTPEndpoint
	for _, h := range c.Handlers {
		switch {
		case h.HTTP != nil:
			args = append(args, "--http", h.Class+"="+h.HTTP.URL)
			http = h.HTTP
		default:
			args = append(args, "--exec", h.Class+"="+h.Exec)
		}
	}
	if http != nil {
		if http.ConnectTimeout > 0 {
			args = append(args, "--http-connect-timeout", seconds(http.ConnectTimeout))
		}
		if http.Timeout > 0 {
			args = append(args, "--http-timeout", seconds(http.Timeout))
		}
		if http.Token != "" {
			env = append(env, "RESQUE_HTTP_TOKEN="+http.Token)
		}
	}
	return ChildSpec{Args: args, Env: env}
}

// seconds writes d as the work command reads it: seconds, fraction allowed.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

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
// settings, and the work command every child of each queue set runs
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
		spec := c.Child(s)
		b.WriteString("    ")
		for _, e := range spec.Env {
			name, _, _ := strings.Cut(e, "=")
			switch name {
			case "REDIS_URL":
				e = name + "=" + maskURL(c.Redis)
			case "RESQUE_HTTP_TOKEN":
				e = name + "=***"
			}
			b.WriteString(shellQuote(e) + " ")
		}
		b.WriteString("resque-go")
		for _, a := range spec.Args {
			b.WriteString(" " + shellQuote(a))
		}
		b.WriteString(" --supervisor-pid <manager pid>\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func timeoutText(d time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return d.String()
}

// maskURL hides the password of a Redis URL.
func maskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxx")
	}
	return u.String()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
