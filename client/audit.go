package client

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// AuditEntry is one change recorded in the audit log: who did what, to
// what, when, and to how many jobs or entries.
type AuditEntry struct {
	Time time.Time `json:"time"`
	// Who is the user name (or token name) that made the change; Role
	// the role it had.
	Who  string `json:"who"`
	Role string `json:"role,omitempty"`
	// From is where the request came from (the remote address).
	From string `json:"from,omitempty"`
	// Action names the change ("failed.retry", "queue.clear"...);
	// Target what it applied to (a queue, a filter, an entry).
	Action string `json:"action"`
	Target string `json:"target,omitempty"`
	Count  int64  `json:"count"`
	// Detail says more: what was gone meanwhile, an error.
	Detail string `json:"detail,omitempty"`
}

// DefaultAuditKeep is how many entries the audit log keeps when
// RecordAudit is given no bound.
const DefaultAuditKeep = 10000

// RecordAudit prepends e to the namespace's audit log and trims the log to
// its newest keep entries (keep <= 0: DefaultAuditKeep), in one round trip.
// A zero e.Time is the client's clock.
func (c *Client) RecordAudit(ctx context.Context, e AuditEntry, keep int) error {
	if strings.TrimSpace(e.Action) == "" {
		return invalidf("RecordAudit needs an action")
	}
	if e.Time.IsZero() {
		e.Time = c.now()
	}
	e.Time = e.Time.UTC()
	if keep <= 0 {
		keep = DefaultAuditKeep
	}
	b, err := json.Marshal(e)
	if err != nil {
		return wrap("record audit", err)
	}
	return wrap("record audit", c.rdb.PushCapped(ctx, c.rdb.Keys().WebAudit(), b, int64(keep)))
}

// Audit returns up to limit entries of the audit log from position
// offset, newest first (limit 0: to the end). An entry that does not
// decode is returned with its text in Detail and Action "unreadable".
func (c *Client) Audit(ctx context.Context, offset, limit int) ([]AuditEntry, error) {
	if offset < 0 || limit < 0 {
		return nil, invalidf("Audit offset %d, limit %d: must not be negative", offset, limit)
	}
	stop := -1
	if limit > 0 {
		stop = offset + limit - 1
	}
	items, err := c.rdb.List(ctx, c.rdb.Keys().WebAudit(), offset, stop)
	if err != nil {
		return nil, wrap("audit", err)
	}
	out := make([]AuditEntry, len(items))
	for i, raw := range items {
		if json.Unmarshal(raw, &out[i]) != nil {
			out[i] = AuditEntry{Action: "unreadable", Detail: string(raw)}
		}
	}
	return out, nil
}
