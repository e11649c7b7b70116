package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/metrics"
	"github.com/resque-go/resque-go/internal/poolrun"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/pool"
	"github.com/resque-go/resque-go/worker"
)

// resque-pool's default config locations, tried in order when --config is
// not given.
var poolDefaultConfigs = []string{"resque-pool.yml", "config/resque-pool.yml"}

func poolCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "pool",
		Usage: "run and supervise worker processes from a config file (resque-go, resque-pool or resque-v3 format)",
		UsageText: "resque-go pool --config FILE [--environment production]\n" +
			"resque-go pool check --config FILE\n" +
			"resque-go pool status [--json] [--host web-1]",
		Description: "Starts the worker processes the config file asks for (each `resque-go work` of this\n" +
			"same binary), restarts those that die with a capped backoff (1 s doubling to 60 s), and\n" +
			"prunes the Redis registrations of dead children, recovering their jobs.\n\n" +
			"Signals: HUP reloads the file and converges (unchanged children keep running, removed or\n" +
			"changed ones get QUIT, new ones start; a file with errors is logged and ignored). QUIT:\n" +
			"children finish their jobs, then the pool exits. TERM, INT: children get TERM, and KILL\n" +
			"after --kill-timeout. USR1, USR2, CONT are passed to the children. Children exit on\n" +
			"their own when the manager disappears.\n\n" +
			"Flags (and their environment variables) win over the file. See examples/pool.yml.",
		Flags:  poolConfigFlags(),
		Action: runPool,
		Subcommands: []*ucli.Command{
			{
				Name:      "check",
				Usage:     "validate a config file and print what each child would run",
				UsageText: "resque-go pool check --config FILE [--environment production]",
				Flags:     poolConfigFlags(),
				Action:    runPoolCheck,
			},
			{
				Name:      "status",
				Usage:     "list the children of every running pool (pid, queues, state, restarts, uptime, RSS, CPU)",
				UsageText: "resque-go pool status [--json] [--host web-1]",
				Description: "Reads the status record each pool manager refreshes in Redis\n" +
					"(<ns>:resque-go:pool:<host>:<pid>), so it shows the pools of every host.",
				Flags: append(redisFlags(),
					&ucli.BoolFlag{Name: "json", Usage: "print the records as JSON (stable field names, see README)"},
					&ucli.StringFlag{Name: "host", Usage: "show only this host's pools"},
				),
				Action: runPoolStatus,
			},
		},
	}
}

// poolConfigFlags are the flags of pool and pool check: the file, and
// settings that override it.
func poolConfigFlags() []ucli.Flag {
	return append(append(redisFlags(), handlerFlags()...),
		&ucli.StringFlag{Name: "config", Usage: "config file (default: resque-pool.yml or config/resque-pool.yml, as resque-pool)", EnvVars: []string{"RESQUE_POOL_CONFIG"}},
		// -c is --concurrency in work: here it is caught to say so, not
		// taken as --config (resque-pool's own -c).
		&ucli.BoolFlag{Name: "c", Hidden: true},
		&ucli.StringFlag{Name: "environment", Aliases: []string{"E"}, Usage: "environment section of a resque-pool file to apply", EnvVars: []string{"RACK_ENV", "RAILS_ENV", "RESQUE_ENV"}},
		&ucli.StringFlag{Name: "hostname", Usage: "host name in the children's worker ids (default: this machine's)", EnvVars: []string{"RESQUE_HOSTNAME"}},
		&ucli.StringFlag{Name: "kill-timeout", Usage: "after passing TERM, how long to wait for the children before killing them (default 10, or the file's kill_timeout)", EnvVars: []string{"RESQUE_POOL_KILL_TIMEOUT"}},
		&ucli.StringFlag{Name: "metrics-addr", Usage: "serve the manager's /metrics, /healthz and /readyz here (e.g. 127.0.0.1:9300; a bare port listens on 127.0.0.1 only); each child gets the next free port for its own", EnvVars: []string{"RESQUE_METRICS_ADDR"}},
		metricsTokenFlag(),
		&ucli.StringFlag{Name: "status-interval", Usage: "how often the status record is refreshed", Value: "5", Hidden: true},
	)
}

// noShortConfig refuses -c, which means --concurrency to work.
func noShortConfig(c *ucli.Context) error {
	if c.Bool("c") {
		return usagef("-c is not a pool flag (in work it means --concurrency): use --config FILE")
	}
	return nil
}

