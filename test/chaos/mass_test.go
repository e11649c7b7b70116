package chaos

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
)

// The mass queues of the run: one node, a static pool and a batch pool of
// two units, every source and job name mapped to them (poolConfig).
const (
	massNode   = "chaos"
	staticPool = "general"
	batchPool  = "imports"
	massName   = "chaos" // the job name of every mass job and batch
)

// Kinds of mass jobs (jobSpec.mass); their ledger rows are named so too.
const (
	massStatic = "mass-static"
	massBatch  = "mass-batch"
)

// Sources of static jobs and of batches.
var (
	staticSources = []string{"s0", "s1", "s2"}
	batchSources  = []string{"b0", "b1", "b2", "b3"}
)

// oneJobSourcePrefix names the static sources with one job each
// (o<n>), beside the three busy ones.
const oneJobSourcePrefix = "o"

// batchPlan is one batch a producer builds: its source and jobs (keys of
// the run's jobSpecs), built after the source's batch before it.
type batchPlan struct {
	source string
	keys   []string
	at     float64 // when, as a fraction of the push window
}

// makeMassJobs draws the mass jobs: static ones (6 % of the enqueues), two
// thirds from three busy sources and a third from sources with one job
// each, and batch ones (12 %) in batches of 20 to 200 jobs (fewer
// at small sizes, so that there are several) from four sources. Most
// succeed; with cfg.MassRetry some ask for a retry once (Retry) and some
// fail every attempt (Fail), which sends them back through the retry path
// of their pool (else all succeed). A
// source's batches follow each other; about a third of them are pushed as
// soon as the one before is committed, while it is still worked, so that
// they wait in the source's backlog (one active batch per source per
// pool); b0's always are.
func makeMassJobs(cfg config, rng *rand.Rand) ([]jobSpec, []batchPlan) {
	class := func(retry, fail int) string {
		switch x := rng.IntN(100); {
		case !cfg.MassRetry:
		case x < fail:
			return classFail
		case x < fail+retry:
			return classRetry
		}
		return classOk
	}
	var jobs []jobSpec
	for n := range cfg.Jobs * 6 / 100 {
		// a third from sources with one job each: they join the pool's
		// ring with their job in the ring entry (protocol.StaticInline)
		source := staticSources[rng.IntN(len(staticSources))]
		if n%3 == 0 {
			source = fmt.Sprintf("%s%d", oneJobSourcePrefix, n)
		}
		jobs = append(jobs, jobSpec{class: class(12, 6), key: fmt.Sprintf("mstatic-%d", n), mass: massStatic,
			source: source, sleepMS: rng.IntN(50)})
	}
	total := cfg.Jobs * 12 / 100
	hi := min(max(total/6, 20), 200)
	var plans []batchPlan
	for n := 0; n < total; {
		size := min(20+rng.IntN(hi-20+1), total-n)
		bp := batchPlan{source: batchSources[len(plans)%len(batchSources)], at: rng.Float64() * 0.8}
		for range size {
			j := jobSpec{class: class(8, 4), key: fmt.Sprintf("mbatch-%d", n), mass: massBatch, source: bp.source,
				sleepMS: rng.IntN(50)}
			jobs = append(jobs, j)
			bp.keys = append(bp.keys, j.key)
			n++
		}
		plans = append(plans, bp)
	}
	// a source's batches in time order; some follow the one before at once
	for _, src := range batchSources {
		var is []int
		for i, bp := range plans {
			if bp.source == src {
				is = append(is, i)
			}
		}
		slices.SortStableFunc(is, func(a, b int) int { return cmp.Compare(plans[a].at, plans[b].at) })
		for k := 1; k < len(is); k++ {
			if src == batchSources[0] || rng.IntN(3) == 0 {
				plans[is[k]].at = plans[is[k-1]].at + 1e-9
			}
		}
	}
	return jobs, plans
}

