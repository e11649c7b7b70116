package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/planio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/plan"
)

func planCommand() *ucli.Command {
	jsonFlag := &ucli.BoolFlag{Name: "json", Usage: "print JSON"}
	withRedis := func(extra ...ucli.Flag) []ucli.Flag {
		return append(append(redisFlags(), jsonFlag), extra...)
	}
	return &ucli.Command{
		Name:  "plan",
		Usage: "recurring jobs (resque-v3 plans): add, list, show, remove, pause, resume",
		Description: "A plan pushes its job at every slot of its recurrence; a scheduler fires it (each slot\n" +
			"exactly once, however many schedulers run). Plans written by the resque-v3 PHP\n" +
			"producers are listed, shown, removed and fired as they are.",
		Subcommands: []*ucli.Command{
			{
				Name: "add", Usage: "create a plan; prints its id and first slot",
				UsageText: "resque-go plan add --queue Q --class C [--args JSON] (--every 5m | --period P1M | --cron '0 3 * * *' [--timezone Europe/Prague]) [--start TIME] [--misfire coalesce|catch-up|skip] [--exclude-calendar NAME] [--group G] [--unique-id U] [--id ID]",
				Description: "--every is elapsed time (whole seconds). --period is ISO 8601 (P1M, P1D, PT5M, P1DT12H);\n" +
					"its days, months and years follow the calendar in --timezone (default UTC): a day is\n" +
					"23 or 25 hours across a DST change, and Jan 31 + P1M is Feb 28 (29), then Mar 31.\n" +
					"--cron is a 5-field line on the wall clock of --timezone (default UTC): a time the\n" +
					"clocks skip runs when the gap ends, a time they repeat runs once (an hourly or\n" +
					"more frequent line runs in both passes). The first slot is the first one after\n" +
					"now: --start (RFC 3339 or Unix seconds) sets the phase of --every/--period and the\n" +
					"earliest slot of --cron; a past start never fires retroactively.\n" +
					"--exclude-calendar NAME (see calendar add): a slot the calendar excludes is, by\n" +
					"--misfire: skip: dropped (the plan goes on at its next slot the calendar allows);\n" +
					"coalesce or catch-up: moved to the first instant the calendar allows (one job for\n" +
					"all the slots of the excluded stretch), then on at the next slot after it.\n" +
					"--group G: plan pause/resume --group G pauses and resumes the plans of G; a plan\n" +
					"added to a paused group starts paused.",
				Flags: withRedis(
					&ucli.StringFlag{Name: "queue", Usage: "queue name", Required: true},
					&ucli.StringFlag{Name: "class", Usage: "job class", Required: true},
					&ucli.StringFlag{Name: "args", Usage: "JSON args: an array, or an object (kept as is)", Value: "[]"},
					&ucli.StringFlag{Name: "every", Usage: "interval: 90s, 5m, 2h"},
					&ucli.StringFlag{Name: "period", Usage: "ISO 8601 period: P1M, P1D, PT5M, P0Y0M0DT0H5M0S"},
					&ucli.StringFlag{Name: "cron", Usage: "5-field cron line: '0 3 * * *', '*/15 * * * MON-FRI', @daily"},
					&ucli.StringFlag{Name: "timezone", Usage: "IANA time zone of --period and --cron (default UTC)"},
					&ucli.StringFlag{Name: "start", Usage: "RFC 3339 or Unix seconds: the phase of --every/--period, the earliest --cron slot"},
					&ucli.StringFlag{Name: "misfire", Usage: "slots missed while no scheduler ran: coalesce (fire once), catch-up (fire each), skip", Value: "coalesce"},
					&ucli.StringFlag{Name: "unique-id", Usage: "the job's unique id: a slot is skipped while a job with it is queued or running"},
					&ucli.StringFlag{Name: "id", Usage: "plan id (default: generated)"},
					&ucli.StringFlag{Name: "exclude-calendar", Usage: "calendar whose excluded dates the plan skips (--misfire skip) or moves past (coalesce, catch-up)"},
					&ucli.StringFlag{Name: "group", Usage: "the plan's group, for plan pause/resume --group"},
				),
				Action: planAdd,
			},
			{
				Name: "pause", Usage: "take a plan (or every plan of a group) off the schedule, keeping its slot",
				UsageText: "resque-go plan pause (ID | --group G)", ArgsUsage: "[ID]",
				Description: "A paused plan is in no slot list, so no scheduler fires it (neither resque-go's nor the\n" +
					"resque-v3 PHP one). --group also marks the group paused: a plan added to it starts paused.",
				Flags: withRedis(&ucli.StringFlag{Name: "group", Usage: "pause every plan of this group"}), Action: planPause(true),
			},
			{
				Name: "resume", Usage: "put a paused plan (or every paused plan of a group) back on the schedule",
				UsageText: "resque-go plan resume (ID | --group G)", ArgsUsage: "[ID]",
				Description: "The plan is filed again in the slot it was paused at: slots that passed meanwhile fire by\n" +
					"its --misfire policy: coalesce one job, catch-up one job per slot, skip none more than a\n" +
					"minute late; then it goes on with its next slot.",
				Flags: withRedis(&ucli.StringFlag{Name: "group", Usage: "resume every paused plan of this group"}), Action: planPause(false),
			},
			{Name: "list", Usage: "every plan, by next run", ArgsUsage: " ", Flags: withRedis(), Action: planList},
			{
				Name: "show", Usage: "one plan: its fields, its next slots and its JSON as stored", ArgsUsage: "ID",
				Flags:  withRedis(&ucli.IntFlag{Name: "next", Usage: "how many upcoming slots to show", Value: 5}),
				Action: planShow,
			},
			{Name: "remove", Usage: "delete a plan and take it off the schedule", ArgsUsage: "ID", Flags: withRedis(), Action: planRemove},
			{
				Name: "queue-now", Usage: "enqueue a plan's job once now, leaving its schedule as it is", ArgsUsage: "ID",
				Description: "Pushes the job the plan's next fire would push (a fresh job id and queue_time) to its queue\n" +
					"now; the plan keeps its slot, so its next run is unchanged. A paused plan is queued too. A\n" +
					"unique plan's job is refused while its unique id is taken (exit 3), or parked while its job\n" +
					"runs, as a fire would. No plan with ID: exit 1.",
				Flags: withRedis(), Action: planQueueNow,
			},
		},
	}
}

