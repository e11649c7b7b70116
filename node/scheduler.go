package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/metrics"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"

	"github.com/resque-go/resque-go/failure"
	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/failureio"
	"github.com/resque-go/resque-go/internal/planio"
	"github.com/resque-go/resque-go/internal/scheduleio"
	"github.com/resque-go/resque-go/schedule"
	"github.com/resque-go/resque-go/stats"
)

// SchedulerConfig configures a Scheduler: the `resque-go scheduler`
// process, and the one a pool manager runs with `scheduler: true`. Zero
// values mean the documented defaults.
type SchedulerConfig struct {
	Redis Redis `json:"redis"`
	// Hostname names the process in its record and in failed entries of
	// items that cannot be promoted; "" means this machine's name.
	Hostname string `json:"hostname"`
	// Schedule is a resque-scheduler schedule file (YAML); "" loads none
	// (the persistent schedules in Redis still fire).
	Schedule string `json:"schedule"`
	// Environment keeps the schedules whose rails_env/env names it (all
	// when "").
	Environment string `json:"environment"`
	// Dynamic follows schedules_changed (resque-scheduler's
	// DYNAMIC_SCHEDULE): schedules set or removed in Redis are reloaded.
	Dynamic bool `json:"dynamic"`
	// LockPrefix is RESQUE_SCHEDULER_MASTER_LOCK_PREFIX (schedulers with
	// different prefixes elect separate masters); LockTimeout the master
	// lock's TTL (0: 180 s; at least 1 s); ScheduleInterval the longest
	// wait between passes of the recurring schedules (0: 5 s). In JSON,
	// strings as Config's durations are.
	LockPrefix       string        `json:"lock_prefix,omitempty"`
	LockTimeout      time.Duration `json:"lock_timeout,omitempty"`
	ScheduleInterval time.Duration `json:"schedule_interval,omitempty"`
	// NoSchedules turns off recurring schedules (resque-scheduler's part:
	// its master lock is then never taken, as without Schedule and
	// Dynamic, so that a Ruby resque-scheduler keeps firing its own
	// file); NoPlans turns off plans;
	// NoMover turns off promoting delayed items.
	NoSchedules bool `json:"no_schedules"`
	NoPlans     bool `json:"no_plans"`
	NoMover     bool `json:"no_mover"`
	// MetricsAddr serves /metrics, /healthz and /readyz ("" off; a bare port
	// listens on 127.0.0.1 only); MetricsToken, when set, is the bearer
	// token both require.
	MetricsAddr  string `json:"metrics_addr"`
	MetricsToken string `json:"metrics_token,omitempty"`
	// Retention trims the failed and retries lists, as Config.Retention
	// (elected with the workers' trimmers).
	Retention failure.Retention `json:"retention,omitzero"`
	// SupervisorPID: once it is no longer this process's parent, the
	// scheduler stops (a pool manager that died).
	SupervisorPID int `json:"supervisor_pid"`
	// LogLevel and LogFormat say how the CLI builds the logger.
	LogLevel  string `json:"log_level"`
	LogFormat string `json:"log_format"`
}

// Scheduler promotes due delayed items, fires plans, and fires recurring
// schedules while it is resque-scheduler's master, publishing its state in
// a runtime record that `resque-go stats` shows. Any number may run: each
// delayed item and each (plan, slot) is taken by one atomic step, and one
// master fires the schedules.
type Scheduler struct {
	cfg     SchedulerConfig
	log     zerolog.Logger
	client  *rdb.Client
	host    string
	pid     int
	started time.Time

	mover   *delayedio.Mover
	trimmer *failureio.Trimmer
	planner *planio.Planner
	sched   *scheduleio.Scheduler
	metrics *metrics.SchedulerServer
	record  service.Runner

	promoted, plansFired, schedulesFired, dueBuckets atomic.Int64
	nextPlan, lastPass                               atomic.Int64 // Unix nanoseconds

	mu      sync.Mutex
	running bool
	stopped bool
	done    chan struct{}
}

