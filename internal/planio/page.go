package planio

import (
	"context"
	"math"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/plan"
)

// Page is a bounded part of the plans.
type Page struct {
	Plans []plan.Plan
	// Next is where the next page starts: a slot time (Scheduled) or a
	// SCAN cursor (Scan); Done when there is no next page.
	Next int64
	Cur  string
	Done bool
	// Paused is the number of paused plans (Scheduled's first page, which
	// shows up to maxSlots of them).
	Paused int64
}

// Scheduled reads the plans filed in at most maxSlots slots of the
// schedule (plan_schedule) from slot time from on, and, on the first page
// (from math.MinInt64), up to maxSlots paused plans, sorted by next run.
// Every plan that a scheduler fires is filed in its next slot, or paused,
// so the schedule lists them without a SCAN of the keyspace; a plan key
// in neither (written by hand, or broken) is found by Scan.
func Scheduled(ctx context.Context, c *rdb.Client, from int64, maxSlots int) (Page, error) {
	maxSlots = max(maxSlots, 1)
	var pg Page
	slots, err := c.PlanSlots(ctx, from, math.MaxInt64, maxSlots+1)
	if err != nil {
		return pg, err
	}
	if len(slots) > maxSlots {
		pg.Next, slots = slots[maxSlots], slots[:maxSlots]
	} else {
		pg.Done = true
	}
	lists, err := c.PlanSlotLists(ctx, slots)
	if err != nil {
		return pg, err
	}
	seen := map[string]bool{}
	var ids []string
	for _, l := range lists {
		for _, id := range l {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	paused := map[string]int64{}
	if from == math.MinInt64 {
		if paused, pg.Paused, err = c.PausedPlansPage(ctx, maxSlots); err != nil {
			return pg, err
		}
		for id := range paused {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	pg.Plans, err = load(ctx, c, ids, paused)
	return pg, err
}

// Scan reads the plans whose keys at most calls SCAN calls (COUNT count)
// from cursor on find ("" or "0": the start), sorted by next run; Cur is
// the cursor of the next page.
func Scan(ctx context.Context, c *rdb.Client, cursor string, calls, count int) (Page, error) {
	ids, next, err := c.PlanIDsStep(ctx, cursor, calls, count)
	if err != nil {
		return Page{}, err
	}
	paused, err := c.PausedPlans(ctx)
	if err != nil {
		return Page{}, err
	}
	pg := Page{Cur: next, Done: next == "0"}
	pg.Plans, err = load(ctx, c, dedupe(ids), paused)
	return pg, err
}

func dedupe(ids []string) []string {
	seen := map[string]bool{}
	out := ids[:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
