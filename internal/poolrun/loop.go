package poolrun

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/pool"
)

// slot is one wanted child: its command, its process while one runs, and
// its restart backoff.
type slot struct {
	child node.Config // without SupervisorPID and MetricsAddr, set at each start
	// sched is set for the scheduler child (then child is unused)
	sched *node.SchedulerConfig
	key   string
	set   pool.QueueSet

	cmd       *exec.Cmd // nil while no process runs
	pid       int
	startedAt time.Time

	restarts  int       // processes started after the first, but for recycles
	recycles  int       // processes started after a recycle
	recycled  bool      // the previous process recycled itself
	quick     int       // deaths in a row that came before BackoffReset
	restartAt time.Time // when to start the next process (no process running)
	lastExit  string
	reason    string // the last stderr line of the previous process
	retiring  bool   // told to QUIT by a reload; not restarted
	stopping  bool   // sent QUIT or TERM
	metrics   int    // offset of the child's metrics port from Params.MetricsAddr (0: none)
}

// exitEvent is sent by the goroutine that waits for a child.
type exitEvent struct {
	slot   *slot
	cmd    *exec.Cmd
	err    error
	reason string // its last stderr line
}

// loop is the state owned by the supervisor's goroutine.
type loop struct {
	s      *Supervisor
	cfg    *pool.Config
	slots  []*slot // wanted slots in config order, then retiring ones
	mode   string  // StateRunning, StateQuitting, StateTerminating
	killAt time.Time
	killed bool
}

