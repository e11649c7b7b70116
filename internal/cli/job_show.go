package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// jobShowCommand is `job show ID`: what a held job waits for
// (docs/dependencies.md), a job's recorded end, and its events
// (docs/events.md).
func jobShowCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "show",
		Usage:     "a job's state, its dependencies (parents and theirs) and its events",
		ArgsUsage: "ID",
		Description: "A job enqueued with --after or --after-group is held until its parents end; its state\n" +
			"and each parent's (succeeded, failed, discarded, dropped, pending) are shown. For any\n" +
			"job with an id, its end is shown while dependencies are in use (kept a week), and its\n" +
			"events while the events stream keeps them (work --events): then the state is the last\n" +
			"event's (queued, running, delayed, succeeded, failed, discarded, cancelled). The whole\n" +
			"stream is read, a page at a time, as job events does.",
		Flags:  append(redisFlags(), &ucli.BoolFlag{Name: "json", Usage: "print JSON"}),
		Action: jobShow,
	}
}

type jobShowJSON struct {
	ID              string          `json:"id"`
	State           string          `json:"state"`
	Held            bool            `json:"held"`
	Queue           string          `json:"queue"`
	OnParentFailure string          `json:"on_parent_failure"`
	Waiting         int64           `json:"waiting"`
	Group           string          `json:"group"`
	ParentFailed    string          `json:"parent_failed"`
	Parents         []jobParentJSON `json:"parents"`
	Payload         json.RawMessage `json:"payload"`
	Events          []eventJSON     `json:"events"`
	EventsProblem   string          `json:"events_problem,omitempty"`
}

type jobParentJSON struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

func jobShow(c *ucli.Context) error {
	id, err := oneArg(c, "ID")
	if err != nil {
		return err
	}
	if err := protocol.ValidateDepName("job id", id); err != nil {
		return usageError{err}
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	s, err := client.DepJob(c.Context, id)
	if err != nil {
		return err
	}
	// a stream key of another type is named, the rest shown
	evs, err := client.JobEvents(c.Context, id)
	eventsProblem := ""
	if kt := new(rdb.KeyTypeError); errors.As(err, &kt) {
		eventsProblem, err = kt.Error(), nil
	}
	if err != nil {
		return err
	}
	state := s.State
	if state == "" && len(evs) > 0 {
		state = protocol.EventState(evs[len(evs)-1].Fields["event"])
	}
	if state == "" {
		state = "unknown"
	}
	out := jobShowJSON{ID: id, State: state, Held: s.Held, Queue: s.Queue, OnParentFailure: s.Policy, Waiting: s.Waiting,
		Group: s.Group, ParentFailed: s.ParentFailed, Parents: []jobParentJSON{}, Payload: json.RawMessage("null"), Events: []eventJSON{},
		EventsProblem: eventsProblem}
	for _, e := range evs {
		out.Events = append(out.Events, toEventJSON(e))
	}
	if json.Valid(s.Payload) {
		out.Payload = s.Payload
	}
	for _, p := range s.Parents {
		out.Parents = append(out.Parents, jobParentJSON{Name: p.Name, State: p.State})
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, out)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "job %s\n  state: %s\n", id, state)
	if eventsProblem != "" {
		fmt.Fprintf(w, "  events cannot be read: %s\n", eventsProblem)
	}
	if !s.Held {
		if s.State == "" && len(evs) == 0 && eventsProblem == "" {
			fmt.Fprintln(w, "  no dependencies recorded (not held, and no end recorded), and no events (events off, or trimmed since)")
		}
		return writeShownEvents(w, evs)
	}
	fmt.Fprintf(w, "  queue: %s\n  on parent failure: %s\n", s.Queue, s.Policy)
	if s.Group != "" {
		fmt.Fprintf(w, "  group: %s\n", s.Group)
	}
	if s.State == "held" {
		fmt.Fprintf(w, "  waiting for %d parent(s)\n", s.Waiting)
	}
	if s.ParentFailed != "" {
		fmt.Fprintf(w, "  parent that did not succeed: %s\n", s.ParentFailed)
	}
	for _, p := range s.Parents {
		fmt.Fprintf(w, "  parent %s: %s\n", p.Name, p.State)
	}
	return writeShownEvents(w, evs)
}

// writeShownEvents prints a job's events under job show's heading, one
// indented line each; nothing when there are none.
func writeShownEvents(w io.Writer, evs []rdb.Event) error {
	if len(evs) == 0 {
		return nil
	}
	fmt.Fprintln(w, "  events, oldest first:")
	var b bytes.Buffer
	for _, e := range evs {
		b.Reset()
		if err := printEvent(&b, e, false); err != nil {
			return err
		}
		if _, err := fmt.Fprint(w, "    "+b.String()); err != nil {
			return err
		}
	}
	return nil
}
