// Package runtime runs Resque jobs in one process: Concurrency slots over
// one queue list, each with its own worker id, claiming a job, running its
// handler from a worker.Registry and recording its end in one round trip
// with the next claim (internal/rdb's claim and finish scripts). Around the
// slots it keeps the queue list expanded, wakes idle slots when a watched
// queue gets a job, batches the per-host queue statistics, reports a
// procline, and runs the recovery service (internal/recovery) for the
// slots' heartbeat and the pruning of dead workers. It knows nothing of
// flags or signals: package node builds and drives a Worker.
package runtime

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/recovery"
	"github.com/resque-go/resque-go/internal/service"
	"github.com/resque-go/resque-go/worker"
)

// Config configures a Worker. Zero values mean the documented defaults.
type Config struct {
	// Client is the Redis client (required).
	Client *rdb.Client
	// Registry holds the handlers (required, may be empty: every job then
	// fails with ResqueGo::NoHandler).
	Registry *worker.Registry
	// Queues is the queue list as given: "high,low", "*", "critical,*,!tmp*".
	Queues string
	// Sources, when set, replaces Queues: the slots claim from these
	// sources in order (a mass-queue pool's ring: protocol.StaticPoolSource,
	// protocol.UnitSource), polling every Interval when they are empty.
	// Queues is then only the label in worker ids (a plain queue name).
	Sources []protocol.Source
	// Concurrency is the number of slots, each with its own worker id; default 1.
	Concurrency int
	// Hostname defaults to os.Hostname(); PID to os.Getpid().
	Hostname string
	PID      int
	// Polling replaces blocking waits by sleeping Interval when all queues
	// are empty. Blocking (the default) picks a job up within milliseconds.
	Polling bool
	// Interval is the poll interval when polling; default 5 s.
	Interval time.Duration
	// Serial names queues that run one job at a time across every process
	// (docs/protocol.md#serial-queues), under a lock that lives LockTTL past its holder's
	// last refresh (default 30 s; refreshed every third of it while the job
	// runs).
	Serial  []string
	LockTTL time.Duration
	// SerialPoll is how soon a serial queue with jobs, locked by another
	// slot, is looked at again; default 200 ms.
	SerialPoll time.Duration
	// Drain makes the worker stop by itself once every queue is empty
	// (Ruby's INTERVAL=0): each slot ends at its first empty claim, and the
	// worker unregisters and closes Done when the last one has.
	Drain bool
	// HeartbeatInterval defaults to 5 s; PruneInterval to 4 heartbeats.
	HeartbeatInterval time.Duration
	PruneInterval     time.Duration
	// QueueRefresh is how often a glob queue list is re-expanded; default 5 s.
	QueueRefresh time.Duration
	// JobTimeout cancels a job's context after this long; 0 means none.
	JobTimeout time.Duration
	// TermTimeout is how long a hard stop waits for cancelled jobs before
	// requeueing them; default 4 s (RESQUE_TERM_TIMEOUT); negative: no
	// wait, they are taken back at once.
	TermTimeout time.Duration
	// Fork, when set, runs every job in a child process (see worker.ForkConfig).
	Fork *worker.ForkConfig
	// DirtyExitOnTerm records jobs interrupted by a hard stop in failed as
	// Resque::DirtyExit instead of requeueing them.
	DirtyExitOnTerm bool
	// MaxRecoveries is how often a dead worker's job is requeued before it is
	// recorded as failed (a poison job must not loop); default 3, a negative
	// value never requeues. RubyPrune always records it as failed, as Ruby
	// Resque does. Both go to the recovery service as they are.
	MaxRecoveries int
	RubyPrune     bool
	// Retry is the default retry policy (MaxAttempts 0 means 3, resque-v3's
	// fail_retries); ClassRetry overrides it per class.
	Retry      worker.RetryPolicy
	ClassRetry map[string]worker.RetryPolicy
	// Rand returns numbers in [0,1) for backoff jitter; default math/rand.
	Rand func() float64
	// Logger defaults to a disabled logger.
	Logger *zerolog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
	// MaxJobs, when above 0, drains the worker once its slots have claimed
	// this many jobs: no slot claims another, the running jobs finish, and
	// the worker stops as Stop does (Done closes; MaxJobsReached is then
	// true). A pool child is recycled so.
	MaxJobs int
	// OnFinish, when set, is called after each job's end is recorded.
	OnFinish func(Finished)
	// OnPause, when set, is called when the worker is paused (USR2, a
	// quiet request) or resumed, with the new state; it must not block.
	OnPause func(paused bool)
	// Tracer, when set, starts a span for each attempt (tracing); nil
	// costs nothing.
	Tracer Tracer
	// Limits are the concurrency caps and rate limits the slots honour
	// for jobs of plain queues (docs/limits.md); none costs nothing.
	Limits []protocol.Limit
	// Title, when set, is given Procline whenever it changes (checked once a
	// second), from Start until the worker stops: the CLI shows it in ps.
	Title func(string)
}

