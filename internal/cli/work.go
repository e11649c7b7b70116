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
	flags := append(append(append(redisFlags(), handlerFlags()...), workSettingFlags()...),
		&ucli.IntFlag{Name: "node-config-fd", Hidden: true, Usage: "read every setting, as node.Config JSON, from this file descriptor (no other setting may be given); set by resque-go pool"},
	)
	flags = append(flags, retentionFlags()...)
	return &ucli.Command{
		Name:  "work",
		Usage: "run jobs from Resque queues",
		Description: "Drains resque:queue:<q> lists in strict priority order.\n\n" +
			"Signals: QUIT finishes running jobs and exits; TERM and INT cancel running jobs, wait\n" +
			"--term-timeout, then requeue what did not finish; USR1 cancels running jobs and goes on;\n" +
			"USR2 pauses, CONT resumes. The key <ns>:pause-all-workers = \"true\" pauses every worker.\n" +
			"`resque-go process quiet|resume|stop HOST:PID` asks the same through Redis, from any host.",
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
	tp, err := tracerFromEnv(c.Context, c.App.ErrWriter)
	if err != nil {
		return err
	}
	if tp != nil {
		defer shutdownTracer(tp)
		opts = append(opts, node.WithTracerProvider(tp))
		log.Info().Msg("tracing job attempts (OTEL_* environment)")
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
			if n.StopRequested() && cfg.SupervisorPID > 0 {
				// a pool child: its manager replaces it, as after a recycle
				return recycledError{node.LimitStopRequested}
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

// configFromFlags maps work's flags (and their environment variables) onto
// a node.Config, checked.
func configFromFlags(c *ucli.Context) (node.Config, error) {
	cfg := node.Config{
		Redis:     redisConfig(c),
		Exec:      c.StringSlice("exec"),
		HTTP:      c.StringSlice("http"),
		HTTPToken: c.String("http-token"),
		LogLevel:  c.String("log-level"),
		LogFormat: c.String("log-format"),
	}
	zero, err := settingsFromFlags(c, &cfg)
	if err != nil {
		return cfg, err
	}
	if cfg.Retention, err = retentionFromFlags(c); err != nil {
		return cfg, err
	}
	for _, f := range []struct {
		flag string
		d    *time.Duration
	}{{"http-connect-timeout", &cfg.HTTPConnectTimeout}, {"http-timeout", &cfg.HTTPTimeout}} {
		if *f.d, err = parseSeconds(f.flag, c.String(f.flag)); err != nil {
			return cfg, err
		}
	}
	if cfg.Mass != "" && !c.IsSet("interval") {
		cfg.Interval = 0 // a mass pool's default poll (1 s), not work's 5 s
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
	if zero != nil {
		return cfg, zero
	}
	if _, err := newLogger(c); err != nil {
		return cfg, err
	}
	return cfg, nil
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
	if e.limit == node.LimitStopRequested {
		return "recycled: " + e.limit + " (resque-go process stop); exiting so that a fresh process takes over"
	}
	return "recycled: " + e.limit + " reached; exiting so that a fresh process takes over"
}
