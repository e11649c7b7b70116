package runtime

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// limitGate admits a process's jobs under its caps and rates without a
// decision in Redis for each job, while the limits have room to spare
// (docs/limits.md):
//
//   - a cap is taken as a lease of one slot for each of the process's
//     slots (limits_lease.lua), held while the cap has room for all of
//     them and no job is parked: no slot can then run more than its one
//     job, so none needs a hold of its own;
//   - a rate's starts are taken a block at a time (limits_take.lua) and
//     counted here, each block used within the rate's tolerance (1% of
//     its period), as the claim script's GCRA allows them.
//
// A slot's claim reserves what may count its job: a held lease, a start
// of the block in hand. The claim then leaves those rules out of what it
// sends (all of them: the plain claim, as with no limits). The rules it
// could not reserve (a cap without the lease, a rate with no start in
// hand) go to the claim script, which decides each job as it did before
// the gate. Once the job is known, a start it does not need goes back to
// the block, and a lease slot it holds stays busy until its end.
//
// Per-key rules are each job's own (their key is in the payload): a
// process with one is not gated. Nor are serial queues and mass pools.
type limitGate struct {
	rules []protocol.Limit
	all   *rdb.ClaimLimits
	slots int

	mu sync.Mutex
	// full: a cap's lease is held and claims may take it
	full []bool
	// tokens: a rate's starts in hand, of block gen, until until; want,
	// how many its next block asks for (doubled when a block ran out
	// before its end, halved when one ended unused)
	tokens []int
	want   []int
	gen    []uint64
	until  []time.Time
	// rest: no block is asked for before it (the last ask got none)
	rest    []time.Time
	subsets map[uint64]*rdb.ClaimLimits

	fill sync.Mutex // one block asked for at a time
}

// gateMaxRules bounds the rules a gate takes (a claim's reservation is a
// bit mask).
const gateMaxRules = 64

// rateRest is how long a process leaves a rate to the claim script after
// asking for a block and getting none: the rate is what holds jobs back,
// and the script's waiting list orders them.
const rateRest = 100 * time.Millisecond

// newLimitGate is the gate for limits l of a process with slots slots;
// nil when some rule is per-key, the process has serial queues or mass
// sources, or there are too many rules.
func newLimitGate(l *rdb.ClaimLimits, slots int, cfg Config) *limitGate {
	if l == nil || len(cfg.Serial) > 0 || len(cfg.Sources) > 0 || len(l.Rules()) > gateMaxRules {
		return nil
	}
	for _, r := range l.Rules() {
		if r.Path != "" {
			return nil
		}
	}
	n := len(l.Rules())
	g := &limitGate{rules: l.Rules(), all: l, slots: slots,
		full: make([]bool, n), tokens: make([]int, n), want: make([]int, n), gen: make([]uint64, n), until: make([]time.Time, n),
		rest: make([]time.Time, n), subsets: map[uint64]*rdb.ClaimLimits{}}
	for i := range g.want {
		g.want[i] = g.minWant()
	}
	return g
}

// minWant is the least block a rate's take asks for: two starts a slot.
func (g *limitGate) minWant() int { return max(2*g.slots, 8) }

// maxWant bounds a rate's block.
const maxWant = 1 << 14

// slotGate is a slot's part of the gate: what its claim in flight
// reserved, and what its running job holds under a lease.
type slotGate struct {
	reserved uint64   // rules (bit i: rule i) the claim in flight reserved
	gens     []uint64 // the block of each rate's start reserved
	busy     uint64   // caps whose lease slot the running job holds
	sent     *rdb.ClaimLimits
}

// applies reports whether rule r may count a job claimed from queues.
func applies(r protocol.Limit, queues []string) bool {
	return r.Queue == "" || slices.Contains(queues, r.Queue)
}

// reserve reserves what may count the job of s's next claim from queues
// and returns the limits the claim must send (nil: none).
func (g *limitGate) reserve(ctx context.Context, w *Worker, s *slot, queues []string) *rdb.ClaimLimits {
	g.unreserve(s) // a claim that found no job gives its reservation back
	now := w.cfg.Now()
	for i, r := range g.rules {
		if r.Kind == protocol.LimitRate && applies(r, queues) && g.needs(i, now) {
			g.take(ctx, w, i, now)
		}
	}
	var left uint64
	g.mu.Lock()
	sg := &s.gate
	if sg.gens == nil {
		sg.gens = make([]uint64, len(g.rules))
	}
	for i, r := range g.rules {
		if !applies(r, queues) {
			continue
		}
		bit := uint64(1) << i
		switch {
		case r.Kind == protocol.LimitCap && g.full[i]:
			sg.reserved |= bit
		case r.Kind == protocol.LimitRate && g.tokens[i] > 0 && now.Before(g.until[i]):
			g.tokens[i]--
			sg.gens[i] = g.gen[i]
			sg.reserved |= bit
		default:
			left |= bit
		}
	}
	sent := g.subsetLocked(left)
	sg.sent = sent
	g.mu.Unlock()
	return sent
}

// subsetLocked is the limits of the rules in mask, built once a mask.
func (g *limitGate) subsetLocked(mask uint64) *rdb.ClaimLimits {
	if mask == 0 {
		return nil
	}
	if mask == 1<<len(g.rules)-1 {
		return g.all
	}
	l, ok := g.subsets[mask]
	if !ok {
		l = g.all.Subset(mask)
		g.subsets[mask] = l
	}
	return l
}

