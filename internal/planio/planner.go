package planio

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"
	"github.com/resque-go/resque-go/plan"
)

// PlannerConfig configures a Planner. Zero values mean the documented
// defaults.
type PlannerConfig struct {
	Client *rdb.Client
	// Interval between passes; default 1 s.
	Interval time.Duration
	// Now is the clock every slot is computed from; default time.Now.
	Now    func() time.Time
	Logger *zerolog.Logger
	// OnPass, when set, is called after every pass with the number of
	// jobs it pushed (tests wait on it).
	OnPass func(fired int)
	// MisfireGrace is how late a slot of a Skip plan may still fire;
	// default 1 minute.
	MisfireGrace time.Duration
	// Batch is how many ids of a slot are read at a time; default 100.
	Batch int
	// Hostname and WorkerID fill the failed entry of a plan that cannot
	// be fired.
	Hostname string
	WorkerID string
}

// Planner fires due plans. Any number of planners (on any hosts) may run
// at once: each (plan, slot) is taken by one compare-and-remove step that
// also pushes the job and files the plan in its next slot.
type Planner struct {
	cfg    PlannerConfig
	log    zerolog.Logger
	runner service.Runner
	zones  sync.Map       // time zone name -> *time.Location
	stuck  service.OnceIn // plans and slots left for the next pass, logged once a minute
}