// Tracer starts the span of one attempt of a job: it returns the context
// the handler runs in and the function that ends the span, given the
// attempt's outcome (a Finished.Outcome) and, for a failure, its exception
// and message.
type Tracer interface {
	StartAttempt(ctx context.Context, job *worker.Job) (context.Context, func(outcome, exception, message string))
}

// Finished describes a job whose end was recorded.
type Finished struct {
	WorkerID string
	Queue    string
	Class    string
	Payload  []byte
	Duration time.Duration
	// QueueWait is how long the job waited in its queue (0 when the payload
	// had no queue_time).
	QueueWait time.Duration
	// Outcome is "ok", "fail", "retry", "reschedule", "discard" or "requeued"
	// (put back by a hard stop).
	Outcome   string
	Failed    bool
	Exception string
	Error     string
	Requeued  bool
}

func (c *Config) setDefaults() error {
	if c.Client == nil {
		return errors.New("runtime: Config.Client is required")
	}
	if c.Registry == nil {
		c.Registry = worker.NewRegistry()
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 1
	}
	if c.Hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("runtime: hostname: %w", err)
		}
		c.Hostname = h
	}
	if c.PID == 0 {
		c.PID = os.Getpid()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Interval, 5*time.Second)
	def(&c.HeartbeatInterval, 5*time.Second)
	def(&c.PruneInterval, 4*c.HeartbeatInterval)
	def(&c.QueueRefresh, 5*time.Second)
	def(&c.TermTimeout, 4*time.Second)
	def(&c.LockTTL, rdb.DefaultLockTTL)
	def(&c.SerialPoll, 200*time.Millisecond)
	c.Logger = service.Logger(c.Logger)
	c.Now = service.Clock(c.Now)
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
	return nil
}

// Worker runs Concurrency slots over one queue list in one process.
type Worker struct {
	cfg    Config
	log    zerolog.Logger
	client *rdb.Client
	spec   protocol.QueueSpec
	queues *queueList
	notify *notifier
	serial map[string]bool // Config.Serial
	slots  []*slot
	// fork runs the jobs in child processes when Config.Fork is set;
	// forkJob is its handler.
	fork    *worker.ForkPool
	forkJob worker.HandlerFunc

	recovery       *recovery.Service // the slots' heartbeat, the pruning of dead workers
	title, flusher service.Runner
	counters       rdb.Counters // batched queue statistics
	// depsOn: dependencies are in use in the namespace (deps.go), read on
	// the counters' tick
	depsOn atomic.Bool

	loopCtx    context.Context // cancelled by Stop and Shutdown: no new claims
	stopLoops  context.CancelFunc
	jobsCtx    context.Context // cancelled by Shutdown: running jobs are told to stop
	cancelJobs context.CancelCauseFunc
	abandon    context.Context // cancelled when a hard stop gives up on Redis
	giveUp     context.CancelFunc

	// wrongType: the queues claims skipped for a key of another type
	wrongType wrongTypes

	paused atomic.Bool
	// pauses: the worker's queues whose pause key the last read found;
	// pauser reads them every second
	pauses queuePauses
	pauser service.Runner
	// canceller: the subscription to cancel and process requests
	// (cancel.go, process_control.go); lastControl, the id of the last
	// process request applied, is its goroutine's alone
	canceller     service.Runner
	lastControl   string
	stopRequested atomic.Bool
	// limits: Config.Limits laid out for the claims (nil: none); held,
	// the caps' slots the running jobs hold, renewed by limiter
	limits  *rdb.ClaimLimits
	held    limitHolds
	limiter service.Runner
	// gate: the caps' leases and rates' blocks that spare most claims a
	// decision in Redis (limitgate.go; nil: every claim sends its limits)
	gate *limitGate
	// pausedAll: the last claim found <ns>:pause-all-workers set
	pausedAll atomic.Bool
	// jobsTaken counts the claims of MaxJobs: reserved before a claim,
	// given back when it found no job
	jobsTaken   atomic.Int64
	maxJobsOnce sync.Once
	maxJobsHit  atomic.Bool
	claimMu     sync.RWMutex // slots hold it shared while claiming; Pause waits for them
	resumeMu    sync.Mutex
	resume      chan struct{}

	started   atomic.Bool
	slotsDone chan struct{}
	cleanOnce sync.Once
	done      chan struct{}
}