func runPool(c *ucli.Context) error {
	if err := noShortConfig(c); err != nil {
		return err
	}
	if c.NArg() > 0 {
		return usagef("pool: unknown command %q (want check or status, or no argument to run the pool)", c.Args().First())
	}
	cfg, err := loadPoolConfig(c)
	if err != nil {
		return err
	}
	every, err := parseSeconds("status-interval", c.String("status-interval"))
	if err != nil {
		return err
	}
	log, err := poolLogger(c.App.ErrWriter, cfg)
	if err != nil {
		return err
	}
	r := cfg.RedisTLS
	r.URL, r.Namespace = cfg.Redis, cfg.Namespace
	client, err := clientFor(c, r)
	if err != nil {
		return err
	}
	defer client.Close()
	if err := refusedAtStart(c.Context, client); err != nil {
		return err
	}
	addr := c.String("metrics-addr")
	if addr != "" {
		if _, err := metrics.ListenAddr(addr); err != nil {
			return usagef("--metrics-addr %q: %v", addr, err)
		}
	}
	sup, err := poolrun.New(poolrun.Params{Client: client, Logger: &log, StatusInterval: every,
		Stdout: c.App.Writer, Stderr: c.App.ErrWriter, MetricsAddr: addr, MetricsToken: c.String("metrics-token"),
		Env: childEnv(os.Environ())}, cfg)
	var me *pool.MetricsError
	if errors.As(err, &me) {
		return usagef("--metrics-addr %q: %v", addr, me.Err)
	}
	if err != nil {
		return err
	}
	if bound := sup.MetricsAddr(); bound != "" {
		log.Info().Str("addr", bound).Msg("serving /metrics, /healthz and /readyz; children use the following ports")
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGCONT)
	defer signal.Stop(sigs)

	log.Info().Str("config", cfg.Path).Str("format", cfg.Format).Int("processes", cfg.Processes()).Msg("pool starting")
	warnIgnored(&log, cfg)
	sup.Start(context.Background())
	ctxDone := c.Context.Done()
	for {
		select {
		case <-sup.Done():
			return nil
		case <-ctxDone:
			ctxDone = nil
			go sup.Shutdown()
		case s := <-sigs:
			log.Info().Str("signal", s.String()).Msg("signal received")
			switch s {
			case syscall.SIGHUP:
				reloadPool(c, sup, &log)
			case syscall.SIGQUIT:
				go sup.Stop()
			case syscall.SIGTERM, syscall.SIGINT:
				go sup.Shutdown()
			default:
				sup.Signal(s.(syscall.Signal))
			}
		}
	}
}

// refusedAtStart checks the pool's Redis once before any child starts: a
// server that refuses the credentials (or the TLS settings) would refuse
// every child too, which would only crash-loop, so the pool exits 1 with
// the reason, as work does. An unreachable server is not an error here:
// the children wait for it, as work does.
func refusedAtStart(ctx context.Context, client *rdb.Client) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Ping(ctx); rdb.IsFatal(err) {
		return err
	}
	return nil
}

// workSettingVars are the environment variables resque-go work reads as
// settings: each flag's own and its older names (envAliases).
func workSettingVars() []string {
	var names []string
	for _, f := range workCommand(nil).Flags {
		if ev, ok := f.(interface{ GetEnvVars() []string }); ok {
			names = append(names, ev.GetEnvVars()...)
		}
		names = append(names, envAliases[f.Names()[0]]...)
	}
	return names
}

// childEnv is env without workSettingVars: a pool's children get every
// setting in their node config, so a variable of the manager's environment
// cannot change them behind the file's back (and the child refuses to
// start if one is set). The rest (PATH, HOME, TZ, RAILS_ENV, GOMAXPROCS...)
// passes on to them and to their jobs.
func childEnv(env []string) []string {
	drop := map[string]bool{}
	for _, name := range workSettingVars() {
		drop[name] = true
	}
	var out []string
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); !drop[name] {
			out = append(out, kv)
		}
	}
	return out
}

// reloadPool reads the file again; a file with errors leaves the running
// config in place.
func reloadPool(c *ucli.Context, sup *poolrun.Supervisor, log *zerolog.Logger) {
	cfg, err := loadPoolConfig(c)
	if err == nil {
		err = sup.Reload(cfg)
	}
	if err == nil {
		warnIgnored(log, cfg)
	}
	if err != nil {
		log.Error().Err(err).Msg("config not reloaded; the running one stays in effect")
	}
}

