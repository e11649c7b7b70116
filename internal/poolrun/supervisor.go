package poolrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/metrics"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"
	"github.com/resque-go/resque-go/pool"
)

// Params are the supervisor's dependencies. Zero values mean the documented
// defaults.
type Params struct {
	// Client is the Redis client of the children's namespace (required):
	// the registrations of dead children are pruned through it and the
	// status record is written with it.
	Client *rdb.Client
	// Command is the binary (and any leading arguments) a child runs;
	// "work --node-config-fd 3" follows. Default: this process's own
	// binary.
	Command []string
	// Env is the children's environment; default os.Environ(). The child
	// reads its settings from its node config only and refuses to start
	// when a variable of Env sets one too: leave out the variables its work
	// command reads (resque-go pool does).
	Env []string
	// Stdout and Stderr receive the children's output; default this
	// process's. Stdout, when a file, is passed to the children as it is.
	// Their stderr goes through the manager, whole lines at a time, which
	// keeps each child's last line: the reason a child that exits gave
	// (Event.Reason, ChildStatus.LastExitReason, the exit's log event).
	Stdout, Stderr io.Writer
	// PID is the manager's pid the children watch; default os.Getpid().
	PID int
	// MetricsAddr, when set (host:port; a bare port means 127.0.0.1),
	// gives every running child its own --metrics-addr on the ports that
	// follow: port+1, port+2 ... (the lowest free one at each start). The
	// manager itself serves port. MetricsToken, when set, is the bearer
	// token the endpoints of the manager and of every child require.
	MetricsAddr  string
	MetricsToken string
	// BackoffMin is the first restart delay of a slot, doubling per quick
	// death up to BackoffMax; a child that stayed up BackoffReset starts the
	// count again. Defaults 1 s, 60 s, 60 s.
	BackoffMin, BackoffMax, BackoffReset time.Duration
	// CrashLoop is how many quick deaths in a row make a slot crash-looping
	// (logged as an error and shown as state crashloop); default 3.
	CrashLoop int
	// StatusInterval is how often the status record is refreshed (it
	// expires after 3); default 5 s.
	StatusInterval time.Duration
	// PruneTimeout bounds one pruning pass; default 10 s.
	PruneTimeout time.Duration
	// Logger defaults to a disabled logger.
	Logger *zerolog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
	// OnEvent, when set, is called for every lifecycle event (tests wait on
	// it). It runs on the supervisor's goroutines and must not block.
	OnEvent func(pool.Event)
}

func (p *Params) setDefaults() error {
	if p.Client == nil {
		return errors.New("pool: Params.Client is required")
	}
	if len(p.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("pool: cannot find this binary to start children: %w", err)
		}
		p.Command = []string{exe}
	}
	if p.Env == nil {
		p.Env = os.Environ()
	}
	if p.Stdout == nil {
		p.Stdout = os.Stdout
	}
	if p.Stderr == nil {
		p.Stderr = os.Stderr
	}
	if p.PID <= 0 {
		p.PID = os.Getpid()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&p.BackoffMin, time.Second)
	def(&p.BackoffMax, 60*time.Second)
	def(&p.BackoffReset, 60*time.Second)
	def(&p.StatusInterval, 5*time.Second)
	def(&p.PruneTimeout, 10*time.Second)
	if p.CrashLoop <= 0 {
		p.CrashLoop = 3
	}
	p.Logger = service.Logger(p.Logger)
	p.Now = service.Clock(p.Now)
	return nil
}

// ErrNotRunning is returned by Reload when the supervisor is not running
// (not started, stopping or stopped).
var ErrNotRunning = errors.New("pool: supervisor is not running")

// Supervisor keeps the children of one config running.
type Supervisor struct {
	p        Params
	log      zerolog.Logger
	hostname string
	started  time.Time

	runner service.Runner
	cmds   chan func(*loop)
	exits  chan exitEvent
	done   chan struct{}

	pruner    *pruner
	publisher *publisher
	mass      *massServices
	metrics   *metrics.PoolServer // the manager's /metrics, with MetricsAddr
	bound     string              // its address

	mu       sync.Mutex
	cfg      *pool.Config
	running  bool
	snapshot []childInfo
	state    string
}