// New validates cfg and returns a Worker ready to Start.
func New(cfg Config) (*Worker, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	spec, err := protocol.ParseQueueSpec(cfg.Queues)
	if err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	w := &Worker{
		cfg:       cfg,
		log:       cfg.Logger.With().Str("host", cfg.Hostname).Int("pid", cfg.PID).Logger(),
		client:    cfg.Client,
		spec:      spec,
		resume:    make(chan struct{}),
		slotsDone: make(chan struct{}),
		done:      make(chan struct{}),
	}
	// a hold lasts three heartbeats unless the sweep renews it
	w.limits = rdb.NewClaimLimits(cfg.Limits, 3*cfg.HeartbeatInterval)
	if len(cfg.Serial) > 0 {
		w.serial = map[string]bool{}
		for _, q := range cfg.Serial {
			w.serial[q] = true
		}
	}
	w.queues = &queueList{spec: spec, client: cfg.Client, refresh: cfg.QueueRefresh, now: cfg.Now, static: spec.Expand(nil)}
	if len(cfg.Sources) > 0 {
		names := make([]string, len(cfg.Sources))
		for i, src := range cfg.Sources {
			names[i] = src.Queue
		}
		w.queues = &queueList{spec: protocol.QueueSpec{}, static: names}
	}
	w.notify = newNotifier(cfg.Client, w.log)
	if cfg.Fork != nil {
		w.fork = worker.NewForkPool(*cfg.Fork)
		w.forkJob = w.fork.Handler()
	}
	for i := 1; i <= cfg.Concurrency; i++ {
		id := protocol.WorkerID{Host: cfg.Hostname, PID: cfg.PID, Queues: spec.String()}
		if cfg.Concurrency > 1 {
			id.Slot = i
		}
		w.slots = append(w.slots, &slot{w: w, id: id.String(), token: protocol.NewJobID()})
	}
	w.gate = newLimitGate(w.limits, len(w.slots), cfg)
	w.recovery, err = recovery.New(recovery.Config{Client: cfg.Client, IDs: w.IDs(), Hostname: cfg.Hostname, PID: cfg.PID,
		HeartbeatInterval: cfg.HeartbeatInterval, PruneInterval: cfg.PruneInterval,
		MaxRecoveries: cfg.MaxRecoveries, RubyPrune: cfg.RubyPrune, Logger: &w.log, Now: cfg.Now, Limits: cfg.Limits})
	if err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	w.loopCtx, w.stopLoops = context.WithCancel(context.Background())
	w.jobsCtx, w.cancelJobs = context.WithCancelCause(context.Background())
	w.abandon, w.giveUp = context.WithCancel(context.Background())
	return w, nil
}

// IDs returns the worker ids of the slots.
func (w *Worker) IDs() []string {
	ids := make([]string, len(w.slots))
	for i, s := range w.slots {
		ids[i] = s.id
	}
	return ids
}

// Start recovers jobs left by an earlier process with the same ids,
// registers the slots and starts them, the heartbeat and the pruner. While
// Redis is unreachable it retries until ctx is done.
func (w *Worker) Start(ctx context.Context) error {
	if !w.started.CompareAndSwap(false, true) {
		return errors.New("runtime: already started")
	}
	for _, s := range w.slots {
		id := s.id
		if err := w.retryRedis(ctx, "recover_own_id", func(ctx context.Context) error {
			return w.recovery.RecoverOwn(ctx, id)
		}); err != nil {
			return err
		}
	}
	now := w.cfg.Now()
	for _, s := range w.slots {
		id := s.id
		if err := w.retryRedis(ctx, "register", func(ctx context.Context) error {
			_, err := w.client.Register(ctx, id, now, w.cfg.HeartbeatInterval, true)
			return err
		}); err != nil {
			return err
		}
	}
	w.log.Info().Strs("worker_ids", w.IDs()).Str("queues", w.spec.String()).
		Bool("polling", w.cfg.Polling).Msg("worker started")
	w.recovery.Start(context.Background())
	w.canceller.Start(context.Background(), w.cancelLoop)
	if len(w.cfg.Sources) == 0 {
		// a queue paused before the start gets no claim
		w.readQueuePauses(ctx)
		w.pauser.Start(context.Background(), w.pauseLoop)
	}
	if w.cfg.Title != nil {
		w.title.Start(context.Background(), w.titleLoop)
	}
	w.readDepsOn(ctx)
	w.flusher.Start(context.Background(), w.counterLoop)
	if w.limits != nil {
		w.limiter.Start(context.Background(), w.limitLoop)
	}
	var wg sync.WaitGroup
	for _, s := range w.slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.loop(w.loopCtx)
		}()
	}
	go func() {
		wg.Wait()
		close(w.slotsDone)
		if w.cfg.Drain {
			w.Stop() // the queues are empty: unregister and close Done
		}
	}()
	return nil
}

