package cli

import (
	"cmp"
	"errors"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

func workCommand(reg *worker.Registry) *ucli.Command {
	flags := append(append(redisFlags(), handlerFlags()...),
		&ucli.BoolFlag{Name: "fork", Usage: "run every job in a fresh child process (this binary re-executed; each slot starts its next one ahead), isolating crashes and leaks", EnvVars: []string{"RESQUE_FORK"}},
		&ucli.StringFlag{Name: "queues", Aliases: []string{"q"}, Usage: "queues in priority order: high,low; * and globs expand against the queues set; !pattern excludes", EnvVars: []string{"QUEUE"}},
		&ucli.StringFlag{Name: "mass", Usage: "instead of --queues, work a mass-queue pool: static:POOL (its sources round-robin) or unit:POOL:UNIT (a batch pool's unit); resque-go pool sets it from a mass config", EnvVars: []string{"RESQUE_MASS"}},
		&ucli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Usage: "job slots in this process, each with its own worker id", Value: 1, EnvVars: []string{"COUNT"}},
		&ucli.StringFlag{Name: "interval", Usage: "poll interval when polling (seconds, or a duration such as 500ms); 0: work until every queue is empty, then exit (Ruby's INTERVAL=0)", Value: "5", EnvVars: []string{"INTERVAL"}},
		&ucli.StringSliceFlag{Name: "serial", Usage: "run this queue one job at a time across every process (a queue named in --queues; repeatable)", EnvVars: []string{"RESQUE_SERIAL"}},
		&ucli.BoolFlag{Name: "polling", Usage: "poll every --interval instead of blocking waits", EnvVars: []string{"RESQUE_POLLING"}},
		&ucli.StringFlag{Name: "hostname", Usage: "host name in worker ids and queue statistics (default: this machine's)", EnvVars: []string{"RESQUE_HOSTNAME"}},
		&ucli.StringFlag{Name: "timeout", Usage: "per-job timeout; 0 means none (seconds or a duration)", Value: "0", EnvVars: []string{"RESQUE_JOB_TIMEOUT"}},
		&ucli.StringFlag{Name: "term-timeout", Usage: "on TERM/INT, how long cancelled jobs get before they are requeued (0: at once)", Value: "4", EnvVars: []string{"RESQUE_TERM_TIMEOUT"}},
		&ucli.BoolFlag{Name: "graceful-term", Usage: "TERM acts like QUIT: finish running jobs, then exit", EnvVars: []string{"GRACEFUL_TERM"}},
		&ucli.BoolFlag{Name: "dirty-exit-on-term", Usage: "record jobs interrupted by TERM/INT in failed as Resque::DirtyExit instead of requeueing them", EnvVars: []string{"RESQUE_DIRTY_EXIT_ON_TERM"}},
		&ucli.StringFlag{Name: "heartbeat-interval", Usage: "heartbeat interval, 1 to 60 seconds (seconds or a duration)", Value: "5", EnvVars: []string{"WORKER_HEARTBEAT_INTERVAL"}},
		&ucli.IntFlag{Name: "max-recoveries", Usage: "how often a dead worker's job is requeued before it is recorded as failed", Value: 3, EnvVars: []string{"RESQUE_MAX_RECOVERIES"}},
		&ucli.IntFlag{Name: "fail-retries", Usage: "attempts a failing job gets in all (resque-v3's fail_retries); 1 never retries", Value: worker.DefaultMaxAttempts, EnvVars: []string{"RESQUE_FAIL_RETRIES"}},
		&ucli.StringFlag{Name: "retry-backoff", Usage: "delay before a retry: none, fixed:30s, or exp:BASE[:MAX[:JITTER]] (exp:2s:10m:0.2)", Value: "none", EnvVars: []string{"RESQUE_RETRY_BACKOFF"}},
		&ucli.StringSliceFlag{Name: "class-retry", Usage: "'Class=ATTEMPTS[:BACKOFF]' overrides the retry policy of one class (MailJob=5:exp:2s:10m); repeatable"},
		&ucli.BoolFlag{Name: "mover", Usage: "promote due jobs of the delayed queue (retries with backoff, reschedules; resque-scheduler's layout); safe with other movers", Value: true, EnvVars: []string{"RESQUE_MOVER"}},
		&ucli.StringFlag{Name: "metrics-addr", Usage: "serve Prometheus /metrics, /healthz (liveness) and /readyz (readiness) on this address (e.g. 127.0.0.1:9292; a bare port, 9292 or :9292, listens on 127.0.0.1 only, 0.0.0.0:9292 on every interface); empty: off", EnvVars: []string{"RESQUE_METRICS_ADDR"}},
		metricsTokenFlag(),
		&ucli.IntFlag{Name: "supervisor-pid", Hidden: true, Usage: "exit (as on TERM) when this process is no longer our parent; set by resque-go pool"},
		&ucli.BoolFlag{Name: "ruby-prune", Usage: "record a dead worker's job as failed at once (Ruby Resque's behaviour) instead of requeueing it", EnvVars: []string{"RESQUE_RUBY_PRUNE"}},
		&ucli.IntFlag{Name: "node-config-fd", Hidden: true, Usage: "read every setting, as node.Config JSON, from this file descriptor (no other setting may be given); set by resque-go pool"},
	)
	return &ucli.Command{
		Name:  "work",
		Usage: "run jobs from Resque queues",
		Description: "Drains resque:queue:<q> lists in strict priority order.\n\n" +
			"Signals: QUIT finishes running jobs and exits; TERM and INT cancel running jobs, wait\n" +
			"--term-timeout, then requeue what did not finish; USR1 cancels running jobs and goes on;\n" +
			"USR2 pauses, CONT resumes. The key <ns>:pause-all-workers = \"true\" pauses every worker.",
		Flags:  flags,
		Action: func(c *ucli.Context) error { return runWork(c, reg) },
	}
}