// planArg is the one ID argument of c.
func planArg(c *ucli.Context) (string, error) {
	switch {
	case c.NArg() == 0:
		return "", usagef("%s needs a plan ID", c.Command.FullName())
	case c.NArg() > 1:
		return "", usagef("%s takes one ID, got %d arguments", c.Command.FullName(), c.NArg())
	case c.Args().First() == "":
		return "", usagef("%s: the plan id is empty", c.Command.FullName())
	}
	return c.Args().First(), nil
}

// planFromFlags reads the flags of plan add.
func planFromFlags(c *ucli.Context) (plan.Plan, error) {
	if c.NArg() > 0 {
		return plan.Plan{}, usagef("plan add takes no arguments (got %q); everything is a flag", c.Args().First())
	}
	p := plan.Plan{Queue: c.String("queue"), Class: c.String("class"), Period: c.String("period"), Cron: c.String("cron"),
		Timezone: c.String("timezone"), Misfire: plan.Misfire(c.String("misfire")), UniqueID: c.String("unique-id"), ID: c.String("id"),
		Calendar: c.String("exclude-calendar"), Group: c.String("group")}
	if p.Queue == "" || p.Class == "" {
		return p, usagef("plan add needs --queue and --class")
	}
	n := 0
	for _, f := range []string{"every", "period", "cron"} {
		if c.String(f) != "" {
			n++
		}
	}
	if n != 1 {
		return p, usagef("plan add needs one of --every, --period or --cron")
	}
	for _, f := range []string{"unique-id", "id", "timezone", "exclude-calendar", "group"} {
		if c.IsSet(f) && c.String(f) == "" {
			return p, usagef("--%s is empty", f)
		}
	}
	if e := c.String("every"); e != "" {
		d, err := time.ParseDuration(e)
		if err != nil || d < time.Second || d%time.Second != 0 {
			return p, usagef("--every %q: want whole seconds, at least 1s, such as 90s, 5m or 2h (for days or months use --period P1D, P1M)", e)
		}
		p.Every = d
	}
	args := bytes.TrimSpace([]byte(c.String("args")))
	if len(args) > 0 && (!json.Valid(args) || (args[0] != '[' && args[0] != '{')) {
		return p, usagef("--args %q: want a JSON array of arguments or an object, e.g. '[1,\"two\"]'", clip(string(args), 200))
	}
	p.Args = args
	if s := c.String("start"); s != "" {
		t, err := parsePlanTime(s)
		if err != nil {
			return p, usagef("--start %q: want RFC 3339 (2026-12-01T08:00:00Z) or Unix seconds", s)
		}
		p.Start = t
	}
	return p, nil
}

// parsePlanTime reads RFC 3339 or Unix seconds.
func parsePlanTime(v string) (time.Time, error) {
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Unix(secs, 0), nil
	}
	return time.Parse(time.RFC3339, v)
}