// NewScheduler validates cfg and builds the scheduler; nothing runs before
// Start. A bad setting or an unreadable schedule file matches ErrConfig.
func NewScheduler(cfg SchedulerConfig, opts ...Option) (*Scheduler, error) {
	o := newOptions(nil, opts)
	host := cfg.Hostname
	if host == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, configError{fmt.Errorf("node: SchedulerConfig.Hostname: %w", err)}
		}
		host = h
	}
	if strings.ContainsAny(host, ": ") {
		return nil, configError{fmt.Errorf("node: SchedulerConfig.Hostname %q must not contain ':' or spaces", host)}
	}
	var entries []schedule.Entry
	if cfg.Schedule != "" {
		var err error
		if entries, err = schedule.LoadFile(cfg.Schedule, cfg.Environment); err != nil {
			return nil, configError{err}
		}
	}
	lockTimeout, schedInterval := cfg.LockTimeout, cfg.ScheduleInterval
	if lockTimeout != 0 && lockTimeout < time.Second {
		return nil, badf("node: SchedulerConfig.LockTimeout %s: want at least 1 second", lockTimeout)
	}
	if schedInterval < 0 {
		return nil, badf("node: SchedulerConfig.ScheduleInterval %s: must not be negative", schedInterval)
	}
	opt, err := cfg.Redis.options()
	if err != nil {
		return nil, err
	}
	client, err := newRedisClient(cfg.Redis, opt, o.log)
	if err != nil {
		return nil, err
	}
	s := &Scheduler{cfg: cfg, log: o.log, client: client, host: host, pid: os.Getpid(), done: make(chan struct{})}
	id := fmt.Sprintf("%s:%d:scheduler", host, s.pid)
	log := &s.log
	if !cfg.NoMover {
		// elected with the workers' movers: one poll per second in all
		s.mover, err = delayedio.NewMover(delayedio.MoverConfig{Client: client, Hostname: host, WorkerID: id, Logger: log, Elect: true,
			OnPass: func(n int) { s.promoted.Add(int64(n)); s.passed() }})
		if err != nil {
			client.Close()
			return nil, err
		}
	}
	if cfg.Retention.On() {
		s.trimmer, err = failureio.NewTrimmer(failureio.TrimmerConfig{Client: client, Owner: id, Retention: cfg.Retention, Logger: log})
		if err != nil {
			client.Close()
			return nil, configError{fmt.Errorf("node: SchedulerConfig.%s", strings.TrimPrefix(err.Error(), "failure: "))}
		}
	}
	if !cfg.NoPlans {
		s.planner, err = planio.NewPlanner(planio.PlannerConfig{Client: client, Hostname: host, WorkerID: id, Logger: log,
			OnPass: func(n int) { s.plansFired.Add(int64(n)); s.passed() }})
		if err != nil {
			client.Close()
			return nil, err
		}
	}
	// Without a schedule file (or Dynamic) there is nothing of ours to fire:
	// taking resque-scheduler's master lock then would only stop a Ruby
	// resque-scheduler on the same Redis from firing its own file.
	if !cfg.NoSchedules && (cfg.Schedule != "" || cfg.Dynamic) {
		s.sched, err = scheduleio.New(scheduleio.Config{Client: client, Entries: entries, Environment: cfg.Environment,
			Dynamic: cfg.Dynamic, Hostname: host, Pid: s.pid, Logger: log,
			LockPrefix: cfg.LockPrefix, LockTimeout: lockTimeout, Interval: schedInterval,
			OnPass: func(r schedule.PassResult) { s.schedulesFired.Add(int64(r.Fired)); s.passed() }})
		if err != nil {
			client.Close()
			return nil, configError{err}
		}
	}
	if cfg.MetricsAddr != "" {
		s.metrics = metrics.NewScheduler(client, s.counts, metrics.ServerOptions{Token: cfg.MetricsToken, Logger: &s.log})
	}
	return s, nil
}

func (s *Scheduler) passed() { s.lastPass.Store(time.Now().UnixNano()) }

func (s *Scheduler) counts() metrics.SchedulerCounts {
	return metrics.SchedulerCounts{Promoted: s.promoted.Load(), PlansFired: s.plansFired.Load(),
		SchedulesFired: s.schedulesFired.Load(), DueBuckets: s.dueBuckets.Load(), Master: s.sched != nil && s.sched.IsMaster()}
}

