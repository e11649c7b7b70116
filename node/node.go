// Package node is one resque-go worker process as a unit: from a Config of
// plain values it brings up, in order, the job slots (internal/runtime), the
// runtime-record publisher, the elected delayed mover, the Prometheus
// endpoint and the process title, and tears them down as one group.
// `resque-go work` is a Node whose Config comes from flags and environment
// variables, with signals mapped onto its methods; a pool child is a Node
// whose Config the pool manager hands over whole.
//
//	n, err := node.New(node.Config{Queues: "critical,default", Concurrency: 4}, reg,
//		node.WithSlog(slog.Default()))
//	if err != nil { ... }
//	if err := n.Start(ctx); err != nil { ... } // returns once the slots are registered
//	<-n.Done()                                   // Stop, Shutdown or the end of ctx
package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"

	"github.com/resque-go/resque-go/internal/metrics"
	"github.com/resque-go/resque-go/internal/proctitle"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/internal/service"

	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/failureio"
	"github.com/resque-go/resque-go/internal/statsio"
	"github.com/resque-go/resque-go/internal/uniqueio"
	"github.com/resque-go/resque-go/worker"
)

// Option tunes what New builds beyond the Config: dependencies that are not
// plain values.
type Option func(*options)

type options struct {
	log    zerolog.Logger
	logSet bool // false: defaultLogger()
	fork   *worker.ForkConfig
	title  func(string)
	tracer trace.TracerProvider // nil: no tracing
}

// WithLogger sets the logger as a zerolog.Logger (WithSlog takes a
// *slog.Logger). Default: slog.Default(), which writes to stderr at info
// unless the program set its own; zerolog.Nop() silences the node.
func WithLogger(l zerolog.Logger) Option { return func(o *options) { o.log = l; o.logSet = true } }

// newOptions applies opts over the defaults (title: where WithTitle's
// default shows the procline).
func newOptions(title func(string), opts []Option) options {
	o := options{title: title}
	for _, opt := range opts {
		opt(&o)
	}
	if !o.logSet {
		o.log = defaultLogger()
	}
	return o
}

// WithFork sets how a Fork node starts a job's process (a binary that runs
// the job read from stdin and reports on fd 3, as `resque-go run-job`
// does). A Config with Fork needs it.
func WithFork(fc *worker.ForkConfig) Option { return func(o *options) { o.fork = fc } }

// WithTitle sets where the node shows what it is doing (the worker's
// procline), nil for nowhere. Default: the process title that ps shows,
// where binaries built with package app prepared it, and nowhere otherwise.
func WithTitle(set func(string)) Option { return func(o *options) { o.title = set } }

// component is a long-lived part of the node other than the worker, with
// the lifecycle shape every one has: Start(ctx) runs it in the background,
// Stop stops it and waits, both idempotent.
type component interface {
	Start(ctx context.Context)
	Stop()
}

// Lifecycle states.
const (
	stateNew = iota
	stateStarting
	stateRunning
	stateDone
)

// Stop requests, in rising order: a hard stop escalates a soft one.
const (
	stopNone = iota
	stopSoft
	stopHard
)

// Node is one worker process: its job slots and every service around
// them, started and stopped together.
type Node struct {
	cfg    Config
	log    zerolog.Logger
	client *rdb.Client
	spec   protocol.QueueSpec
	w      *runtime.Worker
	// metrics is nil without Config.MetricsAddr.
	metrics *metrics.Metrics
	// components start in order once the worker is registered and stop in
	// reverse order once it has stopped: the runtime-record publisher, the
	// mover, and later the scheduler, the planner and the allocator.
	components []component
	watch      service.Runner // the end of Start's context, the supervisor
	// recycler is nil without Config.MaxRSS and Config.MaxAge
	recycler *recycler

	mu          sync.Mutex
	state       int
	stop        int // the strongest stop asked for
	cancelStart context.CancelFunc
	finishOnce  sync.Once
	done        chan struct{}
}

// New validates cfg and builds the node; nothing runs and nothing is
// dialled before Start. The Exec and HTTP handlers of cfg are registered in
// reg (nil: a new registry). Its errors from cfg match ErrConfig.
func New(cfg Config, reg *worker.Registry, opts ...Option) (*Node, error) {
	o := newOptions(proctitle.Set, opts)
	s, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	if reg == nil {
		reg = worker.NewRegistry()
	}
	if cfg.Fork && o.fork == nil {
		return nil, errors.New("node: Config.Fork needs a job process command (WithFork)")
	}
	client, err := newRedisClient(cfg.Redis, s.redis, o.log)
	if err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, log: o.log, client: client, spec: s.spec, done: make(chan struct{})}
	if err := n.build(s, reg, o); err != nil {
		client.Close()
		return nil, err
	}
	return n, nil
}