// run is the supervisor's goroutine: it starts children when due, reacts to
// their exits and to commands, and returns when stopping and no child is
// left.
func (s *Supervisor) run(ctx context.Context) {
	l := &loop{s: s, cfg: s.Config(), mode: pool.StateRunning}
	l.slots = l.plan(l.cfg, nil)
	if l.cfg.Processes() == 0 {
		s.log.Warn().Str("config", l.cfg.Path).Msg("the config asks for no worker process")
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	ctxDone := ctx.Done()
	for {
		now := s.p.Now()
		if l.mode == pool.StateRunning {
			l.startDue(now)
		}
		if l.mode == pool.StateTerminating && !l.killed && !now.Before(l.killAt) {
			l.killAll()
		}
		l.publish()
		if l.mode != pool.StateRunning && l.alive() == 0 {
			break
		}
		if wake, ok := l.nextWake(); ok {
			timer.Reset(max(wake.Sub(now), time.Millisecond))
		} else {
			timer.Reset(time.Hour)
		}
		select {
		case <-ctxDone:
			ctxDone = nil
			l.terminate()
		case ex := <-s.exits:
			l.exited(ex)
		case f := <-s.cmds:
			f(l)
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
	s.finish()
}

// finish runs once every child is gone: a last pruning pass (a child killed
// at the deadline left its registrations), then the status record goes.
func (s *Supervisor) finish() {
	s.mu.Lock()
	s.running = false
	s.mu.Unlock()
	s.mass.stop()
	s.pruner.runner.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), s.p.PruneTimeout)
	s.pruner.pass(ctx)
	cancel()
	s.publisher.runner.Stop()
	if s.metrics != nil {
		_ = s.metrics.Close() // nothing to do about a close error at exit
	}
	s.log.Info().Msg("pool stopped")
	s.emit(pool.Event{Kind: pool.EventStopped})
	close(s.done)
}

// plan lays out the slots cfg asks for, reusing those of existing whose
// command is unchanged (in order); the slots of existing left over are
// returned second.
func (l *loop) plan(cfg *pool.Config, existing []*slot) []*slot {
	free := map[string][]*slot{}
	for _, sl := range existing {
		if !sl.retiring {
			free[sl.key] = append(free[sl.key], sl)
		}
	}
	now := l.s.p.Now()
	var out []*slot
	for _, set := range cfg.Sets {
		child := cfg.Child(set)
		key := childKey(child)
		for range set.Processes {
			if f := free[key]; len(f) > 0 {
				f[0].set = set
				out = append(out, f[0])
				free[key] = f[1:]
				continue
			}
			out = append(out, &slot{child: child, key: key, set: set, restartAt: now})
		}
	}
	if cfg.Scheduler != nil {
		sc := cfg.SchedulerChild()
		b, _ := json.Marshal(sc) // a SchedulerConfig always encodes
		key := "scheduler:" + string(b)
		set := pool.QueueSet{Queues: pool.SchedulerLabel, Processes: 1}
		if f := free[key]; len(f) > 0 {
			out = append(out, f[0])
		} else {
			out = append(out, &slot{sched: &sc, key: key, set: set, restartAt: now})
		}
	}
	return out
}

// reload converges on cfg (see Supervisor.Reload).
func (l *loop) reload(cfg *pool.Config) error {
	if l.mode != pool.StateRunning {
		return ErrNotRunning
	}
	wanted := l.plan(cfg, l.slots)
	keep := map[*slot]bool{}
	for _, sl := range wanted {
		keep[sl] = true
	}
	var retiring []*slot
	for _, sl := range l.slots {
		switch {
		case keep[sl]:
		case sl.cmd == nil: // in backoff, or already gone
		default:
			if !sl.retiring {
				sl.retiring = true
				l.s.log.Info().Int("child_pid", sl.pid).Str("queues", sl.set.Queues).Msg("child no longer wanted; sending QUIT")
				l.s.emit(pool.Event{Kind: pool.EventRetiring, PID: sl.pid, Queues: sl.set.Queues})
				l.sendOnce(sl, syscall.SIGQUIT)
			}
			retiring = append(retiring, sl)
		}
	}
	l.slots = append(wanted, retiring...)
	l.cfg = cfg
	l.s.mu.Lock()
	l.s.cfg = cfg
	l.s.mu.Unlock()
	l.s.log.Info().Str("config", cfg.Path).Int("processes", cfg.Processes()).Int("retiring", len(retiring)).Msg("config reloaded")
	l.s.emit(pool.Event{Kind: pool.EventReloaded})
	return nil
}

// startDue starts the children of slots whose restart time has come.
func (l *loop) startDue(now time.Time) {
	for _, sl := range l.slots {
		if sl.cmd == nil && !sl.retiring && !now.Before(sl.restartAt) {
			l.spawn(sl, now)
		}
	}
}

// spawn starts the child of sl: `<Command> work --node-config-fd 3`, its
// node config written to a pipe that is its file descriptor 3 (so the
// Redis URL and the HTTP token are neither on its command line nor in its
// environment). It dies with the manager: Pdeathsig sends it TERM when the
// manager goes, and it watches SupervisorPID itself in case the signal is
// lost. Its own process group keeps a terminal's ^C from reaching it twice
// (directly and through the manager).
func (l *loop) spawn(sl *slot, now time.Time) {
	s := l.s
	child := sl.child
	child.SupervisorPID = s.p.PID
	args := append(append([]string{}, s.p.Command[1:]...), "work", "--node-config-fd", "3")
	var config func(w *os.File)
	if sl.sched != nil {
		sc := *sl.sched
		sc.SupervisorPID = s.p.PID
		args = append(append([]string{}, s.p.Command[1:]...), "scheduler", "--scheduler-config-fd", "3")
		config = func(w *os.File) { writeJSON(w, sc, s.log) }
	} else {
		if addr, off, ok := l.metricsAddr(); ok {
			child.MetricsAddr, child.MetricsToken = addr, s.p.MetricsToken
			sl.metrics = off
		}
		config = func(w *os.File) { writeConfig(w, child, s.log) }
	}
	cmd := exec.Command(s.p.Command[0], args...)
	cmd.Env = s.p.Env
	r, w, err := os.Pipe()
	if err != nil {
		l.startFailed(sl, now, err)
		return
	}
	cmd.ExtraFiles = []*os.File{r}
	stderr := newTail(s.p.Stderr)
	cmd.Stdout, cmd.Stderr = s.p.Stdout, stderr
	cmd.SysProcAttr = childProcAttr()
	// A job's grandchild may hold copied output pipes after the child died.
	cmd.WaitDelay = 2 * time.Second
	if sl.recycled {
		sl.recycles++
		sl.recycled = false
	} else if sl.lastExit != "" {
		sl.restarts++
	}
	err = cmd.Start()
	r.Close() // the child has its copy
	if err != nil {
		w.Close()
		l.startFailed(sl, now, err)
		return
	}
	// Written in the background: a pipe holds 64 KiB, and a child that
	// dies before reading must not stall the supervisor.
	go config(w)
	sl.cmd, sl.pid, sl.startedAt, sl.stopping = cmd, cmd.Process.Pid, now, false
	s.log.Info().Int("child_pid", sl.pid).Str("queues", sl.set.Queues).Int("restarts", sl.restarts).Msg("child started")
	s.emit(pool.Event{Kind: pool.EventStarted, PID: sl.pid, Queues: sl.set.Queues})
	go func() {
		err := cmd.Wait() // returns once the child's stderr is copied
		stderr.Flush()
		s.exits <- exitEvent{slot: sl, cmd: cmd, err: err, reason: stderr.Reason()}
	}()
}

// startFailed schedules another try after a child could not be started.
func (l *loop) startFailed(sl *slot, now time.Time, err error) {
	sl.lastExit, sl.reason = "start failed: "+err.Error(), ""
	l.backoff(sl, now, now)
	l.s.log.Error().Err(err).Str("queues", sl.set.Queues).Dur("restart_in", sl.restartAt.Sub(now)).Msg("cannot start child")
}

// writeConfig writes a child's node config to its pipe and closes it.
func writeConfig(w *os.File, child node.Config, log zerolog.Logger) {
	defer w.Close()
	if err := child.Encode(w); err != nil {
		// The child exits with the reason (its config is cut short).
		log.Debug().Err(err).Msg("node config not written")
	}
}

// writeJSON writes a scheduler child's config to its pipe and closes it.
func writeJSON(w *os.File, v any, log zerolog.Logger) {
	defer w.Close()
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Debug().Err(err).Msg("scheduler config not written")
	}
}

