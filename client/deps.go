package client

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// Dependencies and groups (docs/dependencies.md).

// ErrGroupFired: the group has completed and its callbacks fired; it
// takes no more jobs or callbacks. Nothing was written.
var ErrGroupFired = errors.New("client: the group has completed")

// ErrHeldExists: a job with that id is already held for its parents.
var ErrHeldExists = errors.New("client: a job with that id is already held")

// After holds the job until every job named by ids (their payloads' "id")
// has succeeded; what a parent that fails does to it is
// OnParentFailure's. A parent that already ended acts at once. The
// payload gains the field "after" only: other workers see an ordinary job.
func After(ids ...string) Option {
	return optionFunc(func(o *enqueueOptions) { o.deps.After = append(o.deps.After, ids...) })
}

// AfterGroup holds the job until group g has completed (see
// OnGroupComplete), as After does for a job: a group with a failed job is
// a failed parent.
func AfterGroup(g string) Option {
	return optionFunc(func(o *enqueueOptions) { o.deps.AfterGroups = append(o.deps.AfterGroups, g) })
}

// OnParentFailure says what a failed, discarded or dropped parent does to
// a job held with After or AfterGroup: "fail" (the default: the job goes
// to the failed list as ResqueGo::ParentFailed, naming the parent), "run"
// (it is released as if the parent had succeeded) or "drop" (it is
// discarded: counted in <ns>:resque-go:deps:dropped, shown by JobDeps).
func OnParentFailure(policy string) Option {
	return optionFunc(func(o *enqueueOptions) { o.deps.OnParentFailure = policy })
}

// Group makes the job one of group g: counted when it ends (once, at its
// last attempt), so the group's callbacks fire once every job has ended
// (OnGroupComplete, OnGroupSuccess).
func Group(g string) Option {
	return optionFunc(func(o *enqueueOptions) { o.deps.Group = g })
}

func (o enqueueOptions) hasDeps() bool {
	return len(o.deps.After) > 0 || len(o.deps.AfterGroups) > 0 || o.deps.Group != ""
}

// checkDeps refuses dependency options that cannot work together.
func checkDeps(o enqueueOptions) error {
	if !o.hasDeps() {
		if o.deps.OnParentFailure != "" {
			return invalidf("OnParentFailure needs After or AfterGroup")
		}
		return nil
	}
	if o.plain {
		return invalidf("Plain writes only class and args: it takes no After, AfterGroup or Group")
	}
	if o.unique.UID != "" || !o.at.IsZero() || o.hasIn {
		return invalidf("After, AfterGroup and Group do not go with Unique, At or In")
	}
	if _, err := protocol.ParseOnParentFailure(o.deps.OnParentFailure); err != nil {
		return invalidf("%v", err)
	}
	for _, id := range o.deps.After {
		if err := protocol.ValidateDepName("parent id", id); err != nil {
			return invalidf("%v", err)
		}
	}
	for _, g := range append(append([]string(nil), o.deps.AfterGroups...), o.deps.Group) {
		if g == "" && o.deps.Group == "" {
			continue
		}
		if err := protocol.ValidateDepName("group", g); err != nil {
			return invalidf("%v", err)
		}
	}
	return nil
}

func (c *Client) enqueueDeps(ctx context.Context, info JobInfo, o enqueueOptions) (JobInfo, error) {
	policy, _ := protocol.ParseOnParentFailure(o.deps.OnParentFailure)
	job := rdb.DepJob{ID: info.ID, Queue: info.Queue, Payload: info.Payload, Policy: policy, Group: o.deps.Group,
		Event: o.events, Class: info.Class, Tags: o.tags}
	for _, id := range o.deps.After {
		job.Parents = append(job.Parents, rdb.DepParent{Name: id})
	}
	for _, g := range o.deps.AfterGroups {
		job.Parents = append(job.Parents, rdb.DepParent{Group: true, Name: g})
	}
	if len(job.Parents) > 0 {
		if err := c.EnableDependencies(ctx); err != nil {
			return JobInfo{}, err
		}
	}
	state, waiting, err := c.rdb.EnqueueDeps(ctx, job, c.now())
	if err != nil {
		return JobInfo{}, wrap("enqueue", depsErr(err))
	}
	info.DepState, info.Waiting = state, waiting
	return info, nil
}

