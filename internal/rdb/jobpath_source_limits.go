package rdb

import (
	"strconv"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// sourceLimitsLayout is source_limits.lua's slice of the claim: the
// limits' description, from the base the flag "L<d>" of each limited
// source names; seven arguments a rule follow it.
var sourceLimitsLayout = jobpathLayout{Module: "source_limits",
	Args: []string{"now-ms", "lease-ms", "limit-prefix", "index", "queue-prefix", "rules"}}

// ClaimLimits are the concurrency caps and rate limits a worker's claims
// honour (docs/limits.md), laid out once for the claim script.
type ClaimLimits struct {
	// Lease is how long a hold lasts unless renewed (LimitKeeper renews it).
	Lease time.Duration
	rules []protocol.Limit
	args  []any // seven a rule
}

// NewClaimLimits prepares rules for claims with k's keys; nil for none.
func NewClaimLimits(rules []protocol.Limit, lease time.Duration) *ClaimLimits {
	if len(rules) == 0 {
		return nil
	}
	l := &ClaimLimits{Lease: lease, rules: rules}
	for _, r := range rules {
		kind, v, burst := "c", strconv.Itoa(r.N), "0"
		if r.Kind == protocol.LimitRate {
			kind, v = "r", strconv.FormatFloat(r.Interval(), 'f', 3, 64)
			burst = strconv.FormatFloat(float64(r.Period.Microseconds())/1000/100, 'f', 3, 64)
		}
		l.args = append(l.args, kind, r.Queue, r.Class, r.Path, r.Name(), v, burst)
	}
	return l
}

// Rules are the limits.
func (l *ClaimLimits) Rules() []protocol.Limit { return l.rules }

// counts reports whether some rule may count a job of queue q.
func (l *ClaimLimits) counts(q string) bool {
	for _, r := range l.rules {
		if r.Queue == "" || r.Queue == q {
			return true
		}
	}
	return false
}

// appendSourceLimits appends sourceLimitsLayout's description and the rules.
func (c *Client) appendSourceLimits(args []any, l *ClaimLimits, now time.Time) []any {
	k := c.keys
	// the time to the microsecond: a rate's interval may be a fraction of a millisecond
	args = append(args, limitsNow(now), strconv.FormatInt(l.Lease.Milliseconds(), 10),
		k.LimitPrefix(), k.LimitsIndex(), k.Queue(""), strconv.Itoa(len(l.rules)))
	return append(args, l.args...)
}

// limitsNow is source_limits.lua's now-ms: Unix milliseconds to the
// microsecond.
func limitsNow(t time.Time) any {
	return strconv.FormatFloat(float64(t.UnixMicro())/1000, 'f', 3, 64)
}