// Done is closed when the worker has stopped and unregistered.
func (w *Worker) Done() <-chan struct{} { return w.done }

// Stop is the soft stop (QUIT): no new jobs are claimed, running jobs
// finish, then the slots unregister. It returns when the worker is done.
func (w *Worker) Stop() {
	w.stopLoops()
	if w.started.Load() {
		select {
		case <-w.slotsDone:
		case <-w.done:
		}
	}
	w.cleanup()
}

// Shutdown is the hard stop (TERM, INT): running jobs' contexts are
// cancelled; jobs still running after TermTimeout are requeued (or recorded
// as DirtyExit) and the worker exits without waiting for them.
func (w *Worker) Shutdown() {
	w.stopLoops()
	w.cancelJobs(errShutdown)
	if w.started.Load() {
		t := time.NewTimer(w.cfg.TermTimeout)
		defer t.Stop()
		select {
		case <-w.slotsDone:
		case <-w.done:
		case <-t.C:
			w.log.Warn().Dur("term_timeout", max(w.cfg.TermTimeout, 0)).Msg("jobs still running after term timeout; taking them back")
			for _, s := range w.slots {
				s.abandonJob()
			}
			w.giveUp()
		}
	}
	w.cleanup()
}

// Pause stops claiming new jobs (USR2); running jobs go on. When it
// returns no claim is in progress, so no job queued afterwards is taken.
func (w *Worker) Pause() {
	w.setPaused()
	w.claimMu.Lock()
	w.claimMu.Unlock() // an empty critical section: it only waits for claims in flight
}

// setPaused makes the slots claim no new job from their next claim on.
func (w *Worker) setPaused() {
	if w.paused.CompareAndSwap(false, true) {
		w.log.Info().Msg("worker paused")
		if w.cfg.OnPause != nil {
			w.cfg.OnPause(true)
		}
	}
}

// Resume undoes Pause (CONT).
func (w *Worker) Resume() {
	if w.paused.CompareAndSwap(true, false) {
		w.resumeMu.Lock()
		close(w.resume)
		w.resume = make(chan struct{})
		w.resumeMu.Unlock()
		w.log.Info().Msg("worker resumed")
		if w.cfg.OnPause != nil {
			w.cfg.OnPause(false)
		}
	}
}

func (w *Worker) resumed() <-chan struct{} {
	w.resumeMu.Lock()
	defer w.resumeMu.Unlock()
	return w.resume
}

// CancelJobs cancels the running jobs (USR1); they are recorded as failed
// and the slots go on with the next jobs.
func (w *Worker) CancelJobs() {
	for _, s := range w.slots {
		s.cancelJob(errUSR1)
	}
}

func (w *Worker) cleanup() {
	w.cleanOnce.Do(func() {
		w.recovery.Stop()
		w.pauser.Stop()
		w.canceller.Stop()
		w.limiter.Stop()
		if w.gate != nil && w.started.Load() {
			// the jobs are done (or taken back): the leases go
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if err := w.gate.step(ctx, w, true); err != nil {
				w.log.Warn().Err(err).Msg("cannot give the caps' leases back; they end with their lease")
			}
			cancel()
		}
		w.title.Stop()
		w.flusher.Stop()
		w.notify.stopAll()
		if w.fork != nil {
			w.fork.Close()
		}
		if w.started.Load() {
			w.flushCounters(context.Background())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			for _, s := range w.slots {
				err := w.client.Unregister(ctx, s.id)
				if errors.Is(err, rdb.ErrStillBusy) {
					w.log.Warn().Str("worker_id", s.id).Msg("worker still holds a job at exit; it will be recovered by the next worker")
				} else if err != nil {
					w.log.Error().Err(err).Str("worker_id", s.id).Msg("unregister failed")
				}
			}
			cancel()
		}
		w.log.Info().Msg("worker stopped")
		close(w.done)
	})
}

