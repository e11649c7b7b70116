package rdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Dependencies and groups (docs/dependencies.md). The finish's side is
// scripts/jobpath/effect_deps.lua and effect_group.lua; the enqueue's and
// the callback's are deps_enqueue.lua and group_seal.lua, which share
// effect_deps.lua's release code.

var (
	depsEnqueueScript = loadScriptWith("deps_enqueue.lua", -1, "set_aside_key.lua", "jobpath/effect_deps.lua")
	groupSealScript   = loadScriptWith("group_seal.lua", 2, "set_aside_key.lua", "jobpath/effect_deps.lua")
)

// ErrGroupFired is returned for a job or a callback given to a group that
// has fired: its counts are final.
var ErrGroupFired = errors.New("rdb: the group has completed and fired; it takes no more jobs or callbacks")

// ErrHeldExists is returned for a job with parents whose id is already a
// held job's.
var ErrHeldExists = errors.New("rdb: a job with this id is already held")

// DepParent is one parent of a held job: a job (by id) or a group.
type DepParent struct {
	Group bool
	Name  string
}

// String names p as a held job's parents list it: the id, or group:<g>.
func (p DepParent) String() string {
	if p.Group {
		return protocol.GroupParent(p.Name)
	}
	return p.Name
}

// DepJob is a job enqueued with parents or in a group.
type DepJob struct {
	ID, Queue string
	Payload   []byte
	Policy    string // protocol.OnParentFailure...
	Parents   []DepParent
	Group     string
	// Event writes the job's enqueued event and, when the step pushes it
	// (its parents have all succeeded), its released event, with this
	// stream's retention; Class names it there.
	Event  bool
	Events EventsConfig
	Class  string
	// Tags put the job's id in each tag's index while it is queued or
	// held, TagMaxLen ids an index (0: protocol.DefaultTagMaxLen).
	Tags      []string
	TagMaxLen int
}

// EnqueueDeps writes job in one step (deps_enqueue.lua): pushed to its
// queue when it has no parent pending, else held; a parent that has
// already failed fails or drops it at once, per its policy. It returns
// the job's state (queued, held, failed, dropped) and how many parents it
// waits for.
func (c *Client) EnqueueDeps(ctx context.Context, job DepJob, now time.Time) (state string, waiting int, err error) {
	k := c.keys
	names := make([]string, len(job.Parents))
	for i, p := range job.Parents {
		names[i] = p.String()
	}
	parents, _ := json.Marshal(names)
	group := k.Group("-")
	if job.Group != "" {
		group = k.Group(job.Group)
	}
	keys := []any{k.DepHeld(job.ID), k.DepsOn(), group, k.Queue(job.Queue), k.Queues()}
	args := []any{job.ID, job.Payload, job.Queue, job.Policy, parents, job.Group, k.DepPrefix(),
		protocol.FormatFailedAt(now), protocol.FormatQueueTime(now), protocol.DepOutcomeTTLSeconds, now.Unix(), len(job.Parents)}
	for _, p := range job.Parents {
		if p.Group {
			keys = append(keys, k.Group(p.Name), k.GroupChildren(p.Name))
			args = append(args, "g", p.Name)
		} else {
			keys = append(keys, k.DepOutcome(p.Name), k.DepChildren(p.Name))
			args = append(args, "j", p.Name)
		}
	}
	args = append(args, len(job.Tags))
	if len(job.Tags) > 0 {
		tagMax := job.TagMaxLen
		if tagMax <= 0 {
			tagMax = protocol.DefaultTagMaxLen
		}
		for _, t := range job.Tags {
			keys = append(keys, k.Tag(t))
		}
		args = append(args, tagMax, now.UnixMilli())
	}
	if job.Event {
		ev := job.Events
		ev.On = true
		p := newEventsParts(k, ev)
		keys = append(keys, p.stream)
		args = append(args, p.maxLen, p.maxAge, job.Class, now.UnixMilli())
	}
	v, err := redis.Values(c.eval(ctx, depsEnqueueScript, append(append([]any{len(keys)}, keys...), args...)...))
	if err != nil {
		return "", 0, fmt.Errorf("rdb: enqueue %q: %w", job.ID, depsErr(err))
	}
	var n int64
	if _, err := redis.Scan(v, &state, &n); err != nil {
		return "", 0, fmt.Errorf("rdb: enqueue %q: %w", job.ID, err)
	}
	return state, int(n), nil
}