// build makes the worker and the components.
func (n *Node) build(s settings, reg *worker.Registry, o options) error {
	cfg, log := n.cfg, &n.log
	s.handlers.register(reg)
	if reg.Empty() {
		log.Warn().Msg("no handler registered: every job will fail with ResqueGo::NoHandler (use --exec 'Class=command' or '*=command')")
	}
	var onFinish func(runtime.Finished)
	if cfg.MetricsAddr != "" {
		n.metrics = metrics.New(metrics.Config{Client: n.client, Logger: log, Token: cfg.MetricsToken,
			Queues: func(ctx context.Context) ([]string, error) { return n.w.Queues(ctx) },
			Slots:  func() (int, int) { return n.w.Slots() },
			Ready:  n.ready})
		onFinish = n.metrics.Observe
	}
	queues, interval := cfg.Queues, s.durations.interval
	if len(s.sources) > 0 {
		queues = s.spec.String() // the label of a mass pool's worker ids
		if cfg.Interval == 0 {
			interval = time.Second // mass sources are polled
		}
	}
	// a pause or resume rewrites the runtime record at once (its paused)
	refresh := make(chan struct{}, 1)
	onPause := func(bool) {
		select {
		case refresh <- struct{}{}:
		default:
		}
	}
	var err error
	n.w, err = runtime.New(runtime.Config{
		Client: n.client, Registry: reg, Queues: queues, Sources: s.sources, Serial: cfg.Serial, Concurrency: cfg.Concurrency,
		Hostname: cfg.Hostname, Polling: cfg.Polling,
		Interval: interval, HeartbeatInterval: s.durations.heartbeat,
		Drain:      cfg.Drain,
		JobTimeout: s.durations.jobTimeout, TermTimeout: s.durations.termTimeout,
		DirtyExitOnTerm: cfg.DirtyExitOnTerm, MaxRecoveries: cfg.MaxRecoveries, RubyPrune: cfg.RubyPrune,
		Logger: log, Retry: s.retry.def, ClassRetry: s.retry.classes, Fork: o.fork,
		OnFinish: onFinish, OnPause: onPause, Title: o.title, MaxJobs: cfg.MaxJobs, Tracer: jobTracer(o.tracer),
		Limits: s.limits,
	})
	if err != nil {
		return configError{err}
	}
	pub, err := statsio.NewPublisher(statsio.PublisherConfig{
		Client: n.client, Hostname: cfg.Hostname, Interval: s.durations.heartbeat,
		Slots: n.w.Slots, WorkerIDs: n.w.IDs(), WrongTypeQueues: n.w.WrongTypeQueues, Paused: n.w.Paused, Refresh: refresh, Logger: log,
	})
	if err != nil {
		return err
	}
	n.components = append(n.components, pub)
	if !cfg.NoMover {
		mover, err := delayedio.NewMover(delayedio.MoverConfig{Client: n.client, Hostname: cfg.Hostname, WorkerID: n.w.IDs()[0], Logger: log, Elect: true})
		if err != nil {
			return err
		}
		n.components = append(n.components, mover)
	}
	sweeper, err := uniqueio.NewSweeper(uniqueio.SweeperConfig{Client: n.client, Owner: n.w.IDs()[0], Logger: log})
	if err != nil {
		return err
	}
	n.components = append(n.components, sweeper)
	if cfg.Retention.On() {
		trimmer, err := failureio.NewTrimmer(failureio.TrimmerConfig{Client: n.client, Owner: n.w.IDs()[0], Retention: cfg.Retention, Logger: log})
		if err != nil {
			return configError{err}
		}
		n.components = append(n.components, trimmer)
	}
	if cfg.MaxRSS > 0 || cfg.MaxAge > 0 {
		n.recycler = &recycler{maxRSS: cfg.MaxRSS, maxAge: cfg.MaxAge, log: log, stop: func() { go n.halt(stopSoft) }}
		n.components = append(n.components, n.recycler)
	}
	// The scheduler, the planner and the allocator join here.
	return nil
}

// Start serves the metrics endpoint, then registers the job slots, waiting
// (with capped backoff) while Redis is unreachable, and starts them and the
// node's other services; it returns once they run. A Redis that refuses
// the node (a bad password, a database out of range) is an error; a stop
// (Stop, Shutdown, the end of ctx) while Start waits for Redis makes it
// return nil, the node then stopping or done. The end of ctx is a Shutdown
// at any time. Done is closed when Start fails too.
func (n *Node) Start(ctx context.Context) error {
	n.mu.Lock()
	if n.state != stateNew {
		n.mu.Unlock()
		return errors.New("node: Start called twice, or after a stop")
	}
	n.state = stateStarting
	startCtx, cancel := context.WithCancel(ctx)
	n.cancelStart = cancel
	n.mu.Unlock()
	defer cancel()

	if n.metrics != nil {
		bound, err := n.metrics.Serve(n.cfg.MetricsAddr)
		if err != nil {
			n.finish()
			return badf("node: Config.MetricsAddr %q: %v", n.cfg.MetricsAddr, err)
		}
		n.log.Info().Str("addr", bound).Msg("serving /metrics, /healthz and /readyz")
	}
	n.watch.Start(context.Background(), func(wctx context.Context) { n.watchLoop(wctx, ctx) })
	err := n.w.Start(startCtx)
	n.mu.Lock()
	if err != nil {
		n.mu.Unlock()
		n.finish()
		if startCtx.Err() != nil {
			return nil // stopped before Redis answered
		}
		return fmt.Errorf("start: %w", err)
	}
	n.state = stateRunning
	stop := n.stop
	if stop == stopNone {
		// Started under the lock: a stop that follows finds them running.
		for _, c := range n.components {
			c.Start(context.Background())
		}
	}
	n.mu.Unlock()
	go func() {
		<-n.w.Done()
		n.finish()
	}()
	switch stop {
	case stopNone:
		go n.warnUnknownQueues(ctx)
	case stopSoft:
		go n.w.Stop()
	case stopHard:
		go n.w.Shutdown()
	}
	return nil
}

