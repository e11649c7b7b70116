package rdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Scripts of plans (docs/protocol.md#plans); immutable once built.
var (
	planAddScript    = loadScript("plan_add.lua", 5)
	planFireScript   = loadScriptWith("plan_fire.lua", 9, "plan_take.lua")
	planParkScript   = loadScriptWith("plan_park.lua", 5, "plan_take.lua")
	planPauseScript  = loadScript("plan_pause.lua", 4)
	planResumeScript = loadScript("plan_resume.lua", 4)
	planRemoveScript = loadScript("plan_remove.lua", -1)
	planCleanScript  = loadScript("plan_clean.lua", 2)
)

// ErrPlanExists is returned by AddPlan when plan:<id> exists.
var ErrPlanExists = errors.New("rdb: a plan with this id exists")

// AddPlan writes a new plan and files its id in slot ts, in one step; a
// plan of a paused group (group "": none) is filed paused at ts instead,
// and paused reports it.
func (c *Client) AddPlan(ctx context.Context, id string, plan []byte, ts int64, group string) (paused bool, err error) {
	k := c.keys
	n, err := redis.Int(c.eval(ctx, planAddScript, k.Plan(id), k.PlanSchedule(), k.PlanSlot(ts),
		k.PausedPlanGroups(), k.PausedPlans(), plan, ts, id, group))
	if err != nil {
		return false, fmt.Errorf("rdb: add plan %q: %w", id, err)
	}
	if n == 0 {
		return false, fmt.Errorf("rdb: add plan %q: %w", id, ErrPlanExists)
	}
	return n == 2, nil
}

// Plan returns the JSON of plan:<id>, or nil when there is none.
func (c *Client) Plan(ctx context.Context, id string) ([]byte, error) {
	v, err := redis.Bytes(c.do(ctx, "GET", c.keys.Plan(id)))
	if err == redis.ErrNil {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rdb: plan %q: %w", id, err)
	}
	return v, nil
}

// PlanIDs lists the ids of every plan:<id> key (SCAN).
func (c *Client) PlanIDs(ctx context.Context) ([]string, error) {
	keys, err := c.ScanKeys(ctx, c.keys.PlanPattern())
	if err != nil {
		return nil, fmt.Errorf("rdb: plan ids: %w", err)
	}
	ids := make([]string, 0, len(keys))
	for _, key := range keys {
		if id, ok := c.keys.ParsePlan(key); ok {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// Plans returns the JSON of each plan in ids (nil where it is gone), in
// one round trip.
func (c *Client) Plans(ctx context.Context, ids []string) ([][]byte, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = c.keys.Plan(id)
	}
	v, err := redis.ByteSlices(c.do(ctx, "MGET", args...))
	if err != nil {
		return nil, fmt.Errorf("rdb: plans: %w", err)
	}
	return v, nil
}

// PlanSlots returns the slot times of the schedule from min to max (Unix
// seconds, inclusive), oldest first, at most limit of them (0: all). A
// member that is not a time names no slot and is left out.
func (c *Client) PlanSlots(ctx context.Context, min, max int64, limit int) ([]int64, error) {
	v, err := c.scheduleMembers(ctx, c.keys.PlanSchedule(), strconv.FormatInt(min, 10), strconv.FormatInt(max, 10), limit)
	if err != nil {
		return nil, fmt.Errorf("rdb: plan slots: %w", err)
	}
	out := make([]int64, 0, len(v))
	for _, m := range v {
		if !m.Bad {
			out = append(out, m.TS)
		}
	}
	return out, nil
}

// DuePlanSlots returns up to n members of plan_schedule due at or before
// now, oldest first; a Bad one is set aside with SetAsidePlanSlot.
func (c *Client) DuePlanSlots(ctx context.Context, now int64, n int) ([]ScheduleMember, error) {
	v, err := c.scheduleMembers(ctx, c.keys.PlanSchedule(), "-inf", strconv.FormatInt(now, 10), n)
	if err != nil {
		return nil, fmt.Errorf("rdb: due plan slots: %w", err)
	}
	return v, nil
}

// SetAsidePlanSlot takes member off plan_schedule and records entry in
// failed, in one step: a member that is not a time, or, with listType, a
// slot plan_schedule:<ts> that still holds a listType (another type than
// a list). The slot key is left as it is. It reports false, with nothing
// done, when the member is gone or the slot changed since.
func (c *Client) SetAsidePlanSlot(ctx context.Context, m ScheduleMember, listType string, entry []byte) (bool, error) {
	list := ""
	if listType != "" {
		list = c.keys.PlanSlot(m.TS)
	}
	return c.setAside(ctx, c.keys.PlanSchedule(), m.Member, list, listType, entry)
}

// PlanSlotIDs returns up to n plan ids of slot ts (0: all), in order; a
// *KeyTypeError when the slot holds another type.
func (c *Client) PlanSlotIDs(ctx context.Context, ts int64, n int) ([]string, error) {
	key := c.keys.PlanSlot(ts)
	v, err := redis.Strings(c.do(ctx, "LRANGE", key, 0, n-1))
	if err != nil {
		return nil, fmt.Errorf("rdb: plan slot %d: %w", ts, c.keyTypeError(ctx, err, key, "list"))
	}
	return v, nil
}

// CleanPlanSlot drops slot ts from the schedule when its list is empty.
func (c *Client) CleanPlanSlot(ctx context.Context, ts int64) error {
	k := c.keys
	if _, err := c.eval(ctx, planCleanScript, k.PlanSchedule(), k.PlanSlot(ts), ts); err != nil {
		return fmt.Errorf("rdb: clean plan slot %d: %w", ts, err)
	}
	return nil
}

// FireResult says what FirePlan did.
type FireResult string

// FirePlan results, as plan_fire.lua (and plan_park.lua) name them.
const (
	FireFired     FireResult = "fired"
	FireSkipped   FireResult = "skipped"
	FireDuplicate FireResult = "duplicate"
	FireDeferred  FireResult = "deferred"
	FireChanged   FireResult = "changed"
	FireTaken     FireResult = "taken"
	FireGone      FireResult = "gone"
	FireParked    FireResult = "parked"
	FireDropped   FireResult = "dropped"
	// FirePaused: the plan is paused; its id left the slot unfired.
	FirePaused FireResult = "paused"
	// FireWrongType is never returned: FirePlan and ParkPlan return a
	// *KeyTypeError naming plan:<id> instead (park it with
	// ParkWrongTypePlan).
	FireWrongType FireResult = "wrongtype"
)

// planTypeError turns the "wrongtype" result about plan:<id> into a
// *KeyTypeError.
func (c *Client) planTypeError(ctx context.Context, id string, res FireResult) error {
	if res != FireWrongType {
		return nil
	}
	key := c.keys.Plan(id)
	t, err := redis.String(c.do(ctx, "TYPE", key))
	if err != nil {
		return err
	}
	return &KeyTypeError{Key: key, Type: t, Want: "string"}
}

// Fire is one plan firing for one slot.
type Fire struct {
	ID string
	// Read is the plan JSON the caller computed from (nil: it read none).
	Read []byte
	// Write is the plan JSON to store (nextRun = Next).
	Write []byte
	TS    int64
	// Next is the plan's next slot; 0 leaves it without one.
	Next int64
	// Payload is the job to push; nil skips the slot.
	Payload []byte
	Queue   string
	// UID is the job's unique id ("" when not unique); Deferred the
	// delayed-item form of the job to park when the uid's job runs (nil
	// when it is not deferrable).
	UID      string
	Deferred []byte
}

// FirePlan fires a plan for slot f.TS in one step: the id leaves the slot
// (compare-and-remove), the job is pushed (through the unique check when
// it has a uid), the plan is written back and filed in its next slot.
func (c *Client) FirePlan(ctx context.Context, f Fire) (FireResult, error) {
	k := c.keys
	next, nextKey := "", k.PlanSlot(f.TS)
	if f.Next > 0 {
		if f.Next <= f.TS {
			return "", fmt.Errorf("rdb: fire plan %q: next slot %d is not after %d", f.ID, f.Next, f.TS)
		}
		next, nextKey = strconv.FormatInt(f.Next, 10), k.PlanSlot(f.Next)
	}
	uidState, uidDeferred := k.Plan(f.ID), k.Plan(f.ID)
	if f.UID != "" {
		uidState, uidDeferred = k.UniqueState(f.UID), k.UniqueDeferred(f.UID)
	}
	queueKey := k.Plan(f.ID)
	if f.Queue != "" {
		queueKey = k.Queue(f.Queue)
	}
	v, err := redis.String(c.eval(ctx, planFireScript,
		k.Plan(f.ID), k.PlanSchedule(), k.PlanSlot(f.TS), nextKey, queueKey, k.Queues(), uidState, uidDeferred, k.PausedPlans(),
		f.ID, f.Read, f.Write, f.TS, next, f.Payload, f.Queue, f.UID, f.Deferred, protocol.UniqueQueued))
	if err == nil {
		err = c.planTypeError(ctx, f.ID, FireResult(v))
	}
	if err != nil {
		return "", fmt.Errorf("rdb: fire plan %q: %w", f.ID, err)
	}
	return FireResult(v), nil
}

// ParkPlan takes a plan out of slot ts without firing it and records
// failure in failed (nil: it records nothing, for a leftover entry of a
// plan that has moved past ts); plan:<id> stays. read is the plan JSON
// the caller saw.
func (c *Client) ParkPlan(ctx context.Context, id string, read []byte, ts int64, failure []byte) (FireResult, error) {
	k := c.keys
	v, err := redis.String(c.eval(ctx, planParkScript, k.Plan(id), k.PlanSchedule(), k.PlanSlot(ts), k.Failed(), k.PausedPlans(),
		id, read, ts, failure, ""))
	if err == nil {
		err = c.planTypeError(ctx, id, FireResult(v))
	}
	if err != nil {
		return "", fmt.Errorf("rdb: park plan %q: %w", id, err)
	}
	return FireResult(v), nil
}

// ParkWrongTypePlan takes id out of slot ts and records failure in failed,
// in one step, while plan:<id> holds planType, another type than a string
// (a key written by hand, left as it is). It returns FireParked, or
// FireChanged (the key's type changed: read it again), FireTaken or
// FireGone as FirePlan does.
func (c *Client) ParkWrongTypePlan(ctx context.Context, id string, ts int64, planType string, failure []byte) (FireResult, error) {
	k := c.keys
	v, err := redis.String(c.eval(ctx, planParkScript, k.Plan(id), k.PlanSchedule(), k.PlanSlot(ts), k.Failed(), k.PausedPlans(),
		id, "", ts, failure, planType))
	if err != nil {
		return "", fmt.Errorf("rdb: park plan %q: %w", id, err)
	}
	return FireResult(v), nil
}

// RemovePlan deletes plan:<id> and takes id out of the slots given and out
// of the paused plans, in one step. It reports whether the plan existed
// and how many slot (or paused) entries it dropped.
func (c *Client) RemovePlan(ctx context.Context, id string, slots []int64) (existed bool, dropped int, err error) {
	k := c.keys
	keys := []any{k.Plan(id), k.PlanSchedule(), k.PausedPlans()}
	args := []any{id}
	for _, ts := range slots {
		keys = append(keys, k.PlanSlot(ts))
		args = append(args, ts)
	}
	v, err := redis.Ints(c.eval(ctx, planRemoveScript, append(append([]any{len(keys)}, keys...), args...)...))
	if err != nil {
		return false, 0, fmt.Errorf("rdb: remove plan %q: %w", id, err)
	}
	if len(v) != 2 {
		return false, 0, fmt.Errorf("rdb: remove plan %q: unexpected reply %v", id, v)
	}
	return v[0] == 1, v[1], nil
}

// PauseResult says what PausePlan or ResumePlan did.
type PauseResult string

// PausePlan and ResumePlan results, as plan_pause.lua and plan_resume.lua
// name them.
const (
	PlanPaused        PauseResult = "paused"
	PlanAlreadyPaused PauseResult = "already"
	PlanResumed       PauseResult = "resumed"
	PlanNotPaused     PauseResult = "running"
	PlanPauseGone     PauseResult = "gone"
	PlanPauseChanged  PauseResult = "changed"
)

// PausePlan takes plan id out of slot ts (its nextRun) and records it
// paused at ts, in one step, while plan:<id> is still read (the JSON the
// caller read).
func (c *Client) PausePlan(ctx context.Context, id string, read []byte, ts int64) (PauseResult, error) {
	k := c.keys
	v, err := redis.String(c.eval(ctx, planPauseScript, k.Plan(id), k.PlanSchedule(), k.PlanSlot(ts), k.PausedPlans(), id, read, ts))
	if err != nil {
		return "", fmt.Errorf("rdb: pause plan %q: %w", id, err)
	}
	return PauseResult(v), nil
}

// ResumePlan files paused plan id again in slot ts, the slot it is paused
// at (PausedPlanSlot), in one step.
func (c *Client) ResumePlan(ctx context.Context, id string, ts int64) (PauseResult, error) {
	k := c.keys
	v, err := redis.String(c.eval(ctx, planResumeScript, k.Plan(id), k.PlanSchedule(), k.PlanSlot(ts), k.PausedPlans(), id, ts))
	if err != nil {
		return "", fmt.Errorf("rdb: resume plan %q: %w", id, err)
	}
	return PauseResult(v), nil
}

// PausedPlanSlot returns the slot plan id is paused at, and false when it
// is not paused.
func (c *Client) PausedPlanSlot(ctx context.Context, id string) (int64, bool, error) {
	v, err := redis.Int64(c.do(ctx, "ZSCORE", c.keys.PausedPlans(), id))
	if err == redis.ErrNil {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("rdb: paused plan %q: %w", id, err)
	}
	return v, true, nil
}

// PausedPlans returns every paused plan id with the slot it is paused at.
func (c *Client) PausedPlans(ctx context.Context) (map[string]int64, error) {
	v, err := redis.Int64Map(c.do(ctx, "ZRANGE", c.keys.PausedPlans(), 0, -1, "WITHSCORES"))
	if err != nil {
		return nil, fmt.Errorf("rdb: paused plans: %w", err)
	}
	return v, nil
}

// SetPlanGroupPaused marks group paused (a plan added to it starts paused)
// or not.
func (c *Client) SetPlanGroupPaused(ctx context.Context, group string, paused bool) error {
	cmd := "SREM"
	if paused {
		cmd = "SADD"
	}
	if _, err := c.do(ctx, cmd, c.keys.PausedPlanGroups(), group); err != nil {
		return fmt.Errorf("rdb: pause plan group %q: %w", group, err)
	}
	return nil
}

// PausedPlanGroups lists the paused plan groups.
func (c *Client) PausedPlanGroups(ctx context.Context) ([]string, error) {
	v, err := redis.Strings(c.do(ctx, "SMEMBERS", c.keys.PausedPlanGroups()))
	if err != nil {
		return nil, fmt.Errorf("rdb: paused plan groups: %w", err)
	}
	return v, nil
}

// SetPlanCalendar stores a plan calendar's JSON under name; with replace
// false it reports false, writing nothing, when name is taken.
func (c *Client) SetPlanCalendar(ctx context.Context, name string, raw []byte, replace bool) (bool, error) {
	cmd := "HSETNX"
	if replace {
		cmd = "HSET"
	}
	n, err := redis.Int(c.do(ctx, cmd, c.keys.PlanCalendars(), name, raw))
	if err != nil {
		return false, fmt.Errorf("rdb: set plan calendar %q: %w", name, err)
	}
	return replace || n == 1, nil
}

// PlanCalendar returns the JSON of calendar name, nil when there is none.
func (c *Client) PlanCalendar(ctx context.Context, name string) ([]byte, error) {
	v, err := redis.Bytes(c.do(ctx, "HGET", c.keys.PlanCalendars(), name))
	if err == redis.ErrNil {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rdb: plan calendar %q: %w", name, err)
	}
	return v, nil
}

// PlanCalendars returns every calendar's JSON by name.
func (c *Client) PlanCalendars(ctx context.Context) (map[string][]byte, error) {
	v, err := redis.Values(c.do(ctx, "HGETALL", c.keys.PlanCalendars()))
	if err != nil {
		return nil, fmt.Errorf("rdb: plan calendars: %w", err)
	}
	out := make(map[string][]byte, len(v)/2)
	for i := 0; i+1 < len(v); i += 2 {
		name, _ := redis.String(v[i], nil)
		raw, _ := redis.Bytes(v[i+1], nil)
		out[name] = raw
	}
	return out, nil
}

// RemovePlanCalendar deletes calendar name; false when there was none.
func (c *Client) RemovePlanCalendar(ctx context.Context, name string) (bool, error) {
	n, err := redis.Int(c.do(ctx, "HDEL", c.keys.PlanCalendars(), name))
	if err != nil {
		return false, fmt.Errorf("rdb: remove plan calendar %q: %w", name, err)
	}
	return n == 1, nil
}

// PlanIDsStep is PlanIDs a bounded part at a time (ScanKeysStep).
func (c *Client) PlanIDsStep(ctx context.Context, cursor string, calls, count int) ([]string, string, error) {
	keys, next, err := c.ScanKeysStep(ctx, c.keys.PlanPattern(), cursor, calls, count)
	if err != nil {
		return nil, "", fmt.Errorf("rdb: plan ids: %w", err)
	}
	ids := make([]string, 0, len(keys))
	for _, key := range keys {
		if id, ok := c.keys.ParsePlan(key); ok {
			ids = append(ids, id)
		}
	}
	return ids, next, nil
}

// PlanSlotLists reads the plan ids filed in each slot of tss, pipelined
// (LRANGE 0 -1: a slot holds the plans due then). A slot key of another
// type reads as empty: the planner sets it aside when it is due.
func (c *Client) PlanSlotLists(ctx context.Context, tss []int64) ([][]string, error) {
	out := make([][]string, len(tss))
	steps := make([]pipeStep, len(tss))
	for i, ts := range tss {
		steps[i] = pipeStep{[]any{"LRANGE", c.keys.PlanSlot(ts), 0, -1}, func(v any) (err error) {
			out[i], err = redis.Strings(v, nil)
			return err
		}}
	}
	if _, err := c.pipelineKeep(ctx, steps); err != nil {
		return nil, fmt.Errorf("rdb: plan slots: %w", err)
	}
	return out, nil
}

// PausedPlansPage returns up to limit paused plans (id -> the slot it is
// filed in again when resumed) in order of that slot, and their number.
func (c *Client) PausedPlansPage(ctx context.Context, limit int) (map[string]int64, int64, error) {
	var ids map[string]int64
	var n int64
	key := c.keys.PausedPlans()
	steps := []pipeStep{
		{[]any{"ZRANGE", key, 0, max(limit, 1) - 1, "WITHSCORES"}, func(v any) (err error) { ids, err = redis.Int64Map(v, nil); return }},
		{[]any{"ZCARD", key}, intInto(&n)},
	}
	if err := c.pipeline(ctx, steps); err != nil {
		return nil, 0, fmt.Errorf("rdb: paused plans: %w", err)
	}
	return ids, n, nil
}
