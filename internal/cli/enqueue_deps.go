package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// enqueueDepsHelp is enqueue's help about dependencies and groups
// (docs/dependencies.md).
const enqueueDepsHelp = "--after holds the job until every job named (by its payload's id) has succeeded;\n" +
	"--after-group until a group has completed. A parent that fails, is discarded or dropped\n" +
	"fails the job (--on-parent-failure fail: a failed entry ResqueGo::ParentFailed naming it),\n" +
	"releases it anyway (run) or drops it (drop). \"held\" on stderr says it waits; `job show ID`\n" +
	"says for what. The first --after in a namespace switches dependencies on and waits two\n" +
	"seconds for the workers to learn it. --group counts the job in group G at its end (once,\n" +
	"at its last attempt); see `group on-complete`."

func enqueueDepsFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringSliceFlag{Name: "after", Usage: "hold the job until the jobs with these `IDS` (comma-separated, or the flag repeated) have succeeded"},
		&ucli.StringSliceFlag{Name: "after-group", Usage: "hold the job until `GROUP` has completed (see group on-complete)"},
		&ucli.StringFlag{Name: "on-parent-failure", Usage: "what a failed parent does to a held job: `fail`, run or drop", Value: "fail"},
		&ucli.StringFlag{Name: "group", Usage: "count the job in `GROUP` (its callbacks fire once every job of it has ended)"},
	}
}

// enqueueDeps reads the dependency flags: the payload's fields and the
// parents.
func enqueueDeps(c *ucli.Context) (protocol.DepFields, []rdb.DepParent, error) {
	var d protocol.DepFields
	var parents []rdb.DepParent
	for _, v := range c.StringSlice("after") {
		for _, id := range strings.Split(v, ",") {
			if err := protocol.ValidateDepName("parent id", id); err != nil {
				return d, nil, usagef("--after: %v", err)
			}
			d.After = append(d.After, id)
			parents = append(parents, rdb.DepParent{Name: id})
		}
	}
	for _, g := range c.StringSlice("after-group") {
		if err := protocol.ValidateDepName("group", g); err != nil {
			return d, nil, usagef("--after-group: %v", err)
		}
		d.AfterGroups = append(d.AfterGroups, g)
		parents = append(parents, rdb.DepParent{Group: true, Name: g})
	}
	policy, err := protocol.ParseOnParentFailure(c.String("on-parent-failure"))
	if err != nil {
		return d, nil, usagef("--on-parent-failure: want fail, run or drop, got %q", c.String("on-parent-failure"))
	}
	if c.IsSet("on-parent-failure") && len(parents) == 0 {
		return d, nil, usagef("--on-parent-failure needs --after or --after-group")
	}
	if len(parents) > 0 {
		d.OnParentFailure = policy
	}
	if g := c.String("group"); c.IsSet("group") {
		if err := protocol.ValidateDepName("group", g); err != nil {
			return d, nil, usagef("--group: %v", err)
		}
		d.Group = g
	}
	return d, parents, nil
}

// enqueueHeld writes a job with parents or a group (rdb.EnqueueDeps) and
// says on stderr when it is not queued; with events, the step writes its
// enqueued event (and its released one when it is pushed at once); with
// tags, its id joins their indexes while it is queued or held.
func enqueueHeld(c *ucli.Context, client *rdb.Client, queue string, payload []byte, d protocol.DepFields, parents []rdb.DepParent, events bool, tags []string) error {
	p, err := protocol.DecodePayload(payload)
	if err != nil {
		return usageError{err}
	}
	if len(parents) > 0 {
		if err := client.EnableDeps(c.Context, time.Now()); err != nil {
			return err
		}
	}
	state, waiting, err := client.EnqueueDeps(c.Context, rdb.DepJob{ID: p.ID, Queue: queue, Payload: payload,
		Policy: d.OnParentFailure, Parents: parents, Group: d.Group, Event: events, Class: p.Class, Tags: tags}, time.Now())
	if errors.Is(err, rdb.ErrGroupFired) {
		return usagef("group %q has completed: it takes no more jobs", d.Group)
	}
	if err != nil {
		return err
	}
	switch state {
	case "held":
		fmt.Fprintf(c.App.ErrWriter, "held: job %s waits for %d parent(s)\n", p.ID, waiting)
	case "failed", "dropped":
		fmt.Fprintf(c.App.ErrWriter, "%s: a parent of job %s did not succeed\n", state, p.ID)
	}
	return nil
}