// massRecord is what the producer knows of its batches.
type massRecord struct {
	committed      int      // batches committed
	commitResent   int      // commits sent again after an error (a commit is applied once: its retry says whether it was)
	lostCommitKnow int      // of those, commits whose first try was applied (its reply lost)
	abandoned      []string // ids of batches whose push failed: never committed, so their jobs must never run
	batches        []string // ids of the committed batches
}

// runMass pushes the static mass jobs (paced over the window, one source at
// random each) and the batches (one goroutine per source, each batch at
// its time or right after the source's batch before it).
func (p *producer) runMass(ctx context.Context, began time.Time, window time.Duration, plans []batchPlan) {
	var static []jobSpec
	for _, j := range p.jobs {
		if j.mass == massStatic {
			static = append(static, j)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i, j := range static {
			pace(began, window, i, len(static))
			p.pushStatic(ctx, j)
		}
	})
	bySource := map[string][]batchPlan{}
	for _, bp := range plans {
		bySource[bp.source] = append(bySource[bp.source], bp)
	}
	for _, bps := range bySource {
		sort.SliceStable(bps, func(a, b int) bool { return bps[a].at < bps[b].at })
		wg.Go(func() {
			for _, bp := range bps {
				if d := time.Until(began.Add(time.Duration(bp.at * float64(window)))); d > 0 {
					<-time.After(d) // the batch's time
				}
				p.pushBatch(ctx, bp)
			}
		})
	}
	wg.Wait()
}

// massArgs are a mass job's args, as the handler reads them.
func massArgs(j jobSpec) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`[%q,%d]`, j.key, j.sleepMS))
}

// pushStatic enqueues a static mass job (LPUSH unassigned): sent again
// after an error, the job is then ambiguous (the first try may have been
// written), as for plain enqueues.
func (p *producer) pushStatic(ctx context.Context, j jobSpec) {
	for try := 0; ctx.Err() == nil; try++ {
		id, err := p.cl.MassEnqueue(ctx, client.MassJob{Class: j.class, Source: j.source, Name: massName, Args: massArgs(j)})
		if p.record(j.key, err == nil, id, false, false) {
			return
		}
		backoff(ctx, try)
	}
}

// pushBatch builds a batch and commits it. A push that fails leaves the
// batch uncommitted for good (its list expires): the jobs go into a new
// batch, so none is pushed twice into the batch that runs. A commit that
// fails is sent again: committing is applied once (the list is renamed),
// and the retry's answer says whether the first try was (already
// committed, or committed and worked off already), so a batch's jobs are
// confirmed, never ambiguous.
func (p *producer) pushBatch(ctx context.Context, bp batchPlan) {
	specs := make([]jobSpec, len(bp.keys))
	jobs := make([]client.MassJob, len(bp.keys))
	p.mu.Lock()
	for i, key := range bp.keys {
		specs[i] = p.pushed[key].spec
		jobs[i] = client.MassJob{Class: specs[i].class, Args: massArgs(specs[i])}
	}
	p.mu.Unlock()
	for try := 0; ctx.Err() == nil; try++ {
		b, err := p.cl.NewBatch(bp.source, massName)
		if err != nil {
			p.t.Errorf("new batch: %v", err)
			return
		}
		if err := b.Push(ctx, jobs...); err != nil {
			p.mu.Lock()
			p.mass.abandoned = append(p.mass.abandoned, b.ID())
			p.retried++
			p.mu.Unlock()
			backoff(ctx, try)
			continue
		}
		for ctry := 0; ctx.Err() == nil; ctry++ {
			err := b.Commit(ctx)
			resent := ctry > 0 && (errors.Is(err, massqueue.ErrBatchCommitted) || errors.Is(err, massqueue.ErrBatchExpired))
			if err != nil && !resent {
				if errors.Is(err, massqueue.ErrBatchCommitted) || errors.Is(err, massqueue.ErrBatchExpired) {
					p.t.Errorf("batch %s: first commit refused: %v", b.ID(), err)
					return
				}
				p.mu.Lock()
				p.mass.commitResent++
				p.mu.Unlock()
				backoff(ctx, ctry)
				continue
			}
			p.mu.Lock()
			p.mass.committed++
			p.mass.batches = append(p.mass.batches, b.ID())
			if resent {
				p.mass.lostCommitKnow++
			}
			for _, j := range specs {
				r := p.pushed[j.key]
				r.confirmed = true
				r.batchID = b.ID()
			}
			p.mu.Unlock()
			return
		}
		return
	}
}