func runWork(c *ucli.Context, reg *worker.Registry) error {
	if c.NArg() > 0 {
		return usagef("work takes no arguments (got %q); give queues with --queues", c.Args().First())
	}
	var cfg node.Config
	var err error
	if c.IsSet("node-config-fd") {
		cfg, err = configFromFD(c)
	} else {
		cfg, err = configFromFlags(c)
	}
	if err != nil {
		return err
	}
	level, _ := zerolog.ParseLevel(strings.ToLower(strings.TrimSpace(cmp.Or(cfg.LogLevel, "info"))))
	log, err := buildLogger(c.App.ErrWriter, level, cmp.Or(cfg.LogFormat, "console"))
	if err != nil {
		return err
	}
	opts := []node.Option{node.WithLogger(log)}
	if cfg.Fork {
		fork, err := forkConfig(cfg)
		if err != nil {
			return err
		}
		opts = append(opts, node.WithFork(fork))
	}
	n, err := node.New(cfg, reg, opts...)
	if err != nil {
		return nodeError(err)
	}
	// A worker finishes its shutdown (requeue, unregister) even when the
	// reader of its stderr is gone, e.g. a pool manager killed with -9 and
	// its children told by Pdeathsig: without this, Go kills the process
	// with SIGPIPE at its next log line, leaving its ids registered.
	signal.Ignore(syscall.SIGPIPE)
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGCONT)
	defer signal.Stop(sigs)

	started := make(chan error, 1)
	go func() { started <- n.Start(c.Context) }()
	for {
		select {
		case err := <-started:
			started = nil
			if err != nil {
				return nodeError(err)
			}
		case <-n.Done():
			if started != nil {
				// Done closes before Start returns when it fails.
				if err := <-started; err != nil {
					return nodeError(err)
				}
			}
			if limit, ok := n.Recycled(); ok {
				return recycledError{limit}
			}
			return nil
		case s := <-sigs:
			log.Info().Str("signal", s.String()).Msg("signal received")
			switch s {
			case syscall.SIGQUIT:
				go n.Stop()
			case syscall.SIGTERM, syscall.SIGINT:
				if cfg.GracefulTerm {
					go n.Stop()
				} else {
					go n.Shutdown()
				}
			case syscall.SIGUSR1:
				n.CancelJobs()
			case syscall.SIGUSR2:
				n.Pause()
			case syscall.SIGCONT:
				n.Resume()
			}
		}
	}
}