func planAdd(c *ucli.Context) error {
	p, err := planFromFlags(c)
	if err != nil {
		return err
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	id, err := planio.Add(c.Context, client, p)
	if errors.Is(err, plan.ErrInvalid) || errors.Is(err, plan.ErrExists) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	got, err := planio.Get(c.Context, client, id)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, planView(got, 0, nil))
	}
	paused := ""
	if got.Paused {
		paused = " (paused: its group is paused)"
	}
	fmt.Fprintf(c.App.Writer, "%s\tnext run %s%s\n", id, formatSlot(got.NextRun), paused)
	return nil
}

// planJSON is a plan as the --json outputs write it: next_run_at_unix is
// the plan's score in the schedule as stored (0: none), next_run_at its
// RFC 3339 form (null: none); stored is the plan's JSON as stored.
type planJSON struct {
	ID            string          `json:"id"`
	Class         string          `json:"class"`
	Queue         string          `json:"queue"`
	Args          json.RawMessage `json:"args,omitempty"`
	Recurrence    string          `json:"recurrence"`
	Timezone      string          `json:"timezone,omitempty"`
	Misfire       string          `json:"misfire"`
	UniqueID      string          `json:"unique_id,omitempty"`
	Calendar      string          `json:"calendar,omitempty"`
	Group         string          `json:"group,omitempty"`
	Paused        bool            `json:"paused"`
	NextRunAt     *string         `json:"next_run_at"`
	NextRunAtUnix int64           `json:"next_run_at_unix"`
	Problem       string          `json:"problem,omitempty"`
	Upcoming      []string        `json:"upcoming,omitempty"`
	Stored        json.RawMessage `json:"stored,omitempty"`
}

// planView is p for --json, with its next n slots (x: its calendar).
func planView(p plan.Plan, n int, x *plan.Exclusion) planJSON {
	v := planJSON{ID: p.ID, Class: p.Class, Queue: p.Queue, Args: p.Args, Recurrence: recurrenceText(p), Timezone: p.Timezone,
		Misfire: misfireText(p.Misfire), UniqueID: p.UniqueID, NextRunAt: jsonTime(p.NextRun), NextRunAtUnix: max(p.NextRun.Unix(), 0),
		Problem: p.Problem, Calendar: p.Calendar, Group: p.Group, Paused: p.Paused}
	if n > 0 {
		if json.Valid(p.Raw) {
			v.Stored = p.Raw
		}
		up, _ := plan.UpcomingExcluding(p, x, n)
		for _, t := range up {
			if s := jsonTime(t); s != nil {
				v.Upcoming = append(v.Upcoming, *s)
			}
		}
	}
	return v
}

func recurrenceText(p plan.Plan) string {
	switch {
	case p.Cron != "":
		return "cron " + p.Cron
	case p.Period != "":
		return "period " + p.Period
	}
	return "none"
}

// misfireText names a plan's policy; a plan without one (the PHP
// producers write none) coalesces.
func misfireText(m plan.Misfire) string {
	if m == "" {
		return string(plan.Coalesce)
	}
	return string(m)
}

// formatSlot is a plan's slot for text output; "-" for none.
func formatSlot(t time.Time) string {
	if t.Unix() <= 0 {
		return "-"
	}
	return humanTime(t)
}