// depsErr maps the scripts' error replies to sentinel errors.
func depsErr(err error) error {
	var re redis.Error
	if errors.As(err, &re) {
		switch string(re) {
		case "fired":
			return ErrGroupFired
		case "exists":
			return ErrHeldExists
		}
	}
	return err
}

// GroupCallback is a job to enqueue when a group ends: When is
// "complete" (every job ended) or "success" (every job succeeded); "" only
// seals the group.
type GroupCallback struct {
	When, Queue, Class, ID string
	Args                   []byte // a JSON array
}

// SealGroup registers cb for group g and seals it (group_seal.lua): the
// group fires once nothing of it is pending, at once if nothing is. It
// reports whether it fired now.
func (c *Client) SealGroup(ctx context.Context, g string, cb GroupCallback, now time.Time) (bool, error) {
	k := c.keys
	args := cb.Args
	if len(args) == 0 {
		args = []byte("[]")
	}
	n, err := redis.Int(c.eval(ctx, groupSealScript, k.Group(g), k.GroupChildren(g), g, cb.When, cb.Class, cb.Queue,
		args, cb.ID, k.DepPrefix(), protocol.FormatFailedAt(now), protocol.FormatQueueTime(now), protocol.DepOutcomeTTLSeconds))
	if err != nil {
		return false, fmt.Errorf("rdb: group %q: %w", g, depsErr(err))
	}
	return n == 2, nil
}

// GroupState is a group's counters (protocol.Keys.Group).
type GroupState struct {
	Name                              string
	Exists                            bool
	Total, Pending, Succeeded, Failed int64
	Sealed, Fired                     bool
	Outcome                           string // succeeded | failed once fired
	Callbacks                         []GroupCallback
}

// Group reads group g's counters.
func (c *Client) Group(ctx context.Context, g string) (GroupState, error) {
	m, err := redis.StringMap(c.do(ctx, "HGETALL", c.keys.Group(g)))
	if err != nil {
		return GroupState{}, fmt.Errorf("rdb: group %q: %w", g, c.keyTypeError(ctx, err, c.keys.Group(g), "hash"))
	}
	num := func(f string) int64 { n, _ := strconv.ParseInt(m[f], 10, 64); return n }
	s := GroupState{Name: g, Exists: len(m) > 0, Total: num("total"), Pending: num("pending"),
		Succeeded: num("succeeded"), Failed: num("failed"), Sealed: m["sealed"] == "1", Fired: m["fired"] == "1",
		Outcome: m["outcome"]}
	for _, when := range []string{"complete", "success"} {
		if cls, ok := m[when+"_class"]; ok {
			s.Callbacks = append(s.Callbacks, GroupCallback{When: when, Class: cls, Queue: m[when+"_queue"],
				ID: m[when+"_id"], Args: []byte(m[when+"_args"])})
		}
	}
	return s, nil
}

// DepsInUse reports whether dependencies are in use in the namespace
// (protocol.Keys.DepsOn): workers read it on their tick, not per job.
func (c *Client) DepsInUse(ctx context.Context) (bool, error) {
	n, err := redis.Int(c.do(ctx, "EXISTS", c.keys.DepsOn()))
	if err != nil {
		return false, fmt.Errorf("rdb: dependencies in use: %w", err)
	}
	return n == 1, nil
}

// DepParentState is a held job's parent and what is known of it.
type DepParentState struct {
	Name  string // an id, or group:<g>
	State string // succeeded, failed, discarded, dropped, or pending
}