// nodeError maps an error of package node to its exit code: one about the
// config is a usage error (exit 2), anything else a runtime failure. A
// config error names node.Config fields; the user gave flags, so the
// message names those instead.
func nodeError(err error) error {
	if errors.Is(err, node.ErrConfig) {
		return usageError{flagWordsError{err}}
	}
	return err
}

// flagWordsError is a node config error said in flags: Config.Concurrency
// reads as --concurrency.
type flagWordsError struct{ err error }

func (e flagWordsError) Error() string {
	return configFlags.Replace(strings.TrimPrefix(e.err.Error(), "node: "))
}
func (e flagWordsError) Unwrap() error { return e.err }

// configFlags names the flag of each node.Config (and SchedulerConfig)
// field that work and scheduler take. A longer field name comes before a
// shorter one it begins with.
var configFlags = strings.NewReplacer(
	"Config.Mass", "--mass", "Config.Queues", "--queues", "Config.Serial", "--serial",
	"Config.Concurrency", "--concurrency", "Config.LogLevel", "--log-level", "Config.LogFormat", "--log-format",
	"Config.SupervisorPID", "--supervisor-pid", "Config.MetricsAddr", "--metrics-addr",
	"Config.HeartbeatInterval", "--heartbeat-interval", "Config.Interval", "--interval",
	"Config.JobTimeout", "--timeout", "Config.TermTimeout", "--term-timeout",
	"Config.FailRetries", "--fail-retries", "Config.RetryBackoff", "--retry-backoff", "Config.ClassRetry", "--class-retry",
	"Config.Exec", "--exec", "Config.HTTPConnectTimeout", "--http-connect-timeout", "Config.HTTPTimeout", "--http-timeout",
	"Config.HTTP", "--http", "SchedulerConfig.Hostname", "--hostname", "SchedulerConfig.MetricsAddr", "--metrics-addr",
)

