package client

import (
	"context"
	"errors"

	"github.com/resque-go/resque-go/internal/planio"
	"github.com/resque-go/resque-go/plan"
)

// Errors of the calendar methods; each also matches the plan package's
// sentinel (plan.ErrNoCalendar, plan.ErrCalendarExists).
var (
	// ErrNoSuchCalendar: no calendar has that name.
	ErrNoSuchCalendar = errors.New("client: no such calendar")
	// ErrCalendarExists: AddCalendar without replace was given a name
	// that is taken; nothing was written.
	ErrCalendarExists = errors.New("client: a calendar with this name exists")
)

// AddCalendar stores a plan calendar (plan.Calendar: dates and cron lines
// whose instants no plan naming it fires at). With replace, a calendar of
// the same name is replaced, and the plans naming it follow the new one
// from their next slot on; without, a taken name is ErrCalendarExists. An
// invalid calendar is ErrInvalid.
func (c *Client) AddCalendar(ctx context.Context, cal plan.Calendar, replace bool) error {
	return calendarErr("add calendar "+cal.Name, planio.AddCalendar(ctx, c.rdb, cal, replace))
}

// Calendars returns every plan calendar, by name.
func (c *Client) Calendars(ctx context.Context) ([]plan.Calendar, error) {
	cals, err := planio.ListCalendars(ctx, c.rdb)
	return cals, calendarErr("calendars", err)
}

// Calendar returns the calendar name; ErrNoSuchCalendar when there is none.
// Calendar.Compile gives its exclusion test.
func (c *Client) Calendar(ctx context.Context, name string) (plan.Calendar, error) {
	cal, err := planio.GetCalendar(ctx, c.rdb, name)
	return cal, calendarErr("calendar "+name, err)
}

// RemoveCalendar deletes calendar name; ErrNoSuchCalendar when there is
// none, ErrInvalid (naming them) while plans use it.
func (c *Client) RemoveCalendar(ctx context.Context, name string) error {
	return calendarErr("remove calendar "+name, planio.RemoveCalendar(ctx, c.rdb, name))
}

func calendarErr(op string, err error) error {
	switch {
	case errors.Is(err, plan.ErrNoCalendar):
		return adminErr(op, err, ErrNoSuchCalendar)
	case errors.Is(err, plan.ErrCalendarExists):
		return adminErr(op, err, ErrCalendarExists)
	}
	return planErr(op, err)
}