// exited handles the end of a child: its registrations are pruned, and it
// is restarted after its backoff unless it was meant to stop.
func (l *loop) exited(ex exitEvent) {
	s, sl := l.s, ex.slot
	if sl.cmd != ex.cmd {
		return
	}
	now := s.p.Now()
	pid, uptime := sl.pid, now.Sub(sl.startedAt)
	sl.cmd, sl.pid, sl.metrics = nil, 0, 0
	sl.lastExit, sl.reason = describeExit(ex.err), ex.reason
	limit, recycled := recycleLimit(ex.err, ex.reason)
	if recycled {
		sl.lastExit = "recycled (" + limit + ")"
	}
	// Report the exit before asking for the pruning pass, so the pass's event
	// always follows it.
	s.emit(pool.Event{Kind: pool.EventExited, PID: pid, Queues: sl.set.Queues, Err: ex.err, Reason: ex.reason, Recycled: limit})
	s.pruner.request(pid)
	if sl.retiring || l.mode != pool.StateRunning {
		s.log.Info().Int("child_pid", pid).Str("queues", sl.set.Queues).Str("exit", sl.lastExit).Str("exit_reason", sl.reason).Msg("child stopped")
		if sl.retiring {
			l.remove(sl)
		}
		if l.mode != pool.StateRunning {
			l.dropIdle()
		}
		return
	}
	if recycled {
		// not a crash: no backoff, no quick death, a fresh process at once
		sl.recycled, sl.quick, sl.restartAt = true, 0, now
		s.log.Info().Int("child_pid", pid).Str("queues", sl.set.Queues).Str("limit", limit).
			Dur("uptime", uptime.Round(time.Millisecond)).Msg("child recycled; starting a fresh one")
		return
	}
	l.backoff(sl, now, sl.startedAt)
	ev := s.log.Warn()
	msg := "child died; restarting it after its backoff"
	if sl.quick >= s.p.CrashLoop {
		ev, msg = s.log.Error(), "child is crash-looping; restarting it after its backoff"
	}
	ev.Int("child_pid", pid).Str("queues", sl.set.Queues).Str("exit", sl.lastExit).Str("exit_reason", sl.reason).
		Dur("uptime", uptime.Round(time.Millisecond)).Int("quick_deaths", sl.quick).
		Dur("restart_in", sl.restartAt.Sub(now)).Msg(msg)
}

// backoff schedules the next start of sl: BackoffMin doubling per quick
// death in a row, capped at BackoffMax; a process that ran BackoffReset
// starts the count again.
func (l *loop) backoff(sl *slot, now, started time.Time) {
	p := l.s.p
	if now.Sub(started) >= p.BackoffReset {
		sl.quick = 0
	}
	sl.quick++
	d := p.BackoffMin
	for i := 1; i < sl.quick && d < p.BackoffMax; i++ {
		d *= 2
	}
	sl.restartAt = now.Add(min(d, p.BackoffMax))
}

func (l *loop) remove(sl *slot) {
	for i, x := range l.slots {
		if x == sl {
			l.slots = append(l.slots[:i], l.slots[i+1:]...)
			return
		}
	}
}

// quit sends QUIT to every child and lets them finish.
func (l *loop) quit() {
	if l.mode != pool.StateRunning {
		return
	}
	l.mode = pool.StateQuitting
	l.s.log.Info().Int("children", l.alive()).Msg("stopping: sending QUIT to the children, waiting for their jobs to finish")
	l.dropIdle()
	for _, sl := range l.slots {
		l.sendOnce(sl, syscall.SIGQUIT)
	}
}

// terminate sends TERM to every child and kills what is left after the
// config's kill timeout. It escalates a quit.
func (l *loop) terminate() {
	if l.mode == pool.StateTerminating {
		return
	}
	l.mode = pool.StateTerminating
	d := orDuration(l.cfg.KillTimeout, pool.DefaultKillTimeout)
	l.killAt = l.s.p.Now().Add(d)
	l.s.log.Info().Int("children", l.alive()).Dur("kill_timeout", d).Msg("shutting down: sending TERM to the children")
	l.dropIdle()
	for _, sl := range l.slots {
		sl.stopping = false // TERM follows a QUIT
		l.sendOnce(sl, syscall.SIGTERM)
	}
}