// EnableDependencies switches dependencies on for the namespace, if they
// are not yet, and waits until workers have learnt it (about two
// seconds). From then on workers record the outcome of every job with an
// id when it ends, for a week, so a child enqueued later with After
// finds it. A job that ended before is unknown: its children wait. The
// first enqueue with After or AfterGroup calls it; call it before
// enqueuing the parents of a first dependency so that none of them ends
// unrecorded.
func (c *Client) EnableDependencies(ctx context.Context) error {
	return wrap("enable dependencies", c.rdb.EnableDeps(ctx, c.now()))
}

func depsErr(err error) error {
	switch {
	case errors.Is(err, rdb.ErrGroupFired):
		return ErrGroupFired
	case errors.Is(err, rdb.ErrHeldExists):
		return ErrHeldExists
	}
	return err
}

// GroupCallbackJob is a job a group enqueues once when it ends.
type GroupCallbackJob struct {
	// When: "complete" (every job ended) or "success" (every job succeeded).
	When, Queue, Class string
	// Args are the job's args, an array; the group's counts are appended
	// as one more argument, {"group","total","succeeded","failed"}.
	Args json.RawMessage
	// ID is the callback job's id.
	ID string
}

// GroupStatus is a group's counters.
type GroupStatus struct {
	Name string `json:"name"`
	// Exists: the group has had a job or a callback.
	Exists    bool  `json:"exists"`
	Total     int64 `json:"total"`
	Pending   int64 `json:"pending"`
	Succeeded int64 `json:"succeeded"`
	Failed    int64 `json:"failed"`
	// Sealed: a callback was registered (or CloseGroup called): the group
	// fires once nothing of it is pending.
	Sealed bool `json:"sealed"`
	Fired  bool `json:"fired"`
	// Outcome, once fired: succeeded (no job failed) or failed.
	Outcome   string             `json:"outcome,omitempty"`
	Callbacks []GroupCallbackJob `json:"callbacks,omitempty"`
}

// OnGroupComplete registers a job for queue and class, enqueued once when
// every job of group g has ended, with the group's counts appended to
// args; it seals the group (enqueue its jobs first). A group whose jobs
// have all ended fires at once. It reports whether the group fired now.
func (c *Client) OnGroupComplete(ctx context.Context, g, queue, class string, args ...any) (bool, error) {
	return c.sealGroup(ctx, g, "complete", queue, class, args)
}

// OnGroupSuccess is OnGroupComplete for a group all of whose jobs
// succeeded: a group with a failed job never enqueues it.
func (c *Client) OnGroupSuccess(ctx context.Context, g, queue, class string, args ...any) (bool, error) {
	return c.sealGroup(ctx, g, "success", queue, class, args)
}

// CloseGroup seals group g without a callback: jobs waiting for it
// (AfterGroup) are released once nothing of it is pending.
func (c *Client) CloseGroup(ctx context.Context, g string) (bool, error) {
	if err := protocol.ValidateDepName("group", g); err != nil {
		return false, invalidf("%v", err)
	}
	fired, err := c.rdb.SealGroup(ctx, g, rdb.GroupCallback{}, c.now())
	return fired, wrap("close group", depsErr(err))
}

