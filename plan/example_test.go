package plan_test

import (
	"fmt"
	"log"
	"time"

	"github.com/resque-go/resque-go/plan"
)

// The next slots of a cron line in a time zone: a daily 02:30 in Prague
// runs at the end of the gap on the night the clocks go forward.
func ExampleParseCron() {
	prague, err := time.LoadLocation("Europe/Prague")
	if err != nil {
		log.Fatal(err)
	}
	c, err := plan.ParseCron("30 2 * * *", prague)
	if err != nil {
		log.Fatal(err)
	}
	t := time.Date(2026, 3, 27, 12, 0, 0, 0, prague)
	for range 3 {
		t, _ = c.Next(t)
		fmt.Println(t.Format("Mon Jan 2 15:04 MST"))
	}
	// Output:
	// Sat Mar 28 02:30 CET
	// Sun Mar 29 03:00 CEST
	// Mon Mar 30 02:30 CEST
}

// A plan's recurrence, checked before it is added (client.AddPlan): a
// monthly period keeps the start's day of month where it can.
func ExamplePlan_Recurrence() {
	p := plan.Plan{Queue: "billing", Class: "Invoice", Period: "P1M",
		Start: time.Date(2026, 1, 31, 9, 0, 0, 0, time.UTC)}
	if err := p.Validate(); err != nil {
		log.Fatal(err)
	}
	rec, err := p.Recurrence(time.Time{})
	if err != nil {
		log.Fatal(err)
	}
	t := p.Start
	for range 3 {
		t, _ = rec.Next(t)
		fmt.Println(t.Format(time.DateOnly))
	}
	// Output:
	// 2026-02-28
	// 2026-03-31
	// 2026-04-30
}

// A calendar keeps a plan off holidays: with misfire Skip the slot of an
// excluded day is dropped; with Coalesce (or CatchUp) it moves to the
// first instant the calendar allows.
func ExampleExclude() {
	prague, err := time.LoadLocation("Europe/Prague")
	if err != nil {
		log.Fatal(err)
	}
	holidays, err := plan.Calendar{Name: "holidays", Timezone: "Europe/Prague",
		Dates: []string{"2026-12-25", "2027-01-01"}}.Compile()
	if err != nil {
		log.Fatal(err)
	}
	daily, err := plan.ParseCron("0 9 * * *", prague)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range []plan.Misfire{plan.Skip, plan.Coalesce} {
		rec := plan.Exclude(daily, holidays, m)
		t := time.Date(2026, 12, 24, 12, 0, 0, 0, prague)
		fmt.Print(m, ":")
		for range 3 {
			t, _ = rec.Next(t)
			fmt.Print(" ", t.Format("Jan 2 15:04"))
		}
		fmt.Println()
	}
	// Output:
	// skip: Dec 26 09:00 Dec 27 09:00 Dec 28 09:00
	// coalesce: Dec 26 00:00 Dec 26 09:00 Dec 27 09:00
}