// Done is closed when the node has stopped: its slots are unregistered and
// every service is down (or it could not start).
func (n *Node) Done() <-chan struct{} { return n.done }

// Stop is the soft stop (QUIT): no new job is claimed, running jobs
// finish, then everything stops. It returns when the node is done.
func (n *Node) Stop() {
	n.halt(stopSoft)
	<-n.done
}

// Shutdown is the hard stop (TERM): running jobs are cancelled, and those
// still running after the term timeout are requeued (or recorded as
// Resque::DirtyExit); then everything stops. It escalates a Stop in
// progress and returns when the node is done.
func (n *Node) Shutdown() {
	n.halt(stopHard)
	<-n.done
}

// halt asks for a stop of kind; the worker's Stop and Shutdown wait for it.
func (n *Node) halt(kind int) {
	n.mu.Lock()
	n.stop = max(n.stop, kind)
	state := n.state
	if state == stateStarting {
		n.cancelStart() // Start stops the worker if it started after all
	}
	n.mu.Unlock()
	switch state {
	case stateNew:
		n.finish()
	case stateRunning:
		if kind == stopHard {
			n.w.Shutdown()
		} else {
			n.w.Stop()
		}
	}
}

// CancelJobs cancels the running jobs (USR1): they are recorded as failed
// and the slots go on with the next jobs.
func (n *Node) CancelJobs() { n.w.CancelJobs() }

// Pause stops claiming jobs (USR2); running jobs go on.
func (n *Node) Pause() { n.w.Pause() }

// Resume undoes Pause (CONT).
func (n *Node) Resume() { n.w.Resume() }

// StopRequested reports whether the node stopped (or is stopping) because
// of a stop request through Redis (resque-go process stop): a soft stop,
// as QUIT.
func (n *Node) StopRequested() bool { return n.w.StopRequested() }

// IDs returns the worker ids of the node's slots.
func (n *Node) IDs() []string { return n.w.IDs() }

// finish tears down what runs beside the worker, in reverse order of
// start, and closes Done.
func (n *Node) finish() {
	n.finishOnce.Do(func() {
		n.mu.Lock()
		n.state = stateDone
		n.mu.Unlock()
		n.watch.Stop()
		for _, c := range slices.Backward(n.components) {
			c.Stop()
		}
		if n.metrics != nil {
			if err := n.metrics.Close(); err != nil {
				n.log.Debug().Err(err).Msg("metrics server close")
			}
		}
		n.client.Close()
		close(n.done)
	})
}

// watchLoop turns the end of Start's context, and the end of the
// supervisor (Config.SupervisorPID no longer our parent: the pool manager
// died and we were re-parented), into a Shutdown.
func (n *Node) watchLoop(wctx, ctx context.Context) {
	var tick <-chan time.Time
	if pid := n.cfg.SupervisorPID; pid > 0 {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	for {
		if pid := n.cfg.SupervisorPID; pid > 0 && os.Getppid() != pid {
			n.log.Warn().Int("supervisor_pid", pid).Msg("supervisor is gone; shutting down")
			go n.halt(stopHard)
			return
		}
		select {
		case <-wctx.Done():
			return
		case <-ctx.Done():
			go n.halt(stopHard)
			return
		case <-tick:
		}
	}
}

// warnUnknownQueues logs a warning for each literal queue of the list (not
// a glob) that is not in the queues set: nothing was ever enqueued there,
// so it may be a typo. Without an answer from Redis it says nothing.
func (n *Node) warnUnknownQueues(ctx context.Context) {
	if n.cfg.Mass != "" {
		return // a mass pool's label, not a queue
	}
	literal := n.spec.Expand(nil)
	if len(literal) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	known, err := n.client.KnownQueues(ctx)
	if err != nil {
		n.log.Debug().Err(err).Msg("queue name check skipped")
		return
	}
	for _, q := range literal {
		if !slices.Contains(known, q) {
			n.log.Warn().Str("queue", q).Msg("queue is not in the queues set (nothing was ever enqueued there): check its spelling")
		}
	}
}
