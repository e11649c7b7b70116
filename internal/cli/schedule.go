package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/scheduleio"
	"github.com/resque-go/resque-go/schedule"
)

func scheduleCommand() *ucli.Command {
	jsonFlag := &ucli.BoolFlag{Name: "json", Usage: "print JSON"}
	source := func() []ucli.Flag {
		return append(append(redisFlags(), jsonFlag),
			&ucli.StringFlag{Name: "schedule", Aliases: []string{"s"}, Usage: "also show the schedules of this resque-scheduler YAML file", EnvVars: []string{"RESQUE_SCHEDULE"}},
			environmentFlag(),
			lockPrefixFlag(),
		)
	}
	return &ucli.Command{
		Name:  "schedule",
		Usage: "inspect resque-scheduler's recurring schedules and check a schedule file",
		Description: "Recurring schedules come from a resque-scheduler YAML file (--schedule) and from the\n" +
			"dynamic schedules Resque.set_schedule keeps in Redis (persistent_schedules), which replace\n" +
			"file entries of the same name. Only the scheduler holding resque-scheduler's master lock\n" +
			"fires them, Ruby's resque-scheduler included. A resque-go master publishes the schedules it\n" +
			"fires, so list and show show them (source \"master\") without --schedule, from any host.\n" +
			"list and show read; they change nothing. queue-now enqueues a schedule's job once.",
		Subcommands: []*ucli.Command{
			{Name: "list", Usage: "the schedules in force, the master scheduler, and when each last ran and runs next", ArgsUsage: " ",
				Flags: source(), Action: scheduleList},
			{Name: "show", Usage: "one schedule in full", ArgsUsage: "NAME", Flags: source(), Action: scheduleShow},
			{
				Name: "queue-now", Usage: "enqueue a schedule's job once now, as resque-web's \"Queue now\" does", ArgsUsage: "NAME",
				Description: "Pushes the schedule's class and args to its queue now, as resque-scheduler's\n" +
					"enqueue_from_config does for resque-web: whatever its cron or every (a schedule with neither,\n" +
					"which schedulers never fire, included). Its records (last_enqueued_at, the last slot) are\n" +
					"left alone, so schedulers fire its next slot as they would have. A schedule from a file is\n" +
					"found with the same --schedule as list. No schedule with NAME: exit 1.",
				Flags: source(), Action: scheduleQueueNow,
			},
			{
				Name: "validate", Usage: "check a resque-scheduler YAML schedule file (no Redis needed)", ArgsUsage: "FILE",
				Description: "Prints each entry and its next run; a bad entry (a cron or every that cannot be read,\n" +
					"no queue, an unsupported option) is an error naming the entry and the field (exit 2).\n" +
					"A schedule file may hold up to 4 MiB and 10,000 entries; a larger one is refused before it is\n" +
					"parsed (exit 2), here and wherever a schedule file is loaded.",
				Flags:  []ucli.Flag{jsonFlag, environmentFlag()},
				Action: scheduleValidate,
			},
		},
	}
}

func environmentFlag() ucli.Flag {
	return &ucli.StringFlag{Name: "environment", Aliases: []string{"E"},
		Usage: "load only the entries whose rails_env/env names this environment (and those with none), as resque-scheduler does", EnvVars: []string{"RAILS_ENV"}}
}

func lockPrefixFlag() ucli.Flag {
	return &ucli.StringFlag{Name: "lock-prefix", Usage: "resque-scheduler's master lock prefix (schedulers with different prefixes elect separate masters)",
		EnvVars: []string{"RESQUE_SCHEDULER_MASTER_LOCK_PREFIX"}}
}

// recurringScheduleFlags are the flags of a command that runs a
// schedule.Scheduler (resque-scheduler's names for the environment
// variables); recurringScheduleConfig reads them.
func recurringScheduleFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "schedule", Aliases: []string{"s"}, Usage: "resque-scheduler YAML schedule file of recurring jobs", EnvVars: []string{"RESQUE_SCHEDULE"}},
		environmentFlag(),
		&ucli.BoolFlag{Name: "dynamic-schedule", Aliases: []string{"D"}, Usage: "follow Resque.set_schedule/remove_schedule changes while running (schedules_changed)", EnvVars: []string{"DYNAMIC_SCHEDULE"}},
		&ucli.StringFlag{Name: "lock-timeout", Usage: "TTL of the master lock, renewed on every pass (seconds or a duration)", Value: "180", EnvVars: []string{"LOCK_TIMEOUT"}},
		lockPrefixFlag(),
		&ucli.StringFlag{Name: "schedule-interval", Usage: "longest wait between scheduler passes (seconds or a duration)", Value: "5", EnvVars: []string{"RESQUE_SCHEDULER_INTERVAL"}},
	}
}

