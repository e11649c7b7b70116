package scheduleio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"
	"github.com/resque-go/resque-go/schedule"
)

// Config configures a Scheduler. Zero values mean the documented defaults.
type Config struct {
	Client *rdb.Client
	// Entries are the static schedules (LoadFile). A persistent schedule of
	// the same name replaces one, as in resque-scheduler.
	Entries []schedule.Entry
	// Environment filters the entries and the persistent schedules by
	// their rails_env/env (resque-scheduler's RAILS_ENV / --environment).
	Environment string
	// Dynamic follows schedules_changed while master: a schedule set or
	// removed with Resque.set_schedule/remove_schedule is reloaded on the
	// next pass (DYNAMIC_SCHEDULE). Persistent schedules are read whenever
	// this scheduler becomes master either way.
	Dynamic bool
	// Hostname and Pid make the master lock's value, "<hostname>:<pid>";
	// default os.Hostname() and os.Getpid().
	Hostname string
	Pid      int
	// LockTimeout is the master lock's TTL, renewed on every pass; default
	// 180 s (resque-scheduler's LOCK_TIMEOUT). A scheduler that dies holds
	// the lock that long.
	LockTimeout time.Duration
	// LockPrefix is RESQUE_SCHEDULER_MASTER_LOCK_PREFIX: schedulers with
	// different prefixes elect separate masters on one Redis.
	LockPrefix string
	// Interval is the longest wait between passes (each pass renews or
	// tries for the lock); default 5 s (RESQUE_SCHEDULER_INTERVAL). The
	// master also wakes at each slot.
	Interval time.Duration
	// CatchUp is how late a slot may still be enqueued: a slot missed by
	// the master (a pause, Redis away, a master that died holding the lock)
	// is enqueued once when at most this old; older ones are skipped, as
	// cron skips them. Slots from before an entry was loaded, or before a
	// record shows it ran, are never enqueued. Default 5 minutes; at least
	// 2*Interval.
	CatchUp time.Duration
	Logger  *zerolog.Logger
	Now     func() time.Time
	// OnPass, when set, is called after every pass (tests wait on it).
	OnPass func(schedule.PassResult)
}

// Scheduler fires recurring schedules while it holds resque-scheduler's
// master lock.
type Scheduler struct {
	cfg     Config
	log     zerolog.Logger
	lockKey string
	value   string
	runner  service.Runner

	master atomic.Bool // read without mu: stats must not wait for a pass

	mu       sync.Mutex
	static   map[string]*loaded
	dynamic  map[string]*loaded
	bad      map[string]error
	lastPass time.Time
	fired    int64
}

// loaded is an entry as a scheduler tracks it.
type loaded struct {
	schedule.Entry
	since time.Time // no slot before this is enqueued (zero: no bound)
	next  time.Time // no slot is due before this (zero: look now)
	last  int64     // the last slot known to be enqueued, Unix seconds
}

// New returns a scheduler; Start runs it.
func New(cfg Config) (*Scheduler, error) {
	if cfg.Client == nil {
		return nil, errors.New("schedule: Config.Client is required")
	}
	if cfg.Hostname == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("schedule: hostname: %w", err)
		}
		cfg.Hostname = h
	}
	if cfg.Pid == 0 {
		cfg.Pid = os.Getpid()
	}
	if cfg.LockTimeout <= 0 {
		cfg.LockTimeout = protocol.SchedulerLockTimeout
	}
	if cfg.LockTimeout < time.Second {
		return nil, errors.New("schedule: Config.LockTimeout must be at least 1 s (Redis EXPIRE takes seconds)")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 5 * time.Second
	}
	if cfg.CatchUp <= 0 {
		cfg.CatchUp = 5 * time.Minute
	}
	cfg.CatchUp = max(cfg.CatchUp, 2*cfg.Interval)
	cfg.Now = service.Clock(cfg.Now)
	cfg.Logger = service.Logger(cfg.Logger)
	s := &Scheduler{
		cfg:     cfg,
		log:     *cfg.Logger,
		lockKey: cfg.Client.Keys().SchedulerMasterLock(cfg.LockPrefix),
		value:   protocol.SchedulerLockValue(cfg.Hostname, cfg.Pid),
		static:  map[string]*loaded{},
		dynamic: map[string]*loaded{},
		bad:     map[string]error{},
	}
	now := cfg.Now()
	for _, e := range cfg.Entries {
		if e.MatchesEnv(cfg.Environment) {
			s.static[e.Name] = s.load(e, now)
		}
	}
	return s, nil
}