// New validates its arguments; Start runs the supervisor.
func New(p Params, cfg *pool.Config) (*Supervisor, error) {
	if err := p.setDefaults(); err != nil {
		return nil, err
	}
	if cfg == nil {
		return nil, errors.New("pool: no config")
	}
	if p.MetricsAddr != "" {
		addr, err := metrics.ListenAddr(p.MetricsAddr)
		if err != nil {
			return nil, &pool.MetricsError{Err: err}
		}
		p.MetricsAddr = addr // the children's ports follow this one
	}
	host := cfg.Hostname
	if host == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("pool: hostname: %w", err)
		}
		host = h
	}
	s := &Supervisor{
		p:        p,
		log:      p.Logger.With().Str("host", host).Int("pid", p.PID).Logger(),
		hostname: host,
		cmds:     make(chan func(*loop)),
		exits:    make(chan exitEvent),
		done:     make(chan struct{}),
		cfg:      cfg,
		state:    pool.StateRunning,
	}
	s.mass = &massServices{client: p.Client, log: &s.log, host: host}
	s.pruner = &pruner{s: s, req: make(chan struct{}, 1)}
	s.publisher = &publisher{s: s, kick: make(chan struct{}, 1)}
	if p.MetricsAddr != "" {
		// the manager serves /metrics and /healthz on MetricsAddr; its
		// children get the next ports
		s.metrics = metrics.NewPool(p.Client, s.metricsChildren, metrics.ServerOptions{Token: p.MetricsToken, Logger: &s.log, Ready: s.ready})
		bound, err := s.metrics.Serve(p.MetricsAddr)
		if err != nil {
			return nil, &pool.MetricsError{Err: err}
		}
		s.bound = bound
	}
	return s, nil
}

// MetricsAddr is where the manager serves /metrics ("" without).
func (s *Supervisor) MetricsAddr() string { return s.bound }