// recurringScheduleConfig is the schedule.Config of recurringScheduleFlags
// (Client, Hostname, Logger left for the caller). A bad schedule file is a
// usage error.
func recurringScheduleConfig(c *ucli.Context) (scheduleio.Config, error) {
	cfg := scheduleio.Config{Environment: c.String("environment"), Dynamic: c.Bool("dynamic-schedule"), LockPrefix: c.String("lock-prefix")}
	var err error
	if cfg.LockTimeout, err = parseSeconds("lock-timeout", c.String("lock-timeout")); err != nil {
		return cfg, err
	}
	if cfg.LockTimeout < time.Second {
		return cfg, usagef("--lock-timeout must be at least 1 second")
	}
	if cfg.Interval, err = parseSeconds("schedule-interval", c.String("schedule-interval")); err != nil {
		return cfg, err
	}
	if cfg.Interval <= 0 {
		return cfg, usagef("--schedule-interval must be positive")
	}
	if path := c.String("schedule"); path != "" {
		if cfg.Entries, err = schedule.LoadFile(path, cfg.Environment); err != nil {
			return cfg, usageError{err}
		}
	}
	return cfg, nil
}

// scheduleOverview reads what list and show print.
func scheduleOverview(c *ucli.Context) (schedule.Overview, error) {
	var static []schedule.Entry
	if path := c.String("schedule"); path != "" {
		var err error
		if static, err = schedule.LoadFile(path, c.String("environment")); err != nil {
			return schedule.Overview{}, usageError{err}
		}
	}
	client, err := newClient(c)
	if err != nil {
		return schedule.Overview{}, err
	}
	defer client.Close()
	return scheduleio.Inspect(c.Context, client, static, c.String("environment"), c.String("lock-prefix"), time.Now())
}

// scheduleJSON is one schedule as --json prints it: last_enqueued_at is
// resque-scheduler's record (Ruby's Time#to_s, as stored in
// last_enqueued_at_raw) in RFC 3339; last_slot_at the last slot resque-go
// enqueued, next_run_at the next one; null when there is none.
type scheduleJSON struct {
	schedule.Info
	When              string  `json:"when"`
	LastEnqueuedAt    *string `json:"last_enqueued_at"`
	LastEnqueuedAtRaw string  `json:"last_enqueued_at_raw,omitempty"`
	LastSlotAt        *string `json:"last_slot_at"`
	NextRunAt         *string `json:"next_run_at"`
}

func toScheduleJSON(i schedule.Info) scheduleJSON {
	return scheduleJSON{Info: i, When: i.When(), LastEnqueuedAt: jsonTime(storedTime(i.LastEnqueuedAt)),
		LastEnqueuedAtRaw: i.LastEnqueuedAt, LastSlotAt: jsonTime(i.LastSlot), NextRunAt: jsonTime(i.Next)}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func masterLine(o schedule.Overview) string {
	if o.Master == "" {
		return "master: none (" + o.LockKey + " is free)"
	}
	return fmt.Sprintf("master: %s (lock %s, %ds left)", o.Master, o.LockKey, int(o.MasterTTL.Round(time.Second)/time.Second))
}

func scheduleList(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("list takes no argument (use show NAME)")
	}
	o, err := scheduleOverview(c)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		rows := make([]scheduleJSON, len(o.Schedules))
		for i, s := range o.Schedules {
			rows[i] = toScheduleJSON(s)
		}
		bad := o.Errors
		if bad == nil {
			bad = []schedule.BadSchedule{}
		}
		// bad_schedules: persistent schedules that cannot be loaded
		return writeJSON(c.App.Writer, struct {
			listJSON[scheduleJSON]
			LockKey          string                 `json:"lock_key"`
			Master           string                 `json:"master"`
			MasterTTLSeconds int                    `json:"master_ttl_seconds"`
			BadSchedules     []schedule.BadSchedule `json:"bad_schedules"`
		}{listOf(rows), o.LockKey, o.Master, int(o.MasterTTL / time.Second), bad})
	}
	w := c.App.Writer
	fmt.Fprintln(w, masterLine(o))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tWHEN\tQUEUE\tCLASS\tSOURCE\tLAST ENQUEUED\tNEXT")
	for _, s := range o.Schedules {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.When(), orDash(s.Queue), s.Class, s.Source,
			humanStored(s.LastEnqueuedAt), humanTime(s.Next))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printBadSchedules(w, o.Errors)
	return nil
}

