package client

import (
	"context"
	"time"
)

// LimitInfo is the state of one concurrency cap or rate limit that workers
// configured with --limit or --rate have used (docs/limits.md).
type LimitInfo struct {
	// Name is class:CLASS, queue:QUEUE or class:CLASS[PATH]=VALUE.
	Name string `json:"name"`
	// Running are the jobs holding a slot of the cap of their own (leases
	// not ended).
	Running int `json:"running"`
	// Leased are the cap's slots worker processes hold as leases, one for
	// each of their slots: the jobs they run under them (how many is the
	// process's to know) hold no slot of their own. A process holds a
	// lease while the cap has room for all of it and no job is parked.
	Leased int `json:"leased"`
	// Parked are jobs waiting for a slot of the cap; Waiting jobs waiting
	// for their moment under the rate.
	Parked  int `json:"parked"`
	Waiting int `json:"waiting"`
	// NextStart is when the rate lets the next job start (zero: now).
	NextStart time.Time `json:"next_start,omitzero"`
}

// Limits lists every cap and rate limit in use, by name: its running,
// parked and waiting jobs. A parked or waiting job is in Redis, in the
// limit's list, until a slot or its moment comes.
func (c *Client) Limits(ctx context.Context) ([]LimitInfo, error) {
	now := time.Now()
	states, err := c.rdb.Limits(ctx, now)
	if err != nil {
		return nil, wrap("limits", err)
	}
	out := make([]LimitInfo, 0, len(states))
	for _, s := range states {
		li := LimitInfo{Name: s.Name, Running: s.Holders - s.Leased, Leased: s.Leased, Parked: s.Parked, Waiting: s.Waiting}
		if s.NextStart.After(now) {
			li.NextStart = s.NextStart
		}
		out = append(out, li)
	}
	return out, nil
}