// configFromFlags maps work's flags (and their environment variables) onto
// a node.Config, checked.
func configFromFlags(c *ucli.Context) (node.Config, error) {
	cfg := node.Config{
		Redis:           redisConfig(c),
		Queues:          c.String("queues"),
		Mass:            c.String("mass"),
		Concurrency:     c.Int("concurrency"),
		Hostname:        c.String("hostname"),
		Polling:         c.Bool("polling"),
		Serial:          c.StringSlice("serial"),
		GracefulTerm:    c.Bool("graceful-term"),
		DirtyExitOnTerm: c.Bool("dirty-exit-on-term"),
		MaxRecoveries:   c.Int("max-recoveries"),
		RubyPrune:       c.Bool("ruby-prune"),
		FailRetries:     c.Int("fail-retries"),
		RetryBackoff:    c.String("retry-backoff"),
		ClassRetry:      c.StringSlice("class-retry"),
		NoMover:         !c.Bool("mover"),
		MetricsAddr:     c.String("metrics-addr"),
		MetricsToken:    c.String("metrics-token"),
		Fork:            c.Bool("fork"),
		Exec:            c.StringSlice("exec"),
		HTTP:            c.StringSlice("http"),
		HTTPToken:       c.String("http-token"),
		LogLevel:        c.String("log-level"),
		LogFormat:       c.String("log-format"),
		SupervisorPID:   c.Int("supervisor-pid"),
	}
	if err := durationsFromFlags(c, &cfg); err != nil {
		return cfg, err
	}
	// --max-recoveries 0 means none; node.Config reads 0 as the default.
	if cfg.MaxRecoveries == 0 {
		cfg.MaxRecoveries = -1
	}
	// --verbose and --very-verbose resolve into the level (a bad level is
	// left for Validate to name).
	if level, err := logLevel(c); err == nil {
		cfg.LogLevel = level.String()
	}
	if cfg.Queues == "" && cfg.Mass == "" {
		return cfg, usagef("no queues: give --queues high,low (or QUEUE=high,low)")
	}
	if err := cfg.Validate(); err != nil {
		return cfg, nodeError(err)
	}
	// node.Config reads 0 and "" as the default; given on the command line
	// or in the environment, these always were mistakes.
	switch {
	case cfg.Concurrency == 0:
		return cfg, usagef("--concurrency 0: want 1 to %d", node.MaxConcurrency)
	case cfg.FailRetries == 0:
		return cfg, usagef("--fail-retries 0: want 1 or more (1 never retries)")
	case cfg.HeartbeatInterval == 0:
		return cfg, usagef("--heartbeat-interval %q: want 1 to 60 seconds (heartbeats are stored to the second; Ruby Resque prunes a worker whose heartbeat is 300 s old)", c.String("heartbeat-interval"))
	}
	if _, err := newLogger(c); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// durationsFromFlags reads work's duration flags into cfg. --interval 0 is
// Ruby's INTERVAL=0 (Drain), --term-timeout 0 takes jobs back at once (a
// negative TermTimeout); node.Config reads 0 as the default.
func durationsFromFlags(c *ucli.Context, cfg *node.Config) error {
	for _, f := range []struct {
		flag string
		d    *time.Duration
	}{
		{"interval", &cfg.Interval}, {"heartbeat-interval", &cfg.HeartbeatInterval}, {"timeout", &cfg.JobTimeout},
		{"term-timeout", &cfg.TermTimeout}, {"http-connect-timeout", &cfg.HTTPConnectTimeout}, {"http-timeout", &cfg.HTTPTimeout},
	} {
		v := c.String(f.flag)
		d, err := parseSeconds(f.flag, v)
		if err != nil {
			return err
		}
		*f.d = d
		if f.flag == "heartbeat-interval" && d != 0 && (d < time.Second || d > time.Minute) {
			return usagef("--heartbeat-interval %q: want 1 to 60 seconds (heartbeats are stored to the second; Ruby Resque prunes a worker whose heartbeat is 300 s old)", v)
		}
		if d != 0 || strings.TrimSpace(v) == "" {
			continue
		}
		switch f.flag {
		case "interval":
			cfg.Drain = true
		case "term-timeout":
			cfg.TermTimeout = -1
		}
	}
	if cfg.Mass != "" && !c.IsSet("interval") {
		cfg.Interval = 0 // a mass pool's default poll (1 s), not work's 5 s
	}
	return nil
}

// configFromFD reads the whole config as JSON from --node-config-fd (a
// pool manager's pipe), which no other setting may join: the child of a
// pool does what its file section says, whatever its environment holds.
func configFromFD(c *ucli.Context) (node.Config, error) {
	fd := c.Int("node-config-fd")
	f := os.NewFile(uintptr(fd), "node-config")
	if fd < 0 || f == nil {
		return node.Config{}, usagef("--node-config-fd %d: not a file descriptor", fd)
	}
	defer f.Close()
	for _, flag := range c.Command.Flags {
		if name := flag.Names()[0]; name != "node-config-fd" && c.IsSet(name) {
			return node.Config{}, usagef("--node-config-fd: the config read there is every setting; --%s (or its environment variable) is given too", name)
		}
	}
	cfg, err := node.Decode(f)
	if err != nil {
		return cfg, nodeError(err)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, nodeError(err)
	}
	return cfg, nil
}

// recycledError ends a work process that reached a recycling limit (a pool
// child's max_jobs, max_rss or max_age): exit node.ExitRecycled, with the
// limit on the last stderr line, where the pool manager reads it.
type recycledError struct{ limit string }

func (e recycledError) Error() string {
	return "recycled: " + e.limit + " reached; exiting so that a fresh process takes over"
}