// Info is the scheduler's runtime record as it is now.
func (s *Scheduler) Info() stats.SchedulerInfo {
	in := stats.SchedulerInfo{Host: s.host, PID: s.pid, Started: s.started, Promoted: s.promoted.Load(),
		PlansFired: s.plansFired.Load(), SchedulesFired: s.schedulesFired.Load(), DueItems: s.dueBuckets.Load()}
	if t := s.lastPass.Load(); t > 0 {
		in.LastPass = time.Unix(0, t).UTC()
	}
	if t := s.nextPlan.Load(); t > 0 {
		in.NextPlanSlot = time.Unix(0, t).UTC()
	}
	if s.sched != nil {
		st := s.sched.Status()
		in.Master, in.Schedules = st.Master, st.Entries
	}
	return in
}

// Start serves the metrics endpoint and starts every service. A Redis that
// refuses the connection is an error; one that is down is waited for by
// the services themselves (each pass retries).
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running || s.stopped {
		return errors.New("node: scheduler Start called twice, or after Stop")
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	err := s.client.Ping(pingCtx)
	cancel()
	if err != nil && rdb.IsFatal(err) {
		s.stopped = true
		s.client.Close()
		close(s.done)
		return fmt.Errorf("start: %w", err)
	}
	if err != nil {
		s.log.Warn().Err(err).Msg("redis not reachable yet; the scheduler retries on every pass")
	}
	if s.metrics != nil {
		bound, err := s.metrics.Serve(s.cfg.MetricsAddr)
		if err != nil {
			s.stopped = true
			s.client.Close()
			close(s.done)
			return badf("node: SchedulerConfig.MetricsAddr %q: %v", s.cfg.MetricsAddr, err)
		}
		s.log.Info().Str("addr", bound).Msg("serving /metrics, /healthz and /readyz")
	}
	s.started = time.Now().UTC()
	s.running = true
	s.keepSchedulerPid(ctx)
	for _, c := range s.components() {
		c.Start(context.Background())
	}
	s.record.Start(context.Background(), s.recordLoop)
	go s.watch(ctx)
	s.log.Info().Str("host", s.host).Int("pid", s.pid).Bool("mover", s.mover != nil).Bool("plans", s.planner != nil).
		Bool("schedules", s.sched != nil).Msg("scheduler started")
	return nil
}

func (s *Scheduler) components() []component {
	var out []component
	if s.mover != nil {
		out = append(out, s.mover)
	}
	if s.trimmer != nil {
		out = append(out, s.trimmer)
	}
	if s.planner != nil {
		out = append(out, s.planner)
	}
	if s.sched != nil {
		out = append(out, s.sched)
	}
	return out
}

// watch stops the scheduler when ctx ends or the supervisor is gone.
func (s *Scheduler) watch(ctx context.Context) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		if pid := s.cfg.SupervisorPID; pid > 0 && os.Getppid() != pid {
			s.log.Warn().Int("supervisor_pid", pid).Msg("supervisor is gone; stopping")
			s.Stop()
			return
		}
		select {
		case <-ctx.Done():
			s.Stop()
			return
		case <-s.done:
			return
		case <-t.C:
		}
	}
}

// recordInterval is how often the runtime record is refreshed; it expires
// after three refreshes missed.
const recordInterval = 5 * time.Second

func (s *Scheduler) recordLoop(ctx context.Context) {
	for {
		s.publish(ctx)
		if !service.Sleep(ctx, recordInterval) {
			return
		}
	}
}

func (s *Scheduler) publish(ctx context.Context) {
	s.keepSchedulerPid(ctx)
	callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if due, next, err := s.client.SchedulerGauges(callCtx, time.Now()); err == nil {
		s.dueBuckets.Store(due)
		if next > 0 {
			s.nextPlan.Store(time.Unix(next, 0).UnixNano())
		} else {
			s.nextPlan.Store(0)
		}
	}
	b, err := json.Marshal(s.Info())
	if err != nil {
		return
	}
	if err := s.client.SetSchedulerRecord(callCtx, s.host, s.pid, b, 3*recordInterval); err != nil && ctx.Err() == nil {
		s.log.Debug().Err(err).Msg("scheduler record not written")
	}
	// a scheduler alone next to Ruby or PHP workers keeps the history too
	if _, err := s.client.SampleHistory(callCtx, time.Now(), recordInterval); err != nil && ctx.Err() == nil {
		s.log.Debug().Err(err).Msg("history not sampled")
	}
}