func (c *Client) sealGroup(ctx context.Context, g, when, queue, class string, args []any) (bool, error) {
	if err := protocol.ValidateDepName("group", g); err != nil {
		return false, invalidf("%v", err)
	}
	raw, err := encodeArgs(args)
	if err != nil {
		return false, err
	}
	if err := checkJob(queue, class, raw, enqueueOptions{}); err != nil {
		return false, err
	}
	raw, err = normalizeArray(raw)
	if err != nil {
		return false, err
	}
	cb := rdb.GroupCallback{When: when, Queue: queue, Class: class, Args: raw, ID: protocol.NewJobID()}
	fired, err := c.rdb.SealGroup(ctx, g, cb, c.now())
	return fired, wrap("group callback", depsErr(err))
}

// normalizeArray compacts args, which must be a JSON array.
func normalizeArray(raw []byte) ([]byte, error) {
	if len(raw) == 0 {
		return []byte("[]"), nil
	}
	var v []json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, invalidf("a group callback's args must be a JSON array")
	}
	p, err := protocol.NewPayload("x", raw, protocol.EnqueueOptions{Plain: true})
	if err != nil {
		return nil, invalidf("%v", err)
	}
	d, err := protocol.DecodePayload(p)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	return d.Args, nil
}

// GroupInfo reads group g's counters.
func (c *Client) GroupInfo(ctx context.Context, g string) (GroupStatus, error) {
	if err := protocol.ValidateDepName("group", g); err != nil {
		return GroupStatus{}, invalidf("%v", err)
	}
	s, err := c.rdb.Group(ctx, g)
	if err != nil {
		return GroupStatus{}, wrap("group", err)
	}
	out := GroupStatus{Name: g, Exists: s.Exists, Total: s.Total, Pending: s.Pending, Succeeded: s.Succeeded,
		Failed: s.Failed, Sealed: s.Sealed, Fired: s.Fired, Outcome: s.Outcome}
	for _, cb := range s.Callbacks {
		out.Callbacks = append(out.Callbacks, GroupCallbackJob{When: cb.When, Queue: cb.Queue, Class: cb.Class,
			Args: json.RawMessage(cb.Args), ID: cb.ID})
	}
	return out, nil
}

// JobParent is a held job's parent: a job id or group:<g>, and its state
// (succeeded, failed, discarded, dropped, or pending while not ended or
// not known).
type JobParent struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// JobDeps is what is known of a job's dependencies.
type JobDeps struct {
	ID string `json:"id"`
	// Held: the job was enqueued with parents.
	Held bool `json:"held"`
	// State: held, queued, failed or dropped, or the job's recorded end
	// (succeeded, failed, discarded); "" when nothing is known.
	State  string `json:"state"`
	Queue  string `json:"queue,omitempty"`
	Policy string `json:"on_parent_failure,omitempty"`
	// Waiting is how many parents it still waits for.
	Waiting      int64           `json:"waiting"`
	Group        string          `json:"group,omitempty"`
	ParentFailed string          `json:"parent_failed,omitempty"`
	Parents      []JobParent     `json:"parents"`
	Payload      json.RawMessage `json:"payload,omitempty"`
}

// JobDependencies reads what is known of job id's dependencies: a held
// job's state, its parents and theirs; for any job, its end while
// dependencies are in use.
func (c *Client) JobDependencies(ctx context.Context, id string) (JobDeps, error) {
	if err := protocol.ValidateDepName("job id", id); err != nil {
		return JobDeps{}, invalidf("%v", err)
	}
	s, err := c.rdb.DepJob(ctx, id)
	if err != nil {
		return JobDeps{}, wrap("job", err)
	}
	out := JobDeps{ID: id, Held: s.Held, State: s.State, Queue: s.Queue, Policy: s.Policy, Waiting: s.Waiting,
		Group: s.Group, ParentFailed: s.ParentFailed, Parents: []JobParent{}}
	if json.Valid(s.Payload) {
		out.Payload = s.Payload
	}
	for _, p := range s.Parents {
		out.Parents = append(out.Parents, JobParent{Name: p.Name, State: p.State})
	}
	return out, nil
}
