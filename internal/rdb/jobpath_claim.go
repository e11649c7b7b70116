package rdb

import (
	"strconv"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// claimLayout is the fixed part of the core claim's layout
// (scripts/jobpath/claim.lua); the sources' keys and arguments follow, as
// its header says (buildClaimKeysArgs lays them out).
var claimLayout = jobpathLayout{Module: "claim",
	Keys: []string{"<ns>:pause-all-workers", "<ns>:worker:<id>", "<ns>:claim-sequences", "<ns>:attempts-index"},
	Args: []string{"sources", "now", "status-prefix", "worker-id", "attempts-prefix"},
}

// claimKeysArgs lays out jobpath/claim.lua's keys and arguments. What does not
// change from job to job (the keys, each source's parts, the time's
// formats within a second) is built once and kept (claimConsts,
// claimSource, claimTimeAt): laying them out anew for every job took a
// quarter of a busy process's CPU. With a.Cache, a slot's next claim with
// the same arguments reuses the whole layout.
func (c *Client) claimKeysArgs(a ClaimArgs) (keys, args []any) {
	if a.Cache == nil {
		return c.buildClaimKeysArgs(a)
	}
	if keys, args, ok := a.Cache.get(a); ok {
		if a.Limits != nil {
			// the limits' time is to the microsecond: set in place (the
			// slot's claims follow one another)
			if i := limitsNowIndex(args, claimSources(args)); i >= 0 {
				args[i] = limitsNow(a.Now)
			}
		}
		return keys, args
	}
	keys, args = c.buildClaimKeysArgs(a)
	a.Cache.put(a, keys, args)
	return keys, args
}

// buildClaimKeysArgs is claimKeysArgs without the slot's cache.
func (c *Client) buildClaimKeysArgs(a ClaimArgs) (keys, args []any) {
	srcs := a.sources()
	n := len(srcs)
	k := c.claimK
	ev := c.events
	keys = make([]any, 0, 5+2*n)
	keys = append(keys, k.pause, c.keys.Worker(a.WorkerID), k.seqs, k.attemptsIndex)
	parts := make([]*claimSourceParts, n)
	for i, s := range srcs {
		parts[i] = c.claimSource(s)
		keys = append(keys, parts[i].key)
	}
	sources := any(strconv.Itoa(n))
	if ev != nil {
		// events on: the stream after the lists, a negative count says so
		keys = append(keys, ev.stream)
		sources = strconv.Itoa(-n)
	}
	for _, p := range parts {
		if p.key2 != nil {
			keys = append(keys, p.key2) // a plain queue has none
		}
	}
	t := c.claimTimeAt(a.Now)
	args = make([]any, 0, 11+3*n+len(sourceStaticRingLayout.Args))
	args = append(args, sources, t.now, k.statusPrefix, a.WorkerID, k.attemptsPrefix)
	for _, p := range parts {
		if p.ring != nil {
			args = append(args, t.ringHeadV)
		} else {
			args = append(args, `{"queue":`+p.queueJSON+t.ringHead)
		}
	}
	for _, p := range parts {
		args = append(args, p.tail)
	}
	first := 9 + 3*n // where the first ring's description starts
	if ev != nil {
		first += 3 // after the events' section
	}
	d := first
	for _, p := range parts {
		if p.ring != nil {
			d += len(p.ring)
		}
	}
	var limitsFlag any // the limits' description follows the rings'
	if a.Limits != nil {
		limitsFlag = "L" + strconv.Itoa(d)
	}
	d = first
	for i, p := range parts {
		switch {
		case p.ring != nil:
			// the ring's description follows the fixed arguments
			args = append(args, "r"+strconv.Itoa(d))
			d += len(p.ring)
		case limitsFlag != nil && p.flag == any("") && srcs[i].List == "" && a.Limits.counts(srcs[i].Queue):
			args = append(args, limitsFlag)
		default:
			args = append(args, p.flag)
		}
	}
	ttl := a.LockTTL
	if ttl <= 0 {
		ttl = DefaultLockTTL
	}
	args = append(args, a.Token, ttl.Milliseconds(), k.uniquePrefix)
	if ev != nil {
		args = append(args, ev.maxLen, ev.maxAge, ev.queuePrefix)
	}
	for _, p := range parts {
		args = append(args, p.ring...)
	}
	if a.Limits != nil {
		args = c.appendSourceLimits(args, a.Limits, a.Now)
	}
	return keys, args
}

// claimKeys are the keys and prefixes every claim sends (as any: a string
// put in an interface is copied to the heap each time).
type claimKeys struct {
	pause, seqs, attemptsIndex, statusPrefix, attemptsPrefix, uniquePrefix any
	statProcessed                                                          any // finish_claim.lua's short and compact forms
}

// newClaimKeys builds a client's claimKeys (New keeps them).
func newClaimKeys(k protocol.Keys) *claimKeys {
	return &claimKeys{pause: k.PauseAll(), seqs: k.ClaimSeqs(), attemptsIndex: k.AttemptsIndex(),
		statusPrefix: k.JobStatusPrefix(), attemptsPrefix: k.AttemptsPrefix(), uniquePrefix: k.UniquePrefix(),
		statProcessed: k.StatProcessed()}
}

// claimSourceParts is what a claim sends for one source, but for the time.
type claimSourceParts struct {
	key, key2 any    // the source's list (or ring) and its second key
	queueJSON string // the record's queue, as JSON (not for a ring)
	tail      any    // the record's end ("" for a ring)
	flag      any    // "1" serial, "" plain (a ring's is built per call)
	ring      []any  // a ring's description; nil for a list
}

// claimSource returns s's parts, built on the first claim from s.
func (c *Client) claimSource(s protocol.Source) *claimSourceParts {
	if p, ok := c.claimSrcs.Load(s); ok {
		return p.(*claimSourceParts)
	}
	p := &claimSourceParts{key: c.keys.SourceKey(s), tail: "", flag: ""}
	switch {
	case s.Serial && s.Ring == "":
		p.key2 = c.keys.SerialLock(s.Queue)
	case s.Ring == protocol.RingStatic:
		p.key2 = c.keys.StaticState(s.Pool)
	case s.Ring == protocol.RingUnit:
		p.key2 = c.keys.UnitTurns(s.Pool, s.Unit)
	}
	if s.Ring != "" {
		p.ring = c.ringArgs(s)
	} else {
		p.queueJSON = string(protocol.MarshalString(s.Queue))
		p.tail = protocol.RecordSourceSuffix(s) + "}"
		if s.Serial {
			p.flag = "1"
		}
	}
	// sources are few (a process's queues, its pool, its unit); a worker
	// following a glob adds the queues it finds, and no more
	c.claimSrcs.Store(s, p)
	return p
}

// claimTime is what a claim sends of its time, which changes once a
// second (run_at has second precision).
type claimTime struct {
	unix      int64
	now       any
	ringHead  string
	ringHeadV any // ringHead, boxed once
}

// claimTimeAt returns t's formats, formatted once a second.
func (c *Client) claimTimeAt(t time.Time) *claimTime {
	u := t.Unix()
	if ct := c.claimT.Load(); ct != nil && ct.unix == u {
		return ct
	}
	runAt := protocol.FormatRunAt(t)
	head := ringRecordHead(runAt)
	ct := &claimTime{unix: u, now: strconv.FormatInt(u, 10), ringHead: head, ringHeadV: head}
	c.claimT.Store(ct)
	return ct
}

// claimSources is how many sources a claim laid out by claimKeysArgs has
// (its first argument, negative while events are on).
func claimSources(ca []any) int {
	n, _ := strconv.Atoi(ca[0].(string))
	return max(n, -n)
}