// massSampler watches the mass pools during the run: the batches it saw
// wait in a backlog (the one-active-batch path), and units it saw dead with
// batches on them.
type massSampler struct {
	mu        sync.Mutex
	backlog   map[string]bool // batch ids seen in a backlog
	deadUnits map[string]bool // "<unit>: <batch>" seen on a unit not beating
	reads     int
}

// sample reads the pools every 500 ms until ctx ends (errors while Redis
// is down are skipped).
func (m *massSampler) sample(ctx context.Context, c *rdb.Client) {
	for ctx.Err() == nil {
		m.once(ctx, c)
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond): // the sampling period
		}
	}
}

func (m *massSampler) once(ctx context.Context, c *rdb.Client) {
	st, err := massio.GetStatus(ctx, c, nil, time.Now(), 0)
	if err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	for _, bs := range st.Batch {
		for _, src := range bs.Sources {
			for _, id := range src.Backlog {
				m.backlog[id] = true
			}
		}
		for _, u := range bs.Units {
			if !u.Alive {
				for _, b := range u.Batches {
					m.deadUnits[u.Unit+": "+b.ID] = true
				}
			}
		}
	}
}

// massLeft lists the mass-queue work not done yet: static jobs waiting
// to be routed or in the pool, batches waiting for a unit, on a unit (dead
// or alive) or in a backlog, and allocation failures.
func massLeft(ctx context.Context, c *rdb.Client) []string {
	st, err := massio.GetStatus(ctx, c, nil, time.Now(), 0)
	if err != nil {
		return []string{"mass status: " + err.Error()}
	}
	var left []string
	if st.Unassigned > 0 {
		left = append(left, fmt.Sprintf("mass: %d static jobs unassigned", st.Unassigned))
	}
	if st.Committed > 0 {
		left = append(left, fmt.Sprintf("mass: %d committed batches waiting for a unit", st.Committed))
	}
	if st.Failures > 0 {
		left = append(left, fmt.Sprintf("mass: %d allocation failures", st.Failures))
	}
	for _, sp := range st.Static {
		if sp.Waiting > 0 {
			left = append(left, fmt.Sprintf("mass: static pool %s: %d jobs waiting %v", sp.Pool, sp.Waiting, sp.Sources))
		}
	}
	for _, bs := range st.Batch {
		for _, u := range bs.Units {
			for _, b := range u.Batches {
				state := "alive"
				if !u.Alive {
					state = "DEAD"
				}
				left = append(left, fmt.Sprintf("mass: batch %s (%d jobs left) on unit %s (%s)", b.ID, b.Remaining, u.Unit, state))
			}
		}
		for _, s := range bs.Sources {
			if s.Active != "" || len(s.Backlog) > 0 {
				left = append(left, fmt.Sprintf("mass: pool %s source %s: active %q on %q, backlog %v", bs.Pool, s.Source, s.Active, s.Unit, s.Backlog))
			}
		}
	}
	return left
}

// massEnd is the mass-queue state once every process stopped.
type massEnd struct {
	keysLeft      []string // committed:*, backlogs, unit queues, static FIFOs, the pool's source map, failures
	holderKeys    int      // holders hashes left (entries of finished claims: they count for nothing)
	holdersLive   []string // holders entries still current (a worker's claim sequence equals them): a leak
	uncommitted   []string // uncommitted batch lists left
	strayUncommit []string // of those, lists of batches the producer committed or never made
}