func planList(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("list takes no argument (use show ID)")
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	plans, err := planio.List(c.Context, client)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		rows := make([]planJSON, len(plans))
		for i, p := range plans {
			rows[i] = planView(p, 0, nil)
		}
		return writeJSON(c.App.Writer, listOf(rows))
	}
	notes := false
	for _, p := range plans {
		notes = notes || p.Problem != ""
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	head := "ID\tCLASS\tQUEUE\tRECURRENCE\tNEXT RUN"
	if notes {
		head += "\tNOTE"
	}
	fmt.Fprintln(tw, head)
	for _, p := range plans {
		rec := recurrenceText(p)
		if p.Timezone != "" && p.Timezone != "UTC" {
			rec += " (" + p.Timezone + ")"
		}
		next := formatSlot(p.NextRun)
		if p.Paused {
			next += " (paused)"
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", p.ID, p.Class, p.Queue, rec, next)
		if p.Problem != "" {
			line += "\tcannot be fired: " + clip(p.Problem, 100)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

func planShow(c *ucli.Context) error {
	id, err := planArg(c)
	if err != nil {
		return err
	}
	n := c.Int("next")
	if n < 0 {
		return usagef("--next must not be negative")
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	p, err := planio.Get(c.Context, client, id)
	if errors.Is(err, plan.ErrNotFound) {
		return usagef("no plan %q (plan list shows them)", id)
	}
	if err != nil {
		return err
	}
	x, err := planio.Exclusion(c.Context, client, p.Calendar)
	if err != nil {
		return err
	}
	v := planView(p, max(n, 1), x)
	if c.Bool("json") {
		v.Upcoming = v.Upcoming[:min(n, len(v.Upcoming))]
		return writeJSON(c.App.Writer, v)
	}
	w := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "id\t%s\nclass\t%s\nqueue\t%s\nargs\t%s\nrecurrence\t%s\n", v.ID, v.Class, v.Queue, jsonLine(v.Args), v.Recurrence)
	if v.Timezone != "" {
		fmt.Fprintf(w, "timezone\t%s\n", v.Timezone)
	}
	fmt.Fprintf(w, "misfire\t%s\n", v.Misfire)
	if v.UniqueID != "" {
		fmt.Fprintf(w, "unique id\t%s\n", v.UniqueID)
	}
	if v.Calendar != "" {
		fmt.Fprintf(w, "calendar\t%s\n", v.Calendar)
	}
	if v.Group != "" {
		fmt.Fprintf(w, "group\t%s\n", v.Group)
	}
	if p.Paused {
		fmt.Fprintf(w, "paused\tyes (plan resume %s)\n", v.ID)
	}
	fmt.Fprintf(w, "next run\t%s\n", formatSlot(p.NextRun))
	if v.Problem != "" {
		fmt.Fprintf(w, "problem\tcannot be fired: %s\n", v.Problem)
	}
	if up, _ := plan.UpcomingExcluding(p, x, n); n > 0 && len(up) > 0 {
		slots := make([]string, len(up))
		for i, t := range up {
			slots[i] = formatSlot(t)
		}
		fmt.Fprintf(w, "upcoming\t%s\n", strings.Join(slots, ", "))
	}
	fmt.Fprintf(w, "stored\t%s\n", jsonLine(p.Raw))
	return w.Flush()
}

func planRemove(c *ucli.Context) error {
	id, err := planArg(c)
	if err != nil {
		return err
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	err = planio.Remove(c.Context, client, id)
	if errors.Is(err, plan.ErrNotFound) {
		return usagef("no plan %q (plan list shows them)", id)
	}
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"id": id, "removed": true})
	}
	fmt.Fprintf(c.App.Writer, "removed %s\n", id)
	return nil
}

// planPause is the action of plan pause (pause) and plan resume.
func planPause(pause bool) ucli.ActionFunc {
	return func(c *ucli.Context) error {
		verb := map[bool]string{true: "paused", false: "resumed"}[pause]
		group := c.String("group")
		if c.IsSet("group") && group == "" {
			return usagef("--group is empty")
		}
		var id string
		if group == "" {
			var err error
			if id, err = planArg(c); err != nil {
				return usagef("%s needs a plan ID or --group G", c.Command.FullName())
			}
		} else if c.NArg() > 0 {
			return usagef("%s takes a plan ID or --group, not both", c.Command.FullName())
		}
		client, err := newClient(c)
		if err != nil {
			return err
		}
		defer client.Close()
		if group != "" {
			n, err := map[bool]func() (int, error){
				true:  func() (int, error) { return planio.PauseGroup(c.Context, client, group) },
				false: func() (int, error) { return planio.ResumeGroup(c.Context, client, group) },
			}[pause]()
			if errors.Is(err, plan.ErrInvalid) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, map[string]any{"group": group, verb: n})
			}
			fmt.Fprintf(c.App.Writer, "group %s %s: %d plans\n", group, verb, n)
			return nil
		}
		var done bool
		if pause {
			done, err = planio.Pause(c.Context, client, id)
		} else {
			done, err = planio.Resume(c.Context, client, id)
		}
		if errors.Is(err, plan.ErrNotFound) {
			return usagef("no plan %q (plan list shows them)", id)
		}
		if err != nil {
			return err
		}
		if c.Bool("json") {
			return writeJSON(c.App.Writer, map[string]any{"id": id, verb: done})
		}
		if !done {
			fmt.Fprintf(c.App.Writer, "%s was %s already\n", id, map[bool]string{true: "paused", false: "not paused"}[pause])
			return nil
		}
		fmt.Fprintf(c.App.Writer, "%s %s\n", verb, id)
		return nil
	}
}

func planQueueNow(c *ucli.Context) error {
	id, err := planArg(c)
	if err != nil {
		return err
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	q, err := planio.QueueNow(c.Context, client, id, time.Now())
	if errors.Is(err, plan.ErrNotFound) {
		return fmt.Errorf("no plan %q (plan list shows them); nothing was queued", id)
	}
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"id": id, "queue": q.Queue, "deferred": q.Deferred, "payload": protocol.EmbedPayload(q.Payload)})
	}
	if q.Deferred {
		fmt.Fprintf(c.App.Writer, "parked the job of plan %s: its unique id's job is running (released when it ends); the plan's schedule is unchanged\n", id)
		return nil
	}
	fmt.Fprintf(c.App.Writer, "queued the job of plan %s to queue %s now; the plan's schedule is unchanged\n", id, q.Queue)
	return nil
}