// Stop stops every service, deletes the runtime record and closes the
// connection; it returns when all of that is done. It is idempotent.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		<-s.done
		return
	}
	s.stopped = true
	running := s.running
	s.mu.Unlock()
	if running {
		cs := s.components()
		for i := len(cs) - 1; i >= 0; i-- {
			cs[i].Stop()
		}
		s.record.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = s.client.DeleteSchedulerRecord(ctx, s.host, s.pid)
		if s.KeepsSchedulerPid() {
			if err := s.client.ReleaseSchedulerPid(ctx, s.host, s.pid); err != nil {
				s.log.Warn().Err(err).Msg("scheduler_pid not removed")
			}
		}
		cancel()
		if s.metrics != nil {
			_ = s.metrics.Close()
		}
		s.log.Info().Int64("promoted", s.promoted.Load()).Int64("plans_fired", s.plansFired.Load()).
			Int64("schedules_fired", s.schedulesFired.Load()).Msg("scheduler stopped")
	}
	s.client.Close()
	close(s.done)
}

// KeepsSchedulerPid reports whether the scheduler keeps resque-v3's
// scheduler_pid:<host> record (in the resque-v3 namespace): its pid while
// it runs, removed when it stops cleanly, so v3 tooling sees a scheduler on
// the host. The v3 init process then signals that pid: HUP (reload) and
// USR1 (reopen logs), which a resque-go scheduler takes without stopping,
// and TERM when it shuts down.
func (s *Scheduler) KeepsSchedulerPid() bool { return s.client.Keys().KeepsSchedulerPid() }

// keepSchedulerPid writes this process's pid to scheduler_pid:<host>
// unless it is there already or names another process that is alive (a v3
// scheduler on this host keeps its record); a pid left by a scheduler that
// died is replaced. Called at start and on every record refresh, so the
// record comes back after another scheduler's clean stop removed it.
func (s *Scheduler) keepSchedulerPid(ctx context.Context) {
	if !s.KeepsSchedulerPid() {
		return
	}
	callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cur, err := s.client.SchedulerPid(callCtx, s.host)
	if err != nil || cur == s.pid || cur > 0 && pidAlive(cur) {
		return
	}
	if _, err := s.client.SetSchedulerPid(callCtx, s.host, s.pid, false); err != nil && ctx.Err() == nil {
		s.log.Debug().Err(err).Msg("scheduler_pid not written")
	}
}

// pidAlive reports whether a process with pid exists on this machine.
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Done is closed when the scheduler has stopped.
func (s *Scheduler) Done() <-chan struct{} { return s.done }

// schedulerAlias is SchedulerConfig without its JSON methods.
type schedulerAlias SchedulerConfig

// schedulerJSON is SchedulerConfig's JSON form: the durations as strings
// (their fields here hide schedulerAlias's of the same JSON name).
type schedulerJSON struct {
	*schedulerAlias
	LockTimeout      jsonDuration `json:"lock_timeout,omitempty"`
	ScheduleInterval jsonDuration `json:"schedule_interval,omitempty"`
}

// MarshalJSON writes the durations as strings ("3m0s"), left out when 0.
func (c SchedulerConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(schedulerJSON{schedulerAlias: (*schedulerAlias)(&c),
		LockTimeout: durationString(c.LockTimeout), ScheduleInterval: durationString(c.ScheduleInterval)})
}

// UnmarshalJSON reads what MarshalJSON writes, and seconds ("180", "0.5");
// a field it does not know is an error.
func (c *SchedulerConfig) UnmarshalJSON(data []byte) error {
	var a schedulerAlias
	j := schedulerJSON{schedulerAlias: &a}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	var err error
	if a.LockTimeout, err = parseSeconds("lock_timeout", string(j.LockTimeout)); err != nil {
		return err
	}
	if a.ScheduleInterval, err = parseSeconds("schedule_interval", string(j.ScheduleInterval)); err != nil {
		return err
	}
	*c = SchedulerConfig(a)
	return nil
}