// readMassEnd reads the mass-queue keys once everything stopped. Nothing
// may remain but uncommitted lists of batches the producer abandoned and
// holders entries that are no longer current.
func readMassEnd(c *rdb.Client, prod *producer) (massEnd, error) {
	ctx := context.Background()
	k := c.Keys()
	var e massEnd
	keys := func(pattern string) ([]string, error) { return strList(c.Do(ctx, "KEYS", pattern)) }
	for _, pattern := range []string{k.Committed("*"), k.BacklogPrefix(batchPool) + "*", k.UnitQueues(batchPool, "*"),
		k.StaticSourceQueue(staticPool, "*"), k.PoolSources(batchPool), k.CommittedList(), k.Unassigned(),
		k.AllocationFailures(), k.AllocationReasons(), k.MassQuarantine()} {
		ks, err := keys(pattern)
		if err != nil {
			return e, err
		}
		e.keysLeft = append(e.keysLeft, ks...)
	}
	seqs, err := c.Do(ctx, "HGETALL", k.ClaimSeqs())
	if err != nil {
		return e, err
	}
	current := map[string]string{}
	if xs, ok := seqs.([]any); ok {
		for i := 0; i+1 < len(xs); i += 2 {
			current[string(xs[i].([]byte))] = string(xs[i+1].([]byte))
		}
	}
	for _, pattern := range []string{k.StaticHoldersPrefix(staticPool) + "*", k.BatchHoldersPrefix() + "*"} {
		hs, err := keys(pattern)
		if err != nil {
			return e, err
		}
		for _, h := range hs {
			e.holderKeys++
			v, err := c.Do(ctx, "HGETALL", h)
			if err != nil {
				return e, err
			}
			xs, _ := v.([]any)
			for i := 0; i+1 < len(xs); i += 2 {
				wid, seq := string(xs[i].([]byte)), string(xs[i+1].([]byte))
				if current[wid] == seq {
					e.holdersLive = append(e.holdersLive, h+" "+wid)
				}
			}
		}
	}
	uc, err := keys(k.Uncommitted("*"))
	if err != nil {
		return e, err
	}
	prod.mu.Lock()
	abandoned := map[string]bool{}
	for _, id := range prod.mass.abandoned {
		abandoned[id] = true
	}
	prod.mu.Unlock()
	prefix := strings.TrimSuffix(k.Uncommitted("x"), "x")
	for _, key := range uc {
		e.uncommitted = append(e.uncommitted, key)
		if !abandoned[strings.TrimPrefix(key, prefix)] {
			e.strayUncommit = append(e.strayUncommit, key)
		}
	}
	return e, nil
}

// readStranded reads the queues named after a mass list (queue:static:queue:<pool>,
// queue:committed:<batch id>): no worker serves them, so a job there is
// stranded. A mass job's retry with a backoff waits in the delayed queue,
// whose mover pushes it to queue:<the job's queue name>, and a mass job's
// queue name is its list's. Job key -> queue.
func readStranded(t *testing.T, c *rdb.Client) map[string]string {
	ctx := context.Background()
	k := c.Keys()
	out := map[string]string{}
	known, err := strList(c.Do(ctx, "SMEMBERS", k.Queues()))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range known {
		if !protocol.IsMassQueueName(q) {
			continue
		}
		items, err := strList(c.Do(ctx, "LRANGE", k.Queue(q), 0, -1))
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			var p struct {
				Args []json.RawMessage `json:"args"`
			}
			var key string
			if json.Unmarshal([]byte(it), &p) != nil || len(p.Args) == 0 || json.Unmarshal(p.Args[0], &key) != nil {
				key = "unreadable payload " + it
			}
			out[key] = k.Queue(q)
		}
	}
	return out
}