// load starts tracking e as loaded at now: first_in counts from now.
func (s *Scheduler) load(e schedule.Entry, now time.Time) *loaded {
	l := &loaded{Entry: e.LoadedAt(now), since: now}
	if in := e.FirstIn(); in > 0 {
		l.since = now.Add(in)
	}
	return l
}

// LockKey is the master lock's key.
func (s *Scheduler) LockKey() string { return s.lockKey }

// LockValue is this scheduler's value of the master lock, "<hostname>:<pid>".
func (s *Scheduler) LockValue() string { return s.value }

// Start runs the scheduler until Stop or ctx ends.
func (s *Scheduler) Start(ctx context.Context) { s.runner.Start(ctx, s.loop) }

// Stop stops the scheduler, waits for it, and gives up the master lock
// (resque-scheduler releases it on shutdown too).
func (s *Scheduler) Stop() { s.runner.Stop() }

// IsMaster reports whether the last pass held the master lock.
func (s *Scheduler) IsMaster() bool { return s.master.Load() }

// Status returns the scheduler's state.
func (s *Scheduler) Status() schedule.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	master := s.master.Load()
	st := schedule.Status{Master: master, LockKey: s.lockKey, Value: s.value, LastPass: s.lastPass, Fired: s.fired, Errors: map[string]error{}}
	for name, err := range s.bad {
		st.Errors[name] = err
	}
	for _, l := range s.active() {
		st.Entries++
		if master && !l.next.IsZero() && (st.NextSlot.IsZero() || l.next.Before(st.NextSlot)) {
			st.NextSlot = l.next
		}
	}
	return st
}

// Entries returns the schedules in force, by name: the static ones, with
// persistent ones (read when this scheduler last became master) in their
// place.
func (s *Scheduler) Entries() []schedule.Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []schedule.Entry
	for _, l := range s.active() {
		out = append(out, l.Entry)
	}
	return out
}