// DepJobState is what is known of a job's dependencies.
type DepJobState struct {
	ID string
	// Held: the job was enqueued with parents (its hash exists).
	Held bool
	// State: held, queued, failed or dropped (the held job's), or the
	// job's recorded outcome once it ended; "" when nothing is known.
	State        string
	Queue        string
	Policy       string
	Waiting      int64
	Group        string
	ParentFailed string
	Parents      []DepParentState
	Payload      []byte
	// Outcome is the job's recorded end (protocol.DepOutcome), "" if none.
	Outcome string
}

// DepJob reads what is known of job id's dependencies.
func (c *Client) DepJob(ctx context.Context, id string) (DepJobState, error) {
	k := c.keys
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return DepJobState{}, fmt.Errorf("rdb: job %q: %w", id, err)
	}
	defer conn.Close()
	m, err := redis.StringMap(redis.DoContext(conn, ctx, "HGETALL", k.DepHeld(id)))
	if err != nil {
		return DepJobState{}, fmt.Errorf("rdb: job %q: %w", id, c.keyTypeError(ctx, err, k.DepHeld(id), "hash"))
	}
	out, err := redis.String(redis.DoContext(conn, ctx, "GET", k.DepOutcome(id)))
	if err != nil && !errors.Is(err, redis.ErrNil) {
		return DepJobState{}, fmt.Errorf("rdb: job %q: %w", id, c.keyTypeError(ctx, err, k.DepOutcome(id), "string"))
	}
	s := DepJobState{ID: id, Held: len(m) > 0, State: m["state"], Queue: m["queue"], Policy: m["policy"],
		Group: m["group"], ParentFailed: m["parent_failed"], Outcome: out}
	if s.Held {
		s.Payload = []byte(m["payload"])
	}
	s.Waiting, _ = strconv.ParseInt(m["waiting"], 10, 64)
	if out != "" && (s.State == "" || s.State == "queued") {
		s.State = out
	}
	var names []string
	_ = json.Unmarshal([]byte(m["parents"]), &names)
	for _, n := range names {
		var st string
		key, want := k.DepOutcome(n), "string"
		if g, ok := strings.CutPrefix(n, "group:"); ok {
			key, want = k.Group(g), "hash"
			st, err = redis.String(redis.DoContext(conn, ctx, "HGET", key, "outcome"))
		} else {
			st, err = redis.String(redis.DoContext(conn, ctx, "GET", key))
		}
		if errors.Is(err, redis.ErrNil) {
			st, err = "pending", nil
		}
		if err != nil {
			// one parent's key written by hand: named, the others shown
			if kt := (*KeyTypeError)(nil); errors.As(c.keyTypeError(ctx, err, key, want), &kt) {
				st, err = "unknown ("+kt.Error()+")", nil
			}
		}
		if err != nil {
			return DepJobState{}, fmt.Errorf("rdb: job %q: %w", id, err)
		}
		s.Parents = append(s.Parents, DepParentState{Name: n, State: st})
	}
	return s, nil
}

// SetDepsOn switches dependencies on (protocol.Keys.DepsOn), if they are
// not yet.
func (c *Client) SetDepsOn(ctx context.Context, now time.Time) error {
	if _, err := c.do(ctx, "SET", c.keys.DepsOn(), now.Unix(), "NX"); err != nil {
		return fmt.Errorf("rdb: dependencies on: %w", err)
	}
	return nil
}

// DepsWorkersTick is how long workers take at most to learn that
// dependencies are in use (they read it once a second), with a margin.
const DepsWorkersTick = 2 * time.Second

// EnableDeps switches dependencies on if they are not yet, then waits
// DepsWorkersTick so that the running workers record every job's end from
// then on. It returns at once when they were on.
func (c *Client) EnableDeps(ctx context.Context, now time.Time) error {
	on, err := c.DepsInUse(ctx)
	if err != nil || on {
		return err
	}
	if err := c.SetDepsOn(ctx, now); err != nil {
		return err
	}
	t := time.NewTimer(DepsWorkersTick)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