// needs reports whether rate i has no start in hand and may ask for a
// block.
func (g *limitGate) needs(i int, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return (g.tokens[i] == 0 || !now.Before(g.until[i])) && !now.Before(g.rest[i])
}

// take asks Redis for a block of rate i's starts.
func (g *limitGate) take(ctx context.Context, w *Worker, i int, now time.Time) {
	g.fill.Lock()
	defer g.fill.Unlock()
	if !g.needs(i, now) {
		return // another slot's ask brought a block
	}
	r := g.rules[i]
	g.mu.Lock()
	switch {
	case g.tokens[i] == 0 && now.Before(g.until[i]):
		g.want[i] = min(2*g.want[i], maxWant) // the block ran out before its end
	case g.tokens[i] > 0:
		g.want[i] = max(g.want[i]/2, g.minWant()) // it ended with starts unused
	}
	want := g.want[i]
	g.mu.Unlock()
	callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	n, err := w.client.TakeRate(callCtx, r, want, now)
	cancel()
	g.mu.Lock()
	defer g.mu.Unlock()
	if err != nil || n == 0 {
		if err != nil {
			w.log.Warn().Err(err).Str("limit", r.Name()).Msg("cannot take a rate's starts; its jobs are decided one by one")
		}
		g.rest[i] = now.Add(rateRest)
		return
	}
	g.gen[i]++
	g.tokens[i], g.until[i] = n, now.Add(r.Period/100)
}

// claimed settles s's reservation with the job it claimed (class "" for
// a payload that does not decode) and returns the caps' holds the claim
// script took for it.
func (g *limitGate) claimed(s *slot, res rdb.ClaimResult, class string) []rdb.LimitHold {
	g.mu.Lock()
	defer g.mu.Unlock()
	sg := &s.gate
	for i, r := range g.rules {
		bit := uint64(1) << i
		if sg.reserved&bit == 0 {
			continue
		}
		_, counted := r.LimitHeld(res.Queue, class, res.Payload)
		switch {
		case r.Kind == protocol.LimitCap && counted:
			sg.busy |= bit
		case r.Kind == protocol.LimitRate && !counted:
			g.giveBackLocked(i, sg.gens[i])
		}
	}
	sg.reserved = 0
	if sg.sent == nil {
		return nil
	}
	// a payload that does not decode (class "") is still counted by its
	// queue's rules, as the claim script counted it
	hs := rdb.LimitHoldsOf(sg.sent.Rules(), res.Source, res.Queue, class, res.Payload)
	return hs
}

// giveBackLocked returns a start of rate i's block gen, unless a newer
// block replaced it.
func (g *limitGate) giveBackLocked(i int, gen uint64) {
	if g.gen[i] == gen {
		g.tokens[i]++
	}
}

// unreserve gives back what s's claim reserved when it found no job.
func (g *limitGate) unreserve(s *slot) {
	g.mu.Lock()
	defer g.mu.Unlock()
	sg := &s.gate
	for i, r := range g.rules {
		if sg.reserved&(1<<i) != 0 && r.Kind == protocol.LimitRate {
			g.giveBackLocked(i, sg.gens[i])
		}
	}
	sg.reserved = 0
}

// ended frees s's lease slots once its job's end is recorded.
func (g *limitGate) ended(s *slot) {
	g.mu.Lock()
	s.gate.busy = 0
	g.mu.Unlock()
}

// step takes, renews or shrinks each cap's lease (limitLoop, every
// limitSweepEvery). A held lease is renewed, and given back when Redis
// says so: claims stop taking it at once, and the next step gives back
// the slots no job holds (while claims cannot take it, the busy ones are
// known). One not held is taken when the cap has room for all of it.
// release gives every slot back (the worker stops).
func (g *limitGate) step(ctx context.Context, w *Worker, release bool) error {
	var caps []rdb.CapLease
	var idx []int
	g.mu.Lock()
	for i, r := range g.rules {
		if r.Kind != protocol.LimitCap {
			continue
		}
		l := rdb.CapLease{Limit: r, Mode: rdb.LeaseTake}
		switch {
		case release:
			l.Mode = rdb.LeaseShrink
			g.full[i] = false
		case g.full[i]:
			l.Mode = rdb.LeaseRenew
		}
		var idle []string
		for _, s := range w.slots {
			m := rdb.LeaseMember(s.id)
			if !release && (s.gate.busy|s.gate.reserved)&(1<<i) != 0 {
				l.Members = append(l.Members, m)
				l.Busy++
			} else {
				idle = append(idle, m)
			}
		}
		l.Members = append(l.Members, idle...)
		caps = append(caps, l)
		idx = append(idx, i)
	}
	g.mu.Unlock()
	if len(caps) == 0 {
		return nil
	}
	held, err := w.client.LeaseLimits(ctx, caps, w.cfg.Now(), w.limits.Lease)
	if err != nil {
		// claims stop taking a lease that may have run out
		g.mu.Lock()
		for _, i := range idx {
			g.full[i] = false
		}
		g.mu.Unlock()
		return err
	}
	g.mu.Lock()
	for j, i := range idx {
		g.full[i] = !release && held[j]
	}
	g.mu.Unlock()
	return nil
}

// unreserveLimits gives back what the slot's claim reserved when it found
// no job.
func (s *slot) unreserveLimits() {
	if s.w.gate != nil {
		s.w.gate.unreserve(s)
	}
}