func runPoolCheck(c *ucli.Context) error {
	if err := noShortConfig(c); err != nil {
		return err
	}
	if c.NArg() > 0 {
		return usagef("pool check takes no arguments (got %q); give the file with --config", c.Args().First())
	}
	cfg, err := loadPoolConfig(c)
	if err != nil {
		return err
	}
	if w := cfg.Warning(); w != "" {
		fmt.Fprintln(c.App.ErrWriter, "resque-go: warning: "+w)
	}
	if err := cfg.Describe(c.App.Writer); err != nil {
		return err
	}
	for _, note := range fileOverrides(c, cfg) {
		fmt.Fprintln(c.App.Writer, note)
	}
	return nil
}

// fileOverrides says which of the file's redis and namespace settings a
// flag or an environment variable replaced, and which one did: a REDIS_URL
// left in the environment silently wins over the file otherwise.
func fileOverrides(c *ucli.Context, cfg *pool.Config) []string {
	file, err := pool.Load(cfg.Path, pool.LoadOptions{Environment: c.String("environment")})
	if err != nil {
		return nil
	}
	var notes []string
	for _, s := range []struct{ name, inFile, used string }{
		{"redis", rdb.RedactURL(file.Redis), rdb.RedactURL(cfg.Redis)},
		{"namespace", file.Namespace, cfg.Namespace},
	} {
		if s.used == "" {
			s.used = `""`
		}
		if s.inFile != "" && s.inFile != s.used {
			notes = append(notes, fmt.Sprintf("%s: %s from %s, not the file's %s", s.name, s.used, settingSource(c, s.name), s.inFile))
		}
	}
	return notes
}

// settingSource names where flag name's value came from: the first of its
// environment variables that holds that value, else the flag.
func settingSource(c *ucli.Context, name string) string {
	var envs []string
	for _, f := range c.Command.Flags {
		if sf, ok := f.(*ucli.StringFlag); ok && sf.Name == name {
			envs = sf.EnvVars
		}
	}
	for _, env := range append(envs, envAliases[name]...) {
		if v, ok := os.LookupEnv(env); ok && v != "" && strings.TrimSuffix(v, ":") == strings.TrimSuffix(c.String(name), ":") {
			return env
		}
	}
	return "--" + name
}

// warnIgnored logs the settings of a resque-v3 file that do not apply, in
// one event.
func warnIgnored(log *zerolog.Logger, cfg *pool.Config) {
	if len(cfg.Ignored) > 0 {
		log.Warn().Str("config", cfg.Path).Strs("ignored", cfg.Ignored).Msg("ignored the resque-v3 settings that resque-go does not use")
	}
}

func runPoolStatus(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("pool status takes no arguments (got %q)", c.Args().First())
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	recs, warnings, err := poolrun.ReadStatus(c.Context, client, c.String("host"))
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(c.App.ErrWriter, "resque-go: skipped a pool record: "+w)
	}
	if c.Bool("json") {
		return pool.WriteStatusJSON(c.App.Writer, recs)
	}
	return pool.RenderStatus(c.App.Writer, recs)
}

// loadPoolConfig reads the config file and applies the flags that override
// it. Every problem is a usage error (exit 2).
func loadPoolConfig(c *ucli.Context) (*pool.Config, error) {
	path := c.String("config")
	if path == "" {
		for _, p := range poolDefaultConfigs {
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			return nil, usagef("no config file: give --config FILE (or create %s)", strings.Join(poolDefaultConfigs, " or "))
		}
	}
	cfg, err := pool.Load(path, pool.LoadOptions{Environment: c.String("environment")})
	if err != nil {
		return nil, usageError{err}
	}
	if err := applyPoolFlags(c, cfg); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, usageError{err}
	}
	return cfg, nil
}

// given reports whether flag name has a value from the command line or its
// environment variable: an empty one (REDIS_URL= left in a shell or a unit
// file) does not replace the file's setting.
func given(c *ucli.Context, name string) bool {
	return c.IsSet(name) && c.String(name) != ""
}

