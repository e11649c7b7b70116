package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Dependencies and groups (docs/dependencies.md): a job held until its
// parents end, and groups of jobs counted to fire a callback once. Their
// keys live under <ns>:resque-go:, where no Resque runtime looks; a held
// job's payload is an ordinary Resque payload with extra fields only.

// DepsOn is the string (the Unix second it was set) that says
// dependencies are in use in the namespace: while it exists, workers
// record the outcome of every job with an id (DepOutcome) when it ends.
func (k Keys) DepsOn() string { return k.key("resque-go", "deps", "on") }

// DepOutcome is the outcome of job id once it ended while dependencies
// were in use: succeeded, failed, discarded or dropped; kept DepOutcomeTTL.
func (k Keys) DepOutcome(id string) string { return k.key("resque-go", "deps", "outcome", id) }

// DepChildren is the set of the ids of the held jobs waiting for job id.
func (k Keys) DepChildren(id string) string { return k.key("resque-go", "deps", "children", id) }

// DepHeld is the hash of a job enqueued with parents (field payload,
// queue, state, waiting, policy, parents, group, parent_failed).
func (k Keys) DepHeld(id string) string { return k.key("resque-go", "deps", "held", id) }

// DepDropped counts the held jobs dropped because a parent failed.
func (k Keys) DepDropped() string { return k.key("resque-go", "deps", "dropped") }

// Group is the hash of group g's counters and callbacks (fields total,
// pending, succeeded, failed, sealed, fired, outcome, and per callback
// <when>_class, <when>_queue, <when>_args, <when>_id; when is complete or
// success).
func (k Keys) Group(g string) string { return k.key("resque-go", "group", g) }

// GroupChildren is the set of the ids of the held jobs waiting for group g.
func (k Keys) GroupChildren(g string) string { return k.key("resque-go", "group", g, "children") }

// DepPrefix is the prefix the dependency scripts build the keys of a job
// they learn inside from ("<ns>:").
func (k Keys) DepPrefix() string { return k.Namespace() + ":" }

// Parent outcomes as DepOutcome and a held job's parents list them.
const (
	DepSucceeded = "succeeded"
	DepFailed    = "failed"
	DepDiscarded = "discarded"
	DepDropped   = "dropped"
)

// DepOutcomeTTLSeconds is how long a parent's outcome is kept: a child
// enqueued later than that after its parent ended waits for good.
const DepOutcomeTTLSeconds = 7 * 24 * 3600

// On-parent-failure policies: what a failed, discarded or dropped parent
// does to a held job.
const (
	OnParentFailureFail = "fail"
	OnParentFailureRun  = "run"
	OnParentFailureDrop = "drop"
)

// ParseOnParentFailure checks a policy; "" is the default, fail.
func ParseOnParentFailure(s string) (string, error) {
	switch s {
	case "":
		return OnParentFailureFail, nil
	case OnParentFailureFail, OnParentFailureRun, OnParentFailureDrop:
		return s, nil
	}
	return "", fmt.Errorf("protocol: on-parent-failure %q: want fail, run or drop", s)
}

// GroupParent is how a held job names a group it waits for among its
// parents ("group:<g>"); a job parent is its id.
func GroupParent(g string) string { return "group:" + g }

// ValidateDepName checks a parent id or a group name (kind "group"): not
// empty, at most 200 bytes, no whitespace, no ',' (the CLI's list
// separator); a group name has no ':'.
func ValidateDepName(kind, s string) error {
	if s == "" {
		return fmt.Errorf("protocol: empty %s", kind)
	}
	if len(s) > 200 {
		return fmt.Errorf("protocol: %s %q is over 200 bytes", kind, s[:40]+"...")
	}
	if strings.ContainsAny(s, " \t\r\n,") {
		return fmt.Errorf("protocol: %s %q has a space or a comma", kind, s)
	}
	if kind == "group" && strings.Contains(s, ":") {
		// group:<g>:children would be another group's key
		return fmt.Errorf("protocol: group %q has a colon", s)
	}
	return nil
}

// PayloadGroup is the payload's "group" (a string), or "".
func PayloadGroup(p *Payload) string {
	if p == nil {
		return ""
	}
	g := p.Fields["group"]
	if len(g) == 0 || g[0] != '"' {
		return "" // only resque-go writes the field, as a string
	}
	return optString(g)
}

// DepFields is what NewPayload adds for a job with parents or a group:
// "after" (parent ids), "after_group" (group names), "on_parent_failure"
// and "group". Ruby, PHP and Node workers ignore fields they do not know.
type DepFields struct {
	After           []string
	AfterGroups     []string
	OnParentFailure string
	Group           string
}

// empty reports whether d adds nothing.
func (d DepFields) empty() bool {
	return len(d.After) == 0 && len(d.AfterGroups) == 0 && d.Group == ""
}

// write appends d's fields to an object being written in b.
func (d DepFields) write(b *bytes.Buffer) {
	list := func(name string, v []string) {
		if len(v) == 0 {
			return
		}
		j, _ := json.Marshal(v)
		b.WriteString(`,"` + name + `":`)
		b.Write(j)
	}
	list("after", d.After)
	list("after_group", d.AfterGroups)
	if len(d.After)+len(d.AfterGroups) > 0 && d.OnParentFailure != "" {
		b.WriteString(`,"on_parent_failure":`)
		b.Write(MarshalString(d.OnParentFailure))
	}
	if d.Group != "" {
		b.WriteString(`,"group":`)
		b.Write(MarshalString(d.Group))
	}
}