// active returns the entries in force, sorted by name: a persistent one
// replaces a static one of the same name, a bad persistent one hides it.
func (s *Scheduler) active() []*loaded {
	names := make([]string, 0, len(s.static)+len(s.dynamic))
	for n := range s.static {
		names = append(names, n)
	}
	for n := range s.dynamic {
		if _, ok := s.static[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	out := make([]*loaded, 0, len(names))
	for _, n := range names {
		if _, bad := s.bad[n]; bad {
			continue
		}
		if l, ok := s.dynamic[n]; ok {
			out = append(out, l)
		} else {
			out = append(out, s.static[n])
		}
	}
	return out
}

func (s *Scheduler) loop(ctx context.Context) {
	defer func() {
		// also when a takeover failed half way: the lock may be ours
		callCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		// what this master published goes first, while the lock is ours
		if err := s.cfg.Client.WithdrawSchedules(callCtx, s.lockKey, s.value); err != nil {
			s.log.Warn().Err(err).Msg("published schedules not withdrawn")
		}
		if err := s.cfg.Client.ReleaseSchedulerMaster(callCtx, s.lockKey, s.value); err != nil {
			s.log.Warn().Err(err).Msg("scheduler master lock release failed")
		}
		cancel()
		s.master.Store(false)
	}()
	for {
		wait := s.cfg.Interval
		if _, err := s.Pass(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn().Err(err).Msg("scheduler pass failed")
		} else if next := s.Status().NextSlot; !next.IsZero() {
			wait = min(wait, max(next.Sub(s.cfg.Now()), 10*time.Millisecond))
		}
		if !service.Sleep(ctx, wait) {
			return
		}
	}
}

// Pass takes or renews the master lock and, while master, reloads changed
// dynamic schedules and enqueues every entry's due slot.
func (s *Scheduler) Pass(ctx context.Context) (schedule.PassResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, err := s.pass(ctx)
	s.lastPass = s.cfg.Now()
	s.fired += int64(res.Fired)
	res.Master = s.master.Load()
	if s.cfg.OnPass != nil {
		s.cfg.OnPass(res)
	}
	return res, err
}

func (s *Scheduler) pass(ctx context.Context) (schedule.PassResult, error) {
	c := s.cfg.Client
	now := s.cfg.Now()
	held, err := c.SchedulerMaster(ctx, s.lockKey, s.value, s.cfg.LockTimeout)
	if err != nil {
		return schedule.PassResult{}, fmt.Errorf("schedule: %w", err)
	}
	if !held {
		if s.master.Swap(false) {
			s.log.Warn().Str("lock", s.lockKey).Msg("scheduler is no longer master")
		}
		return schedule.PassResult{}, nil
	}
	if !s.master.Load() {
		if err := s.takeOver(ctx, now); err != nil {
			return schedule.PassResult{}, err
		}
		s.master.Store(true)
		s.log.Info().Str("lock", s.lockKey).Str("value", s.value).Int("schedules", len(s.active())).Msg("scheduler is master")
		s.publish(ctx)
	} else if s.cfg.Dynamic {
		changed, err := s.reloadChanged(ctx, now)
		if changed {
			s.publish(ctx)
		}
		if err != nil {
			return schedule.PassResult{}, err
		}
	}
	var res schedule.PassResult
	for _, l := range s.active() {
		fired, err := s.fire(ctx, l, now)
		if errors.Is(err, rdb.ErrNotMaster) {
			s.log.Warn().Str("lock", s.lockKey).Msg("scheduler is no longer master")
			s.master.Store(false)
			return res, nil
		}
		if err != nil {
			return res, err
		}
		if fired {
			res.Fired++
		}
	}
	return res, nil
}

// takeOver prepares a new master: it reads the persistent schedules and
// what is recorded of past enqueues (resque-go's slots, and
// resque-scheduler's last_enqueued_at, so a slot a Ruby master enqueued is
// not enqueued again).
func (s *Scheduler) takeOver(ctx context.Context, now time.Time) error {
	c := s.cfg.Client
	if s.cfg.Dynamic {
		// resque-scheduler clears the change set when a master (re)loads
		// everything; clearing it first loses no change made meanwhile.
		if err := c.ClearChangedSchedules(ctx); err != nil {
			return fmt.Errorf("schedule: %w", err)
		}
	}
	persistent, err := c.PersistentSchedules(ctx)
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	s.dynamic, s.bad = map[string]*loaded{}, map[string]error{}
	for name, raw := range persistent {
		s.setDynamic(name, raw, true, now)
	}
	slots, lastEnqueued, err := c.ScheduleRecords(ctx)
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	for _, l := range s.active() {
		l.next = time.Time{}
		last, ok := slots[l.Name]
		if v, found := lastEnqueued[l.Name]; found {
			if t, err := protocol.ParseLastEnqueuedAt(v); err == nil {
				last, ok = max(last, t.Unix()), true
			}
		}
		if ok {
			// It ran before: the slots it missed while no master ran are
			// caught up (within CatchUp), however recently it was loaded.
			l.last, l.since = last, time.Time{}
			if in := l.FirstIn(); in > 0 {
				l.since = now.Add(in)
			}
		}
	}
	return nil
}

// publish writes the schedules this master fires where `resque-go
// schedule list` reads them (rdb.PublishSchedules); a failure is logged:
// firing does not depend on it.
func (s *Scheduler) publish(ctx context.Context) {
	configs := map[string][]byte{}
	for _, l := range s.active() {
		if c := l.Config(); len(c) > 0 {
			configs[l.Name] = c
		}
	}
	if _, err := s.cfg.Client.PublishSchedules(ctx, s.lockKey, s.value, configs); err != nil && ctx.Err() == nil {
		s.log.Warn().Err(err).Msg("schedules not published")
	}
}

// reloadChanged reloads the schedules named in schedules_changed; changed
// reports whether it reloaded any.
func (s *Scheduler) reloadChanged(ctx context.Context, now time.Time) (changed bool, err error) {
	c := s.cfg.Client
	for range 100 {
		names, err := c.PopChangedSchedules(ctx, 100)
		if err != nil || len(names) == 0 {
			return changed, err
		}
		changed = true
		for _, name := range names {
			raw, ok, err := c.PersistentSchedule(ctx, name)
			if err != nil {
				return changed, err
			}
			prev := s.dynamic[name]
			delete(s.dynamic, name)
			delete(s.bad, name)
			if ok {
				s.setDynamic(name, raw, false, now)
			}
			if l, ok := s.dynamic[name]; ok && prev != nil {
				l.last = prev.last
			}
			s.log.Info().Str("schedule", name).Bool("removed", !ok).Msg("dynamic schedule reloaded")
		}
	}
	return changed, nil
}

// setDynamic loads a persistent schedule (one for another environment is
// left out; a bad one is recorded and hides a static one of its name).
func (s *Scheduler) setDynamic(name string, raw []byte, quiet bool, now time.Time) {
	e, err := schedule.ParseJSON(name, raw)
	if err != nil {
		s.bad[name] = err
		s.log.Error().Err(err).Str("schedule", name).Msg("dynamic schedule not loaded")
		return
	}
	if !e.MatchesEnv(s.cfg.Environment) {
		return
	}
	s.dynamic[name] = s.load(e, now)
	if !quiet {
		s.log.Debug().Str("schedule", name).Str("when", e.When()).Msg("dynamic schedule loaded")
	}
}

// fire enqueues l's latest due slot, if there is one it has not enqueued.
func (s *Scheduler) fire(ctx context.Context, l *loaded, now time.Time) (bool, error) {
	if l.Manual() || !l.next.IsZero() && now.Before(l.next) {
		return false, nil
	}
	floor := now.Add(-s.cfg.CatchUp)
	if l.since.After(floor) {
		floor = l.since
	}
	slot, ok := l.Latest(now, floor)
	if !ok || slot.Unix() <= l.last {
		l.next = l.Next(now)
		return false, nil
	}
	payload, err := l.Payload()
	if err != nil {
		return false, fmt.Errorf("schedule %q: %w", l.Name, err)
	}
	fired, last, err := s.cfg.Client.FireSchedule(ctx, rdb.ScheduleFire{
		LockKey: s.lockKey, LockValue: s.value, Name: l.Name, Slot: slot.Unix(),
		Queue: l.Queue, Payload: payload,
		// resque-scheduler writes Time.now.to_s, in the process's zone.
		EnqueuedAt: protocol.FormatLastEnqueuedAt(now.In(time.Local)),
	})
	if err != nil {
		return false, err
	}
	l.last = last
	l.next = l.Next(now)
	if fired {
		s.log.Info().Str("schedule", l.Name).Str("class", l.Class).Str("queue", l.Queue).
			Time("slot", slot).Msg("schedule enqueued")
	}
	return fired, nil
}

// Inspect reads the master lock, the schedules the master published as
// the ones it fires, the persistent schedules and the records of past
// enqueues, and merges them with the static entries the way a scheduler
// does (a static entry replaces a published one of its name, a persistent
// schedule either; entries for another environment are left out).
// Schedules are sorted by name.
func Inspect(ctx context.Context, c *rdb.Client, static []schedule.Entry, environment, lockPrefix string, now time.Time) (schedule.Overview, error) {
	o := schedule.Overview{LockKey: c.Keys().SchedulerMasterLock(lockPrefix), Schedules: []schedule.Info{}, Errors: []schedule.BadSchedule{}}
	var err error
	if o.Master, o.MasterTTL, err = c.SchedulerMasterHolder(ctx, o.LockKey); err != nil {
		return o, err
	}
	persistent, err := c.PersistentSchedules(ctx)
	if err != nil {
		return o, err
	}
	byName := map[string]schedule.Entry{}
	// what the master fires from its own file, published while it holds
	// the lock (a master that died left it: not shown)
	publisher, published, err := c.PublishedSchedules(ctx)
	if err != nil {
		return o, err
	}
	if publisher != "" && publisher == o.Master {
		for name, raw := range published {
			if e, err := schedule.ParseEntry(name, raw, schedule.SourceMaster); err == nil && e.MatchesEnv(environment) {
				byName[name] = e
			}
		}
	}
	for _, e := range static {
		if e.MatchesEnv(environment) {
			byName[e.Name] = e
		}
	}
	for name, raw := range persistent {
		e, err := schedule.ParseJSON(name, raw)
		switch {
		case err != nil:
			delete(byName, name)
			o.Errors = append(o.Errors, schedule.BadSchedule{Name: name, Error: err.Error()})
		case e.MatchesEnv(environment):
			byName[name] = e
		}
	}
	slots, lastEnqueued, err := c.ScheduleRecords(ctx)
	if err != nil {
		return o, err
	}
	for _, e := range byName {
		info := schedule.Info{Entry: e, LastEnqueuedAt: lastEnqueued[e.Name], Next: e.Next(now)}
		if s, ok := slots[e.Name]; ok {
			info.LastSlot = time.Unix(s, 0)
		}
		o.Schedules = append(o.Schedules, info)
	}
	slices.SortFunc(o.Schedules, func(a, b schedule.Info) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(o.Errors, func(a, b schedule.BadSchedule) int { return strings.Compare(a.Name, b.Name) })
	return o, nil
}