func printBadSchedules(w io.Writer, bad []schedule.BadSchedule) {
	for _, b := range bad {
		fmt.Fprintf(w, "not loaded: %s\n", b.Error)
	}
}

func scheduleShow(c *ucli.Context) error {
	switch {
	case c.NArg() == 0:
		return usagef("show needs a schedule NAME")
	case c.NArg() > 1:
		return usagef("show takes one NAME, got %d arguments", c.NArg())
	}
	name := c.Args().First()
	o, err := scheduleOverview(c)
	if err != nil {
		return err
	}
	for _, b := range o.Errors {
		if b.Name == name {
			return errors.New(b.Error)
		}
	}
	for _, s := range o.Schedules {
		if s.Name != name {
			continue
		}
		if c.Bool("json") {
			return writeJSON(c.App.Writer, toScheduleJSON(s))
		}
		tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
		row := func(k, v string) {
			if v != "" {
				fmt.Fprintf(tw, "%s:\t%s\n", k, v)
			}
		}
		row("name", s.Name)
		row("when", s.When())
		row("options", string(s.Options))
		row("class", s.Class)
		row("queue", s.Queue)
		row("args", string(s.Args))
		row("description", s.Description)
		row("environments", s.Env)
		row("source", s.Source)
		row("last enqueued", humanStored(s.LastEnqueuedAt))
		if !s.LastSlot.IsZero() {
			row("last slot", humanTime(s.LastSlot))
		}
		row("next", humanTime(s.Next))
		row("master", masterLine(o)[len("master: "):])
		return tw.Flush()
	}
	return usagef("no schedule named %q (schedule list shows them)", name)
}

func scheduleValidate(c *ucli.Context) error {
	switch {
	case c.NArg() == 0:
		return usagef("validate needs a schedule FILE")
	case c.NArg() > 1:
		return usagef("validate takes one FILE, got %d arguments", c.NArg())
	}
	path := c.Args().First()
	entries, err := schedule.ParseFile(path)
	if err != nil {
		return usageError{err}
	}
	env := c.String("environment")
	now := time.Now()
	if c.Bool("json") {
		type row struct {
			schedule.Entry
			When      string  `json:"when"`
			Loaded    bool    `json:"loaded"`
			NextRunAt *string `json:"next_run_at"`
		}
		rows := []row{}
		for _, e := range entries {
			rows = append(rows, row{e, e.When(), e.MatchesEnv(env), jsonTime(e.Next(now))})
		}
		// environment: null when none was given
		var envJSON *string
		if env != "" {
			envJSON = &env
		}
		return writeJSON(c.App.Writer, struct {
			listJSON[row]
			File        string  `json:"file"`
			Environment *string `json:"environment"`
		}{listOf(rows), path, envJSON})
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tWHEN\tQUEUE\tCLASS\tLOADED\tNEXT")
	loaded := 0
	for _, e := range entries {
		in := "yes"
		if !e.MatchesEnv(env) {
			in = "no (rails_env " + strconv.Quote(e.Env) + ")"
		} else if !e.Manual() {
			loaded++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Name, e.When(), orDash(e.Queue), orDash(e.Class), in,
			humanTime(e.Next(now)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	where := fmt.Sprintf("in environment %q", env)
	if env == "" {
		where = "with no --environment (an entry with a rails_env needs one)"
	}
	fmt.Fprintf(c.App.Writer, "%s: %s, %d fired %s\n", path, plural(len(entries), "entry", "entries"), loaded, where)
	return nil
}

func scheduleQueueNow(c *ucli.Context) error {
	switch {
	case c.NArg() == 0:
		return usagef("queue-now needs a schedule NAME")
	case c.NArg() > 1:
		return usagef("queue-now takes one NAME, got %d arguments", c.NArg())
	}
	name := c.Args().First()
	var static []schedule.Entry
	if path := c.String("schedule"); path != "" {
		var err error
		if static, err = schedule.LoadFile(path, c.String("environment")); err != nil {
			return usageError{err}
		}
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	in, payload, err := scheduleio.QueueNow(c.Context, client, static, c.String("environment"), c.String("lock-prefix"), name, time.Now())
	if errors.Is(err, schedule.ErrNotFound) {
		return fmt.Errorf("no schedule named %q (schedule list shows them); nothing was queued", name)
	}
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"name": name, "queue": in.Queue, "class": in.Class, "payload": protocol.EmbedPayload(payload)})
	}
	fmt.Fprintf(c.App.Writer, "queued %s (schedule %s) to queue %s now; its schedule is unchanged\n", in.Class, name, in.Queue)
	return nil
}