// retryRedis runs fn until it succeeds, retrying Redis errors with capped
// backoff. It gives up when ctx or the worker's abandon context is done.
func (w *Worker) retryRedis(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	b := backoff{}
	for {
		callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		err := fn(callCtx)
		cancel()
		if !rdb.IsTransient(err) {
			return err
		}
		d := b.next()
		if errors.Is(err, rdb.ErrKeyType) {
			// a key written by hand with another type: nothing was written,
			// and the same call succeeds once someone fixes the key
			w.log.Error().Err(err).Str("op", op).Dur("retry_in", d).Msg("a key has the wrong type; retrying until it is fixed")
		} else {
			w.log.Warn().Err(err).Str("op", op).Dur("retry_in", d).Msg("redis unavailable; retrying")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("runtime: %s: %w", op, err)
		case <-w.abandon.Done():
			return fmt.Errorf("runtime: %s: %w", op, err)
		case <-time.After(d):
		}
	}
}

// backoff doubles from 100 ms to 5 s.
type backoff struct{ d time.Duration }

func (b *backoff) next() time.Duration {
	if b.d == 0 {
		b.d = 100 * time.Millisecond
	} else if b.d *= 2; b.d > 5*time.Second {
		b.d = 5 * time.Second
	}
	return b.d
}

func (b *backoff) reset() { b.d = 0 }

// Slots returns how many slots are running a job, and how many there are.
func (w *Worker) Slots() (busy, total int) {
	for _, s := range w.slots {
		s.mu.Lock()
		if s.cur != nil {
			busy++
		}
		s.mu.Unlock()
	}
	return busy, len(w.slots)
}

// Queues returns the queue list as currently expanded (globs resolved).
func (w *Worker) Queues(ctx context.Context) ([]string, error) { return w.queues.current(ctx) }

// debugOn reports whether the worker's logger writes debug lines (a job's
// start and success), read at each use: zerolog's global level may change.
func (w *Worker) debugOn() bool {
	return w.log.GetLevel() <= zerolog.DebugLevel && zerolog.GlobalLevel() <= zerolog.DebugLevel
}

// Readiness errors, as Ready returns them.
var (
	ErrNotStarted     = errors.New("runtime: not started (registering the slots)")
	ErrDraining       = errors.New("runtime: draining: a stop was asked for, running jobs finish")
	ErrPaused         = errors.New("runtime: paused (USR2)")
	ErrPausedAll      = errors.New("runtime: paused by pause-all-workers")
	ErrHeartbeatStale = errors.New("runtime: heartbeat is stale")
	// ErrRecycling is the drain of a recycle (MaxJobs, or a node's max_rss
	// or max_age): a fresh process follows at once. It matches ErrDraining.
	ErrRecycling = fmt.Errorf("%w (recycling: a limit was reached, a fresh process follows)", ErrDraining)
)

// Ready says whether the worker takes jobs: nil, or why not (not started
// yet, draining after a stop, paused by USR2 or by pause-all-workers, or a
// heartbeat not written for 2 intervals). It reads only memory.
func (w *Worker) Ready() error {
	switch {
	case !w.started.Load():
		return ErrNotStarted
	case w.maxJobsHit.Load():
		return ErrRecycling
	case w.loopCtx.Err() != nil:
		return ErrDraining
	case w.paused.Load():
		return ErrPaused
	case w.pausedAll.Load():
		return ErrPausedAll
	}
	last := w.recovery.LastHeartbeat()
	if last.IsZero() {
		return ErrNotStarted // the slots are being registered
	}
	if age := w.cfg.Now().Sub(last); age > 2*w.cfg.HeartbeatInterval {
		return fmt.Errorf("%w: last written %s ago (interval %s)", ErrHeartbeatStale, age.Round(time.Millisecond), w.cfg.HeartbeatInterval)
	}
	return nil
}

// reserveJob takes one of Config.MaxJobs for a claim about to run; once
// every one is taken it starts the drain and reports false. Without
// MaxJobs it is always true.
func (w *Worker) reserveJob() bool {
	if w.cfg.MaxJobs <= 0 {
		return true
	}
	if w.jobsTaken.Add(1) <= int64(w.cfg.MaxJobs) {
		return true
	}
	w.jobsTaken.Add(-1)
	w.maxJobsOnce.Do(func() {
		w.maxJobsHit.Store(true)
		w.log.Info().Int("max_jobs", w.cfg.MaxJobs).Msg("max_jobs reached: draining (running jobs finish)")
		w.stopLoops()
		go w.Stop()
	})
	return false
}

// unreserveJob gives back a reservation whose claim found no job.
func (w *Worker) unreserveJob() {
	if w.cfg.MaxJobs > 0 {
		w.jobsTaken.Add(-1)
	}
}

// MaxJobsReached reports whether the worker stopped (or is stopping)
// because its slots claimed Config.MaxJobs jobs.
func (w *Worker) MaxJobsReached() bool { return w.maxJobsHit.Load() }
