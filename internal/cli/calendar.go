package cli

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/planio"
	"github.com/resque-go/resque-go/plan"
)

func calendarCommand() *ucli.Command {
	jsonFlag := &ucli.BoolFlag{Name: "json", Usage: "print JSON"}
	withRedis := func(extra ...ucli.Flag) []ucli.Flag {
		return append(append(redisFlags(), jsonFlag), extra...)
	}
	return &ucli.Command{
		Name:  "calendar",
		Usage: "plan calendars: dates and times no plan naming them fires at (plan add --exclude-calendar)",
		Subcommands: []*ucli.Command{
			{
				Name: "add", Usage: "create (or with --replace, replace) a calendar", ArgsUsage: "NAME",
				UsageText: "resque-go calendar add NAME (--date 2026-12-25 ... | --cron '* * * * 0,6' ...) [--timezone Europe/Prague] [--replace]",
				Description: "--date YYYY-MM-DD excludes that whole day (00:00 to 00:00 in --timezone, 23 or 25 hours\n" +
					"across a DST change). --cron excludes every minute of the wall clock in --timezone that\n" +
					"the 5-field line matches (the line would fire at the start of it): '* * * * 0,6' is\n" +
					"every weekend, '* 0-7 * * *' each night until 08:00, '* * 25 12 *' every 25 December.\n" +
					"Both repeat; --timezone defaults to UTC. What a plan does with an excluded slot is its\n" +
					"--misfire policy (plan add --help).",
				Flags: withRedis(
					&ucli.GenericFlag{Name: "date", Usage: "a day to exclude, YYYY-MM-DD (repeatable)", Value: &repeated{}},
					&ucli.GenericFlag{Name: "cron", Usage: "a 5-field cron line whose matching minutes are excluded (repeatable; commas are part of the line)", Value: &repeated{}},
					&ucli.StringFlag{Name: "timezone", Usage: "IANA time zone of --date and --cron (default UTC)"},
					&ucli.BoolFlag{Name: "replace", Usage: "replace a calendar of this name"},
				),
				Action: calendarAdd,
			},
			{Name: "list", Usage: "every calendar", ArgsUsage: " ", Flags: withRedis(), Action: calendarList},
			{Name: "show", Usage: "one calendar", ArgsUsage: "NAME", Flags: withRedis(), Action: calendarShow},
			{Name: "remove", Usage: "delete a calendar no plan uses", ArgsUsage: "NAME", Flags: withRedis(), Action: calendarRemove},
		},
	}
}

// calendarArg is the one NAME argument of c.
func calendarArg(c *ucli.Context) (string, error) {
	switch {
	case c.NArg() != 1:
		return "", usagef("%s takes one calendar NAME, got %d arguments", c.Command.FullName(), c.NArg())
	case c.Args().First() == "":
		return "", usagef("%s: the calendar name is empty", c.Command.FullName())
	}
	return c.Args().First(), nil
}

func calendarAdd(c *ucli.Context) error {
	name, err := calendarArg(c)
	if err != nil {
		return err
	}
	if c.IsSet("timezone") && c.String("timezone") == "" {
		return usagef("--timezone is empty")
	}
	cal := plan.Calendar{Name: name, Dates: repeatedOf(c, "date"), Cron: repeatedOf(c, "cron"), Timezone: c.String("timezone")}
	if err := cal.Validate(); err != nil {
		return usageError{err}
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	err = planio.AddCalendar(c.Context, client, cal, c.Bool("replace"))
	if errors.Is(err, plan.ErrCalendarExists) {
		return usagef("calendar %q exists (add --replace to replace it)", name)
	}
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, cal)
	}
	fmt.Fprintf(c.App.Writer, "calendar %s: %d dates, %d cron lines\n", name, len(cal.Dates), len(cal.Cron))
	return nil
}

func calendarList(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("list takes no argument (use show NAME)")
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	cals, err := planio.ListCalendars(c.Context, client)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, listOf(cals))
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTIMEZONE\tDATES\tCRON")
	for _, cal := range cals {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cal.Name, zoneText(cal.Timezone), clip(strings.Join(cal.Dates, " "), 80), clip(strings.Join(cal.Cron, "; "), 80))
	}
	return tw.Flush()
}

func zoneText(tz string) string {
	if tz == "" {
		return "UTC"
	}
	return tz
}

func calendarShow(c *ucli.Context) error {
	name, err := calendarArg(c)
	if err != nil {
		return err
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	cal, err := planio.GetCalendar(c.Context, client, name)
	if errors.Is(err, plan.ErrNoCalendar) {
		return usagef("no calendar %q (calendar list shows them)", name)
	}
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, cal)
	}
	w := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "name\t%s\ntimezone\t%s\n", cal.Name, zoneText(cal.Timezone))
	for _, d := range cal.Dates {
		fmt.Fprintf(w, "date\t%s\n", d)
	}
	for _, l := range cal.Cron {
		fmt.Fprintf(w, "cron\t%s\n", l)
	}
	return w.Flush()
}

func calendarRemove(c *ucli.Context) error {
	name, err := calendarArg(c)
	if err != nil {
		return err
	}
	client, err := newClient(c)
	if err != nil {
		return err
	}
	defer client.Close()
	err = planio.RemoveCalendar(c.Context, client, name)
	if errors.Is(err, plan.ErrNoCalendar) {
		return usagef("no calendar %q (calendar list shows them)", name)
	}
	if errors.Is(err, plan.ErrInvalid) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"name": name, "removed": true})
	}
	fmt.Fprintf(c.App.Writer, "removed calendar %s\n", name)
	return nil
}

// repeated is a flag given any number of times, each value kept whole (a
// StringSliceFlag would split a cron line such as "* * * * 0,6" at its
// commas).
type repeated []string

func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }
func (r *repeated) String() string     { return strings.Join(*r, " ") }

func repeatedOf(c *ucli.Context, name string) []string {
	if r, ok := c.Generic(name).(*repeated); ok && r != nil {
		return *r
	}
	return nil
}