// applyPoolFlags lets flags and their environment variables win over the
// file; settings neither gives get the flags' defaults.
func applyPoolFlags(c *ucli.Context, cfg *pool.Config) error {
	cfg.RedisTLS = redisConfig(c)
	cfg.RedisTLS.URL, cfg.RedisTLS.Namespace = "", ""
	if given(c, "redis") || cfg.Redis == "" {
		if _, err := rdb.NormalizeURL(c.String("redis")); err != nil {
			return usagef("--redis: %v", err)
		}
		cfg.Redis = c.String("redis")
	}
	if given(c, "namespace") || cfg.Namespace == "" {
		cfg.Namespace = strings.TrimSuffix(c.String("namespace"), ":")
	}
	if given(c, "hostname") {
		h := c.String("hostname")
		if h == "" || strings.ContainsAny(h, ": \t") {
			return usagef("--hostname %q: want a name without ':' or spaces", h)
		}
		cfg.Hostname = h
	}
	if given(c, "log-level") || cfg.LogLevel == "" {
		cfg.LogLevel = strings.ToLower(c.String("log-level"))
	}
	if given(c, "log-format") || cfg.LogFormat == "" {
		cfg.LogFormat = c.String("log-format")
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, cfg.LogLevel) {
		return usagef("--log-level %q: want debug, info, warn or error", cfg.LogLevel)
	}
	if cfg.LogFormat != "console" && cfg.LogFormat != "json" {
		return usagef("--log-format %q: want console or json", cfg.LogFormat)
	}
	// VERBOSE and VVERBOSE lower the level of the manager and its children,
	// as work's --verbose and --very-verbose do (children used to read them
	// from the environment they inherited).
	level, _ := zerolog.ParseLevel(cfg.LogLevel)
	if c.Bool("verbose") {
		level = min(level, zerolog.InfoLevel)
	}
	if c.Bool("very-verbose") {
		level = zerolog.DebugLevel
	}
	cfg.LogLevel = level.String()
	if c.IsSet("kill-timeout") {
		d, err := parseSeconds("kill-timeout", c.String("kill-timeout"))
		if err != nil {
			return err
		}
		if d <= 0 {
			return usagef("--kill-timeout %q: must be more than 0", c.String("kill-timeout"))
		}
		cfg.KillTimeout = d
	}
	for _, name := range []string{"exec", "http"} {
		for _, spec := range c.StringSlice(name) {
			class, target, ok := strings.Cut(spec, "=")
			class, target = strings.TrimSpace(class), strings.TrimSpace(target)
			if !ok || class == "" || target == "" {
				return usagef("--%s %q: want 'Class=...' or '*=...'", name, spec)
			}
			h := pool.Handler{Class: class, Exec: target}
			if name == "http" {
				if !strings.HasPrefix(target, "http://") && !strings.HasPrefix(target, "https://") {
					return usagef("--http %q: the URL must start with http:// or https://", spec)
				}
				if err := worker.CheckHTTPEndpoint(target); err != nil {
					return usagef("--http %q: %v", spec, err)
				}
				h = pool.Handler{Class: class, HTTP: &pool.HTTPEndpoint{URL: target}}
			}
			cfg.SetHandler(h)
		}
	}
	return applyHTTPFlags(c, cfg)
}

// applyHTTPFlags sets the token and timeouts given as flags on every HTTP
// handler (work takes one set per process).
func applyHTTPFlags(c *ucli.Context, cfg *pool.Config) error {
	var connect, total time.Duration
	var err error
	if c.IsSet("http-connect-timeout") {
		if connect, err = parseSeconds("http-connect-timeout", c.String("http-connect-timeout")); err != nil {
			return err
		}
	}
	if c.IsSet("http-timeout") {
		if total, err = parseSeconds("http-timeout", c.String("http-timeout")); err != nil {
			return err
		}
	}
	for i := range cfg.Handlers {
		e := cfg.Handlers[i].HTTP
		if e == nil {
			continue
		}
		if c.IsSet("http-token") {
			e.Token = c.String("http-token")
		}
		if connect > 0 {
			e.ConnectTimeout = connect
		}
		if total > 0 {
			e.Timeout = total
		}
	}
	return nil
}

// poolLogger logs as the children do, at the config's level and format.
func poolLogger(w io.Writer, cfg *pool.Config) (zerolog.Logger, error) {
	name := cfg.LogLevel
	if os.Getenv("VVERBOSE") != "" {
		name = "debug"
	}
	level, err := zerolog.ParseLevel(name)
	if err != nil || name == "" {
		return zerolog.Logger{}, usagef("--log-level %q: want debug, info, warn or error", name)
	}
	log, err := buildLogger(w, level, cfg.LogFormat)
	if err != nil {
		return zerolog.Logger{}, err
	}
	return log.With().Str("component", "pool").Logger(), nil
}