// NewPlanner returns a planner; Start runs it.
func NewPlanner(cfg PlannerConfig) (*Planner, error) {
	if cfg.Client == nil {
		return nil, errors.New("plan: PlannerConfig.Client is required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.MisfireGrace <= 0 {
		cfg.MisfireGrace = time.Minute
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 100
	}
	cfg.Now = service.Clock(cfg.Now)
	cfg.Logger = service.Logger(cfg.Logger)
	return &Planner{cfg: cfg, log: *cfg.Logger}, nil
}

// Start runs the planner until Stop or ctx ends.
func (p *Planner) Start(ctx context.Context) { p.runner.Start(ctx, p.loop) }

// Stop stops the planner and waits for it.
func (p *Planner) Stop() { p.runner.Stop() }

func (p *Planner) loop(ctx context.Context) {
	t := time.NewTicker(p.cfg.Interval)
	defer t.Stop()
	for {
		fired, err := p.Pass(ctx)
		if err != nil && ctx.Err() == nil {
			p.log.Warn().Err(err).Msg("planner pass failed")
		}
		if p.cfg.OnPass != nil {
			p.cfg.OnPass(fired)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// maxChanged bounds the re-reads of a plan that changes under a fire.
const maxChanged = 5

// Pass fires every slot due now, oldest first, and returns how many jobs
// it pushed.
//
// One bad entry never stops the other plans. A plan_schedule member that
// is not a time, or a slot plan_schedule:<ts> of another type, is taken
// off the schedule with a failed entry naming it; a plan:<id> of another
// type is taken out of its slot with a failed entry naming the key (the
// keys are kept as they are). A plan that cannot be fired now (its queue
// key holds another type) stays in its slot for the next pass, and the
// others of the slot and of later slots fire. Only an error of Redis itself
// (unreachable, loading) ends the pass.
func (p *Planner) Pass(ctx context.Context) (int, error) {
	c := p.cfg.Client
	fired := 0
	skip := map[string]bool{} // slots left for the next pass
	for ctx.Err() == nil {
		due, err := c.DuePlanSlots(ctx, p.cfg.Now().Unix(), len(skip)+1)
		if err != nil {
			return fired, err
		}
		i := slices.IndexFunc(due, func(d rdb.ScheduleMember) bool { return !skip[d.Member] })
		if i < 0 {
			return fired, nil
		}
		d := due[i]
		n, err := p.slot(ctx, d)
		fired += n
		if err != nil {
			if rdb.IsTransient(err) || ctx.Err() != nil {
				return fired, err
			}
			if p.stuck.Due("slot "+d.Member, p.cfg.Now()) {
				p.log.Error().Err(err).Str("slot", d.Member).Msg("plan slot left for the next pass; the other slots go on (logged once a minute)")
			}
			skip[d.Member] = true
		}
	}
	return fired, ctx.Err()
}

// slot fires the plans of due slot d, or sets d aside when it is not a time
// or its key holds another type.
func (p *Planner) slot(ctx context.Context, d rdb.ScheduleMember) (int, error) {
	c := p.cfg.Client
	sched := c.Keys().PlanSchedule()
	if d.Bad {
		return 0, p.setAside(ctx, d, "", protocol.ExcBadSchedule,
			fmt.Sprintf("%s member %q (score %v) is not a Unix time in seconds: taken off the schedule", sched, d.Member, d.Score))
	}
	fired := 0
	stuck := map[string]error{} // plans of the slot that cannot be fired now
	for ctx.Err() == nil {
		ids, err := c.PlanSlotIDs(ctx, d.TS, p.cfg.Batch+len(stuck))
		if kt := (*rdb.KeyTypeError)(nil); errors.As(err, &kt) {
			return fired, p.setAside(ctx, d, kt.Type, protocol.ExcWrongType,
				fmt.Sprintf("%s: taken off %s and left as it is; the plans it names fire again once filed in a slot", kt, sched))
		}
		if err != nil {
			return fired, err
		}
		ids = slices.DeleteFunc(ids, func(id string) bool { return stuck[id] != nil })
		if len(ids) == 0 {
			for _, err := range stuck {
				return fired, err
			}
			return fired, c.CleanPlanSlot(ctx, d.TS)
		}
		raws, err := c.Plans(ctx, ids)
		if err != nil {
			return fired, err
		}
		progress := false
		for i, id := range ids {
			res, err := p.fire(ctx, d.TS, id, raws[i])
			if err != nil {
				if rdb.IsTransient(err) || ctx.Err() != nil {
					return fired, err
				}
				if p.stuck.Due("plan "+id, p.cfg.Now()) {
					p.log.Error().Err(err).Str("plan_id", id).Int64("slot", d.TS).Msg("plan cannot be fired now; it stays in its slot, the other plans go on (logged once a minute)")
				}
				stuck[id], progress = err, true
				continue
			}
			if res == rdb.FireFired {
				fired++
			}
			progress = progress || res != rdb.FireChanged
		}
		if !progress {
			return fired, fmt.Errorf("plan: slot %d: its plans kept changing while being fired", d.TS)
		}
	}
	return fired, ctx.Err()
}

// setAside takes d off plan_schedule with a failed entry saying why
// (listType: its slot holds that type).
func (p *Planner) setAside(ctx context.Context, d rdb.ScheduleMember, listType, exception, why string) error {
	f := protocol.Failure{FailedAt: p.cfg.Now(), Exception: exception, Error: why,
		Backtrace: []string{}, Worker: p.cfg.WorkerID, ProcessedBy: p.cfg.Hostname}
	done, err := p.cfg.Client.SetAsidePlanSlot(ctx, d, listType, f.Encode())
	if err != nil {
		return err
	}
	if done {
		p.log.Error().Str("slot", d.Member).Str("error", why).Msg("plan schedule entry set aside, recorded in failed")
	}
	return nil
}

// fire fires plan id for slot ts, reading the plan again while it changes
// under the step. A plan:<id> of another type is parked with a failed
// entry naming the key.
func (p *Planner) fire(ctx context.Context, ts int64, id string, raw []byte) (rdb.FireResult, error) {
	c := p.cfg.Client
	for range maxChanged {
		now := p.cfg.Now()
		f, leftover, problem := p.prepare(ctx, id, raw, ts, now)
		var res rdb.FireResult
		var err error
		switch {
		case problem != nil:
			res, err = c.ParkPlan(ctx, id, raw, ts, p.failure(id, raw, problem, now))
		case leftover:
			res, err = c.ParkPlan(ctx, id, raw, ts, nil)
		default:
			res, err = c.FirePlan(ctx, f)
		}
		if kt := (*rdb.KeyTypeError)(nil); errors.As(err, &kt) && kt.Key == c.Keys().Plan(id) {
			problem = kt
			res, err = c.ParkWrongTypePlan(ctx, id, ts, kt.Type, protocol.Failure{FailedAt: now, Exception: protocol.ExcWrongType,
				Error:     fmt.Sprintf("plan %q cannot be fired: %s; it was taken off the schedule (the key is kept: fix or remove it)", id, kt),
				Backtrace: []string{}, Worker: p.cfg.WorkerID, ProcessedBy: p.cfg.Hostname}.Encode())
		}
		if err != nil || res != rdb.FireChanged {
			p.logResult(id, ts, f, res, problem)
			return res, err
		}
		if raw, err = c.Plan(ctx, id); err != nil {
			return "", err
		}
	}
	return rdb.FireChanged, nil
}

// prepare computes a fire of plan id (JSON raw, nil when gone) for slot
// ts: the job, and the next slot by the plan's misfire policy. leftover
// is an entry of a plan already moved past ts (its id was listed twice);
// a plan that cannot be fired returns the problem.
func (p *Planner) prepare(ctx context.Context, id string, raw []byte, ts int64, now time.Time) (f rdb.Fire, leftover bool, problem error) {
	f = rdb.Fire{ID: id, Read: raw, TS: ts}
	if raw == nil {
		return f, false, nil // gone: the step drops the id from the slot
	}
	rec, err := protocol.DecodePlan(raw)
	if err != nil {
		return f, false, err
	}
	if rec.NextRun > ts {
		// resque-go writes the slot a plan is filed in, and the PHP
		// scheduler the slot it fired last: never a later one
		return f, true, nil
	}
	x, err := Exclusion(ctx, p.cfg.Client, rec.Calendar)
	if err != nil {
		if rdb.IsTransient(err) || ctx.Err() != nil {
			return f, false, err
		}
		return f, false, fmt.Errorf("calendar %q: %w", rec.Calendar, err)
	}
	f, err = p.fireOf(f, rec, x, now)
	return f, false, err
}

// fireOf fills f, a fire of plan rec, by the plan's recurrence, calendar
// (x, nil: none) and misfire policy. A slot the calendar excludes (it was
// filed before the calendar changed) is not fired: Skip goes on to the
// next slot the calendar allows, Coalesce and CatchUp move it to the first
// instant the calendar allows (fired at once when that has passed).
func (p *Planner) fireOf(f rdb.Fire, rec protocol.PlanRecord, x *plan.Exclusion, now time.Time) (rdb.Fire, error) {
	id, raw, ts := f.ID, f.Read, f.TS
	slot := time.Unix(ts, 0)
	pl := fromRecord(id, rec)
	loc, err := p.location(pl.Timezone)
	if err != nil {
		return f, err
	}
	recur, err := pl.Fireable(slot, loc)
	if err != nil {
		return f, err
	}
	from := slot
	if now.After(from) && pl.Misfire != plan.CatchUp {
		from = now
	}
	if next, ok := plan.Exclude(recur, x, pl.Misfire).Next(from); ok {
		f.Next = next.Unix()
	} else if _, ok := recur.Next(from); ok {
		// not kept without a slot, unnoticed: parked, recorded in failed
		return f, fmt.Errorf("calendar %q excludes every slot of the plan from %s on", pl.Calendar, from.UTC().Format(time.RFC3339))
	}
	excluded := x.Excluded(slot)
	if excluded && pl.Misfire != plan.Skip {
		if at, ok := x.Allowed(slot); ok && at.After(now) {
			f.Next = at.Unix() // moved: filed at the first allowed instant
		} else {
			excluded = false // the allowed instant has come: fire now
		}
	}
	if f.Write, err = protocol.PlanWithNextRun(raw, f.Next); err != nil {
		return f, err
	}
	if excluded || pl.Misfire == plan.Skip && now.Sub(slot) > p.cfg.MisfireGrace {
		return f, nil // no payload: the slot is skipped (or moved)
	}
	f.Queue = rec.Queue
	if f.Payload, err = protocol.PlanPayload(raw, protocol.NewJobID(), now); err != nil {
		return f, err
	}
	u, ok, err := protocol.ParseUnique(f.Payload)
	if err != nil {
		return f, err
	}
	if ok {
		f.UID = u.UID
		if u.Deferrable {
			if f.Deferred, err = protocol.DelayedItem(f.Payload, f.Queue); err != nil {
				return f, err
			}
		}
	}
	return f, nil
}

// location loads a time zone once per planner.
func (p *Planner) location(tz string) (*time.Location, error) {
	if loc, ok := p.zones.Load(tz); ok {
		return loc.(*time.Location), nil
	}
	loc, err := plan.LoadLocation(tz)
	if err != nil {
		return nil, err
	}
	p.zones.Store(tz, loc)
	return loc, nil
}

func (p *Planner) failure(id string, raw []byte, problem error, now time.Time) []byte {
	rec, _ := protocol.DecodePlan(raw)
	return protocol.Failure{FailedAt: now, Payload: raw, Exception: protocol.ExcBadPayload,
		Error:     fmt.Sprintf("plan %q cannot be fired: %v; it was taken off the schedule (plan:%s is kept: fix or remove it)", id, problem, id),
		Backtrace: []string{}, Worker: p.cfg.WorkerID, Queue: rec.Queue, ProcessedBy: p.cfg.Hostname}.Encode()
}

func (p *Planner) logResult(id string, ts int64, f rdb.Fire, res rdb.FireResult, problem error) {
	switch res {
	case rdb.FireParked:
		p.log.Error().Err(problem).Str("plan_id", id).Int64("slot", ts).Msg("plan cannot be fired: taken off the schedule, recorded in failed")
	case rdb.FireGone:
		p.log.Debug().Str("plan_id", id).Int64("slot", ts).Msg("plan removed: slot entry dropped")
	case rdb.FireDropped:
		p.log.Warn().Str("plan_id", id).Int64("slot", ts).Msg("plan listed twice: the entry of a slot it has passed dropped")
	case rdb.FirePaused:
		p.log.Debug().Str("plan_id", id).Int64("slot", ts).Msg("plan paused: slot entry taken out unfired")
	case rdb.FireFired, rdb.FireSkipped, rdb.FireDuplicate, rdb.FireDeferred:
		e := p.log.Debug()
		if res == rdb.FireDuplicate {
			e = p.log.Info().Str("unique_id", f.UID)
		}
		e.Str("plan_id", id).Str("queue", f.Queue).Int64("slot", ts).Int64("next_slot", f.Next).
			Str("result", string(res)).Msg("plan slot done")
	}
}
