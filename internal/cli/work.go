package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/rs/zerolog"
	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/internal/metrics"
	"github.com/resque-go/resque-go/internal/proctitle"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/stats"
	"github.com/resque-go/resque-go/worker"
)

func workCommand(reg *worker.Registry) *ucli.Command {
	flags := append(append(redisFlags(), handlerFlags()...),
		&ucli.BoolFlag{Name: "fork", Usage: "run every job in a child process (this binary re-executed), isolating crashes and leaks", EnvVars: []string{"RESQUE_FORK"}},
		&ucli.StringFlag{Name: "queues", Aliases: []string{"q"}, Usage: "queues in priority order: high,low; * and globs expand against the queues set; !pattern excludes", EnvVars: []string{"QUEUE"}},
		&ucli.IntFlag{Name: "concurrency", Aliases: []string{"c"}, Usage: "job slots in this process, each with its own worker id", Value: 1, EnvVars: []string{"COUNT"}},
		&ucli.StringFlag{Name: "interval", Usage: "poll interval when polling (seconds, or a duration such as 500ms)", Value: "5", EnvVars: []string{"INTERVAL"}},
		&ucli.BoolFlag{Name: "polling", Usage: "poll every --interval instead of blocking waits", EnvVars: []string{"RESQUE_POLLING"}},
		&ucli.StringFlag{Name: "hostname", Usage: "host name in worker ids and queue statistics (default: this machine's)", EnvVars: []string{"RESQUE_HOSTNAME"}},
		&ucli.StringFlag{Name: "timeout", Usage: "per-job timeout; 0 means none (seconds or a duration)", Value: "0", EnvVars: []string{"RESQUE_JOB_TIMEOUT"}},
		&ucli.StringFlag{Name: "term-timeout", Usage: "on TERM/INT, how long cancelled jobs get before they are requeued", Value: "4", EnvVars: []string{"RESQUE_TERM_TIMEOUT"}},
		&ucli.BoolFlag{Name: "graceful-term", Usage: "TERM acts like QUIT: finish running jobs, then exit", EnvVars: []string{"GRACEFUL_TERM"}},
		&ucli.BoolFlag{Name: "dirty-exit-on-term", Usage: "record jobs interrupted by TERM/INT in failed as Resque::DirtyExit instead of requeueing them", EnvVars: []string{"RESQUE_DIRTY_EXIT_ON_TERM"}},
		&ucli.StringFlag{Name: "heartbeat-interval", Usage: "heartbeat interval, 1 to 60 seconds (seconds or a duration)", Value: "5", EnvVars: []string{"WORKER_HEARTBEAT_INTERVAL"}},
		&ucli.IntFlag{Name: "max-recoveries", Usage: "how often a dead worker's job is requeued before it is recorded as failed", Value: 3, EnvVars: []string{"RESQUE_MAX_RECOVERIES"}},
		&ucli.IntFlag{Name: "fail-retries", Usage: "attempts a failing job gets in all (resque-v3's fail_retries); 1 never retries", Value: worker.DefaultMaxAttempts, EnvVars: []string{"RESQUE_FAIL_RETRIES"}},
		&ucli.StringFlag{Name: "retry-backoff", Usage: "delay before a retry: none, fixed:30s, or exp:BASE[:MAX[:JITTER]] (exp:2s:10m:0.2)", Value: "none", EnvVars: []string{"RESQUE_RETRY_BACKOFF"}},
		&ucli.StringSliceFlag{Name: "class-retry", Usage: "'Class=ATTEMPTS[:BACKOFF]' overrides the retry policy of one class (MailJob=5:exp:2s:10m); repeatable"},
		&ucli.BoolFlag{Name: "mover", Usage: "promote due jobs of the delayed queue (retries with backoff, reschedules; resque-scheduler's layout); safe with other movers", Value: true, EnvVars: []string{"RESQUE_MOVER"}},
		&ucli.StringFlag{Name: "metrics-addr", Usage: "serve Prometheus /metrics and /healthz on this address (e.g. :9292); empty: off", EnvVars: []string{"RESQUE_METRICS_ADDR"}},
		&ucli.IntFlag{Name: "supervisor-pid", Hidden: true, Usage: "exit (as on TERM) when this process is no longer our parent; set by resque-go pool"},
		&ucli.BoolFlag{Name: "ruby-prune", Usage: "record a dead worker's job as failed at once (Ruby Resque's behaviour) instead of requeueing it", EnvVars: []string{"RESQUE_RUBY_PRUNE"}},
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
	queues := c.String("queues")
	if queues == "" {
		return usagef("no queues: give --queues high,low (or QUEUE=high,low)")
	}
	spec, err := protocol.ParseQueueSpec(queues)
	if err != nil {
		return usageError{err}
	}
	if n := c.Int("concurrency"); n < 1 || n > 4096 {
		return usagef("--concurrency %d: want 1 to 4096", n)
	}
	var durs [4]time.Duration
	for i, name := range []string{"interval", "timeout", "term-timeout", "heartbeat-interval"} {
		d, err := parseSeconds(name, c.String(name))
		if err != nil {
			return err
		}
		durs[i] = d
	}
	interval, timeout, termTimeout, heartbeat := durs[0], durs[1], durs[2], durs[3]
	if heartbeat < minHeartbeat || heartbeat > maxHeartbeat {
		return usagef("--heartbeat-interval %q: want 1 to 60 seconds (heartbeats are stored to the second; Ruby Resque prunes a worker whose heartbeat is 300 s old)",
			c.String("heartbeat-interval"))
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	log, err := newLogger(c)
	if err != nil {
		return err
	}
	retry, classRetry, err := retryPolicies(c)
	if err != nil {
		return err
	}
	if err := addHandlers(c, reg); err != nil {
		return err
	}
	var fork *worker.ForkConfig
	if c.Bool("fork") {
		if fork, err = forkConfig(c); err != nil {
			return err
		}
	}
	if reg.Empty() {
		log.Warn().Msg("no handler registered: every job will fail with ResqueGo::NoHandler (use --exec 'Class=command' or '*=command')")
	}
	var w *worker.Worker
	var m *metrics.Metrics
	var onFinish func(worker.Finished)
	if addr := c.String("metrics-addr"); addr != "" {
		m = metrics.New(metrics.Config{Client: client, Logger: &log,
			Queues: func(ctx context.Context) ([]string, error) { return w.Queues(ctx) },
			Slots:  func() (int, int) { return w.Slots() }})
		onFinish = m.Observe
	}
	w, err = worker.New(worker.Config{
		Client: client, Registry: reg, Queues: queues, Concurrency: c.Int("concurrency"),
		Hostname: c.String("hostname"), Polling: c.Bool("polling"),
		Interval: interval, HeartbeatInterval: heartbeat,
		JobTimeout: timeout, TermTimeout: termTimeout,
		DirtyExitOnTerm: c.Bool("dirty-exit-on-term"), MaxRecoveries: maxRecoveries(c.Int("max-recoveries")),
		RubyPrune: c.Bool("ruby-prune"), Logger: &log, Retry: retry, ClassRetry: classRetry, Fork: fork,
		OnFinish: onFinish, Title: proctitle.Set,
	})
	if err != nil {
		return usageError{err}
	}
	if m != nil {
		bound, err := m.Serve(c.String("metrics-addr"))
		if err != nil {
			return usagef("--metrics-addr %q: %v", c.String("metrics-addr"), err)
		}
		defer m.Close()
		log.Info().Str("addr", bound).Msg("serving /metrics and /healthz")
	}
	pub, err := stats.NewPublisher(stats.PublisherConfig{
		Client: client, Hostname: c.String("hostname"), Interval: heartbeat,
		Slots: w.Slots, WorkerIDs: w.IDs(), Logger: &log,
	})
	if err != nil {
		return err
	}
	var mover *delayed.Mover
	if c.Bool("mover") {
		if mover, err = delayed.NewMover(delayed.MoverConfig{Client: client, Hostname: c.String("hostname"), WorkerID: w.IDs()[0], Logger: &log, Elect: true}); err != nil {
			return err
		}
	}
	// A worker finishes its shutdown (requeue, unregister) even when the
	// reader of its stderr is gone, e.g. a pool manager killed with -9 and
	// its children told by Pdeathsig: without this, Go kills the process
	// with SIGPIPE at its next log line, leaving its ids registered.
	signal.Ignore(syscall.SIGPIPE)
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGCONT)
	defer signal.Stop(sigs)

	orphaned := watchParent(c.Context, c.Int("supervisor-pid"))
	startCtx, cancelStart := context.WithCancel(c.Context)
	defer cancelStart()
	started := make(chan error, 1)
	go func() { started <- w.Start(startCtx) }()
	// The publisher and the mover start once the worker is registered: a
	// Redis that refuses us then gets one error line, not their retries.
	running := func() {
		pub.Start(context.Background())
		if mover != nil {
			mover.Start(context.Background())
		}
		go warnUnknownQueues(c.Context, client, spec, log)
	}
	defer func() {
		pub.Stop()
		if mover != nil {
			mover.Stop()
		}
	}()
	ctxDone := c.Context.Done()
	for {
		select {
		case err := <-started:
			started = nil
			if err != nil {
				if startCtx.Err() != nil {
					return nil // stopped by a signal before Redis answered
				}
				return fmt.Errorf("start: %w", err)
			}
			running()
		case <-w.Done():
			cancelStart()
			return nil
		case <-ctxDone:
			ctxDone = nil
			cancelStart()
			go w.Shutdown()
		case <-orphaned:
			orphaned = nil
			log.Warn().Int("supervisor_pid", c.Int("supervisor-pid")).Msg("supervisor is gone; shutting down")
			cancelStart()
			go w.Shutdown()
		case s := <-sigs:
			log.Info().Str("signal", s.String()).Msg("signal received")
			switch s {
			case syscall.SIGQUIT:
				cancelStart()
				go w.Stop()
			case syscall.SIGTERM, syscall.SIGINT:
				cancelStart()
				if c.Bool("graceful-term") {
					go w.Stop()
				} else {
					go w.Shutdown()
				}
			case syscall.SIGUSR1:
				w.CancelJobs()
			case syscall.SIGUSR2:
				w.Pause()
			case syscall.SIGCONT:
				w.Resume()
			}
			if started != nil && startCtx.Err() != nil {
				// Start is still retrying Redis: once it gives up, the worker never ran.
				if err := <-started; err != nil {
					return nil
				}
				started = nil
			}
		}
	}
}

// Heartbeat bounds. Heartbeats are stored with one-second resolution, so a
// shorter interval only adds writes; Ruby Resque workers prune an id whose
// heartbeat is older than 300 s (Resque.prune_interval, 5 of its 60 s
// beats), so beating at most every 60 s leaves the same margin of 5 missed
// beats before a Ruby worker takes a live resque-go worker for dead.
const (
	minHeartbeat = time.Second
	maxHeartbeat = 60 * time.Second
)

// warnUnknownQueues logs a warning for each literal queue of the --queues
// list (not a glob) that is not in the queues set: nothing was ever
// enqueued there, so it may be a typo. Without an answer from Redis it
// says nothing.
func warnUnknownQueues(ctx context.Context, client *rdb.Client, spec protocol.QueueSpec, log zerolog.Logger) {
	literal := spec.Expand(nil)
	if len(literal) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	known, err := client.KnownQueues(ctx)
	if err != nil {
		log.Debug().Err(err).Msg("queue name check skipped")
		return
	}
	for _, q := range literal {
		if !slices.Contains(known, q) {
			log.Warn().Str("queue", q).Msg("queue is not in the queues set (nothing was ever enqueued there): check its spelling")
		}
	}
}

func maxRecoveries(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// watchParent returns a channel closed when our parent is no longer pid (the
// pool manager died and we were re-parented). pid 0 disables the check.
func watchParent(ctx context.Context, pid int) <-chan struct{} {
	if pid <= 0 {
		return nil
	}
	ch := make(chan struct{})
	go func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			if os.Getppid() != pid {
				close(ch)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return ch
}