// dropIdle forgets the slots without a process (nothing to stop there).
func (l *loop) dropIdle() {
	kept := l.slots[:0]
	for _, sl := range l.slots {
		if sl.cmd != nil {
			kept = append(kept, sl)
		}
	}
	l.slots = kept
}

func (l *loop) killAll() {
	l.killed = true
	for _, sl := range l.slots {
		if sl.cmd != nil {
			l.s.log.Warn().Int("child_pid", sl.pid).Str("queues", sl.set.Queues).Msg("child still running after the kill timeout; killing it")
			_ = sl.cmd.Process.Signal(syscall.SIGKILL)
		}
	}
}

// sendOnce sends a stop signal to a running child that has not had one.
func (l *loop) sendOnce(sl *slot, sig syscall.Signal) {
	if sl.cmd == nil || sl.stopping {
		return
	}
	sl.stopping = true
	l.signal(sl, sig)
}

func (l *loop) signal(sl *slot, sig syscall.Signal) {
	if err := sl.cmd.Process.Signal(sig); err != nil {
		l.s.log.Debug().Err(err).Int("child_pid", sl.pid).Str("signal", sig.String()).Msg("signal not delivered")
	}
}

// signalAll passes sig to every running child.
func (l *loop) signalAll(sig syscall.Signal) {
	l.s.log.Info().Str("signal", sig.String()).Int("children", l.alive()).Msg("passing the signal to the children")
	for _, sl := range l.slots {
		if sl.cmd != nil {
			l.signal(sl, sig)
		}
	}
}

func (l *loop) alive() int {
	n := 0
	for _, sl := range l.slots {
		if sl.cmd != nil {
			n++
		}
	}
	return n
}

// nextWake is the earliest restart or the kill deadline.
func (l *loop) nextWake() (time.Time, bool) {
	var t time.Time
	ok := false
	consider := func(x time.Time) {
		if !ok || x.Before(t) {
			t, ok = x, true
		}
	}
	if l.mode == pool.StateRunning {
		for _, sl := range l.slots {
			if sl.cmd == nil && !sl.retiring {
				consider(sl.restartAt)
			}
		}
	}
	if l.mode == pool.StateTerminating && !l.killed {
		consider(l.killAt)
	}
	return t, ok
}

// publish copies the state Status shows.
func (l *loop) publish() {
	infos := make([]childInfo, len(l.slots))
	for i, sl := range l.slots {
		c := childInfo{queues: sl.set.Queues, pid: sl.pid, restarts: sl.restarts, recycles: sl.recycles, lastExit: sl.lastExit, reason: sl.reason,
			metrics: sl.metrics}
		switch {
		case sl.cmd != nil && (sl.stopping || sl.retiring):
			c.state = pool.ChildStopping
		case sl.cmd != nil:
			c.state = pool.ChildRunning
		case sl.quick >= l.s.p.CrashLoop:
			c.state = pool.ChildCrashLoop
		default:
			c.state = pool.ChildBackoff
		}
		if sl.cmd != nil {
			c.startedAt = sl.startedAt
		} else {
			c.restartAt = sl.restartAt
		}
		infos[i] = c
	}
	l.s.mu.Lock()
	l.s.snapshot, l.s.state = infos, l.mode
	l.s.mu.Unlock()
}

// metricsAddr picks the metrics address of a child about to start: the
// manager's port plus the lowest offset no running child uses.
func (l *loop) metricsAddr() (string, int, bool) {
	host, portStr, err := net.SplitHostPort(l.s.p.MetricsAddr)
	if l.s.p.MetricsAddr == "" || err != nil {
		return "", 0, false
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return "", 0, false
	}
	used := map[int]bool{}
	for _, sl := range l.slots {
		if sl.cmd != nil {
			used[sl.metrics] = true
		}
	}
	off := 1
	for used[off] {
		off++
	}
	return net.JoinHostPort(host, strconv.Itoa(port+off)), off, true
}

// recycleLimit tells a child that recycled itself (exit status
// node.ExitRecycled) and the limit it reached, which its last stderr line
// names ("" when it does not).
func recycleLimit(err error, reason string) (string, bool) {
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != node.ExitRecycled {
		return "", false
	}
	for _, limit := range []string{node.LimitMaxJobs, node.LimitMaxRSS, node.LimitMaxAge, node.LimitStopRequested} {
		if strings.Contains(reason, limit) {
			return limit, true
		}
	}
	return "limit", true
}

func orDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