// metricsChildren is what the manager's /metrics shows of the children:
// their states, restarts and recycles from memory, their busy and idle
// slots from their runtime records (one MGET, a plain read).
func (s *Supervisor) metricsChildren() []metrics.PoolChild {
	st := s.Status()
	var pids []int
	for _, c := range st.Children {
		if c.PID > 0 && c.Queues != pool.SchedulerLabel {
			pids = append(pids, c.PID)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	slots := map[int]protocol.ProcessRecord{}
	if recs, err := s.p.Client.ProcessRecords(ctx, s.hostname, pids); err == nil {
		for i, raw := range recs {
			if r, err := protocol.ParseProcessRecord(raw); raw != nil && err == nil {
				slots[pids[i]] = r
			}
		}
	} else {
		s.log.Debug().Err(err).Msg("metrics: children's runtime records not read")
	}
	var out []metrics.PoolChild
	for _, c := range st.Children {
		pc := metrics.PoolChild{State: c.State, Restarts: c.Restarts, Recycles: c.Recycles}
		if c.Queues != pool.SchedulerLabel {
			pc.Queues = c.Queues
		}
		if r, ok := slots[c.PID]; ok && c.PID > 0 {
			pc.HasSlots, pc.SlotsBusy, pc.SlotsTotal = true, r.SlotsBusy, r.SlotsTotal
		}
		out = append(out, pc)
	}
	return out
}

// ready is the manager's readiness (/readyz, after Redis answered PING):
// it runs (no QUIT or TERM), at least one child runs when the config asks
// for some, and every running child that serves metrics answers 200 on its
// own /readyz (or drains for a recycle).
func (s *Supervisor) ready(ctx context.Context) error {
	s.mu.Lock()
	state, children, cfg := s.state, slices.Clone(s.snapshot), s.cfg
	s.mu.Unlock()
	if state != pool.StateRunning {
		return fmt.Errorf("pool is %s", state)
	}
	host, port, err := childHostPort(s.p.MetricsAddr)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(children))
	running := 0
	for i, c := range children {
		if c.state != pool.ChildRunning || c.pid == 0 {
			continue
		}
		running++
		if c.metrics == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := "http://" + net.JoinHostPort(host, strconv.Itoa(port+c.metrics)) + "/readyz"
			if err := s.childReady(ctx, url); err != nil {
				errs[i] = fmt.Errorf("child %d (queues %s): %w", c.pid, c.queues, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if running == 0 && cfg.Processes() > 0 {
		return errors.New("no child is running")
	}
	return nil
}

// childReady asks a child's /readyz.
func (s *Supervisor) childReady(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if s.p.MetricsToken != "" {
		req.Header.Set("Authorization", "Bearer "+s.p.MetricsToken)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.Header.Get(metrics.RecyclingHeader) == "" {
		return fmt.Errorf("/readyz answered %d (the child's log says why)", resp.StatusCode)
	}
	// a child draining for a recycle is replaced at once: not a reason to
	// take the pool out of service
	return nil
}

// childHostPort is where the manager reaches its children's endpoints:
// the host of the metrics address (loopback for a wildcard one) and the
// manager's port, which theirs follow.
func childHostPort(addr string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return "", 0, err
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return host, port, nil
}

// Hostname is the host part of the children's worker ids.
func (s *Supervisor) Hostname() string { return s.hostname }

// Start starts the children and returns; they run until Stop, Shutdown or
// the end of ctx (which acts as Shutdown). A second Start does nothing.
func (s *Supervisor) Start(ctx context.Context) {
	s.mu.Lock()
	if s.running || isClosed(s.done) {
		s.mu.Unlock()
		return
	}
	s.running = true
	s.started = s.p.Now()
	s.mu.Unlock()
	s.pruner.runner.Start(context.Background(), s.pruner.loop)
	s.pruner.request(0) // registrations left by an earlier pool on this host
	s.publisher.runner.Start(context.Background(), s.publisher.loop)
	s.mu.Lock()
	mass := s.cfg.Mass
	s.mu.Unlock()
	if err := s.mass.apply(mass); err != nil {
		s.log.Error().Err(err).Msg("mass-queue allocator not started")
	}
	s.runner.Start(ctx, s.run)
}

// Done is closed when every child is gone and the supervisor has stopped.
func (s *Supervisor) Done() <-chan struct{} { return s.done }

// Stop is the soft stop (QUIT): every child is sent QUIT, finishes its
// running jobs and exits; Stop returns when all have. Shutdown may follow
// to escalate.
func (s *Supervisor) Stop() {
	s.send(func(l *loop) { l.quit() })
	s.wait()
}

// Shutdown is the hard stop (TERM): every child is sent TERM (they cancel
// and requeue their jobs) and killed if still running after the config's
// kill_timeout. It returns when all are gone.
func (s *Supervisor) Shutdown() {
	s.send(func(l *loop) { l.terminate() })
	s.wait()
}

// wait waits for the end of a supervisor that was started.
func (s *Supervisor) wait() {
	s.mu.Lock()
	started := !s.started.IsZero()
	s.mu.Unlock()
	if started {
		<-s.done
	}
}

// Signal passes sig to every running child (USR1, USR2, CONT).
func (s *Supervisor) Signal(sig syscall.Signal) {
	s.send(func(l *loop) { l.signalAll(sig) })
}

// Reload converges on cfg: children whose settings are unchanged keep
// running, children no longer wanted (their queue set is gone, its process
// count went down, or their settings changed) are sent QUIT and finish
// their jobs, and the missing children are started. Redis, namespace and
// hostname cannot change while the pool runs (its own Redis client and the
// host whose dead workers it prunes would no longer match).
func (s *Supervisor) Reload(cfg *pool.Config) error {
	if cfg == nil {
		return errors.New("pool: no config")
	}
	s.mu.Lock()
	old := s.cfg
	s.mu.Unlock()
	for _, f := range []struct{ name, old, new string }{
		{"redis", old.Redis, cfg.Redis},
		{"namespace", old.Namespace, cfg.Namespace},
		{"hostname", old.Hostname, cfg.Hostname},
	} {
		if f.old != f.new {
			return fmt.Errorf("pool: %s changed from %q to %q: restart the pool to change it", f.name, f.old, f.new)
		}
	}
	var err error = ErrNotRunning
	s.send(func(l *loop) { err = l.reload(cfg) })
	if err == nil {
		if merr := s.mass.apply(cfg.Mass); merr != nil {
			s.log.Error().Err(merr).Msg("mass-queue allocator not restarted")
		}
	}
	return err
}

// Config returns the config in effect.
func (s *Supervisor) Config() *pool.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// send runs f on the supervisor's goroutine; it reports false when that is
// not running.
func (s *Supervisor) send(f func(*loop)) bool {
	s.mu.Lock()
	running := s.running
	s.mu.Unlock()
	if !running {
		return false
	}
	ran := make(chan struct{})
	select {
	case s.cmds <- func(l *loop) { f(l); close(ran) }:
		<-ran
		return true
	case <-s.done:
		return false
	}
}

func (s *Supervisor) emit(e pool.Event) {
	s.publisher.poke()
	if s.p.OnEvent != nil {
		s.p.OnEvent(e)
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// childInfo is what the status shows of one slot.
type childInfo struct {
	queues    string
	pid       int
	state     string
	restarts  int
	recycles  int
	startedAt time.Time
	restartAt time.Time
	lastExit  string
	reason    string
	metrics   int // offset of the child's metrics port (0: none)
}

// Status returns the children as they are now.
func (s *Supervisor) Status() pool.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := pool.Status{State: s.state, StartedAt: s.started, Children: make([]pool.ChildStatus, len(s.snapshot))}
	for i, c := range s.snapshot {
		st.Children[i] = pool.ChildStatus{Slot: i + 1, Queues: c.queues, PID: c.pid, State: c.state,
			Restarts: c.restarts, Recycles: c.recycles, StartedAt: c.startedAt, RestartAt: c.restartAt, LastExit: c.lastExit, LastExitReason: c.reason}
	}
	return st
}

// describeExit says how a child ended: "exit status 1", "signal: killed".
func describeExit(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
