package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
)

// jobSpec is one enqueue a producer makes.
type jobSpec struct {
	class, key, queue string
	sleepMS           int
	in                time.Duration // Delayed: enqueued with In
	uid               string        // Unique: its unique id
	deferrable        bool          // Unique: --deferrable-by 1
	mass              string        // massStatic or massBatch: a mass-queue job of source
	source            string
}

// row names the job's ledger row: its class, or its kind of mass job.
func (j jobSpec) row() string {
	if j.mass != "" {
		return j.mass
	}
	return j.class
}

// makeJobs draws the run's enqueues: 15 % unique enqueues in groups of
// three on one uid (the second deferrable), 18 % mass-queue jobs (static
// and in batches, see makeMassJobs), the rest by weight.
func makeJobs(cfg config) ([]jobSpec, []batchPlan) {
	rng := rand.New(rand.NewPCG(cfg.Seed, 1))
	jobs, batches := makeMassJobs(cfg, rand.New(rand.NewPCG(cfg.Seed, 4)))
	groups := cfg.Jobs * 15 / 100 / 3
	for g := range groups {
		for i := range 3 {
			jobs = append(jobs, jobSpec{class: classUnique, key: fmt.Sprintf("unique-%d-%d", g, i), queue: "unique",
				sleepMS: 300 + rng.IntN(600), uid: fmt.Sprintf("u%d", g), deferrable: i == 1})
		}
	}
	type kind struct {
		class, queue string
		weight       int
		sleep        func() int
	}
	short := func() int { return rng.IntN(50) }
	kinds := []kind{
		{classOk, "jobs", 45, short},
		{classSlow, "jobs", 4, func() int { return 1000 + rng.IntN(2000) }},
		{classFail, "jobs", 6, short},
		{classRetry, "jobs", 12, short},
		{classDelayed, "later", 13, short},
		{classSerial, "serial", 10, func() int { return 10 + rng.IntN(30) }},
	}
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	for n := 0; len(jobs) < cfg.Jobs; n++ {
		x := rng.IntN(total)
		for _, k := range kinds {
			if x >= k.weight {
				x -= k.weight
				continue
			}
			j := jobSpec{class: k.class, key: fmt.Sprintf("%s-%d", strings.ToLower(k.class), n), queue: k.queue, sleepMS: k.sleep()}
			if k.class == classDelayed {
				j.in = time.Duration(1000+rng.IntN(4000)) * time.Millisecond
			}
			jobs = append(jobs, j)
			break
		}
	}
	return jobs, batches
}

// pushed is what the producer knows of one job key.
type pushed struct {
	spec      jobSpec
	confirmed bool     // an enqueue of it succeeded
	ambiguous bool     // an enqueue of it failed: its reply may have been lost
	refused   bool     // Unique: refused as a duplicate (exit 3)
	deferred  bool     // Unique: parked behind its uid's running job
	ids       []string // job ids of the confirmed enqueues
	batchID   string   // massBatch: the committed batch it is in
}

// producer pushes the jobs through the proxy: the plain ones and the mass
// ones with the Go client, the unique ones with `resque-go enqueue` (exit
// 3 = refused). An enqueue that fails is sent again until it succeeds;
// such jobs are marked ambiguous, as the first try may have been written
// (batches: see pushBatch).
type producer struct {
	t       *testing.T
	url     string
	cl      *client.Client
	jobs    []jobSpec
	batches []batchPlan
	mu      sync.Mutex
	pushed  map[string]*pushed
	retried int // enqueues (and batches) sent again after an error
	tries   int // enqueue outcomes recorded, good or bad
	mass    massRecord
}

// progress is a snapshot of what the producer has done so far: it changes
// while the producer gets anywhere.
func (p *producer) progress() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprint(p.tries, p.mass.committed, p.mass.commitResent, len(p.mass.abandoned))
}

func newProducer(t *testing.T, url string, jobs []jobSpec, batches []batchPlan) *producer {
	cl, err := client.New(client.Options{URL: url, Namespace: namespace, ReadTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	p := &producer{t: t, url: url, cl: cl, jobs: jobs, batches: batches, pushed: map[string]*pushed{}}
	for _, j := range jobs {
		p.pushed[j.key] = &pushed{spec: j}
	}
	return p
}

// run pushes every job, spread evenly over window from began.
func (p *producer) run(ctx context.Context, began time.Time, window time.Duration) {
	var plain []jobSpec
	var groups [][]jobSpec
	for _, j := range p.jobs {
		switch {
		case j.mass != "":
		case j.uid == "":
			plain = append(plain, j)
		case len(groups) > 0 && groups[len(groups)-1][0].uid == j.uid:
			groups[len(groups)-1] = append(groups[len(groups)-1], j)
		default:
			groups = append(groups, []jobSpec{j})
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for i, j := range plain {
			pace(began, window, i, len(plain))
			p.push(ctx, j)
		}
	})
	wg.Go(func() {
		// a uid's enqueues follow each other 100-600 ms apart; uids overlap
		rng := rand.New(rand.NewPCG(uint64(len(groups)), 3))
		var uids sync.WaitGroup
		for i, g := range groups {
			pace(began, window, i, len(groups))
			gaps := []time.Duration{0, time.Duration(100+rng.IntN(500)) * time.Millisecond, time.Duration(100+rng.IntN(500)) * time.Millisecond}
			uids.Go(func() {
				for n, j := range g {
					if n > 0 {
						<-time.After(gaps[n]) // the next enqueue of the uid
					}
					p.pushUnique(ctx, j)
				}
			})
		}
		uids.Wait()
	})
	wg.Go(func() { p.runMass(ctx, began, window, p.batches) })
	wg.Wait()
}

// pace waits until the i-th of n items is due.
func pace(began time.Time, window time.Duration, i, n int) {
	if d := time.Until(began.Add(window * time.Duration(i) / time.Duration(n))); d > 0 {
		<-time.After(d) // the producer's rate
	}
}

func (p *producer) push(ctx context.Context, j jobSpec) {
	for try := 0; ctx.Err() == nil; try++ {
		var info client.JobInfo
		var err error
		if j.in > 0 {
			// with an id, so every run of the job (retries included) is
			// known as one job in the ledger
			args, _ := json.Marshal([]any{j.key, j.sleepMS})
			info, err = p.cl.EnqueueRaw(ctx, j.queue, j.class, args, client.In(j.in), client.WithID())
		} else {
			info, err = p.cl.Enqueue(ctx, j.queue, j.class, j.key, j.sleepMS)
		}
		if p.record(j.key, err == nil, info.ID, false, false) {
			return
		}
		backoff(ctx, try)
	}
}

func (p *producer) pushUnique(ctx context.Context, j jobSpec) {
	args := []string{"enqueue", "--redis", p.url, "--namespace", namespace, "--queue", j.queue, "--class", j.class,
		"--args", fmt.Sprintf(`[%q,%d]`, j.key, j.sleepMS), "--unique-id", j.uid}
	if j.deferrable {
		args = append(args, "--deferrable-by", "1")
	}
	for try := 0; ctx.Err() == nil; try++ {
		code, out, errOut := runCLI(ctx, args...)
		switch code {
		case 0:
			var v struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal([]byte(out), &v)
			p.record(j.key, true, v.ID, false, strings.Contains(errOut, "deferred"))
			return
		case 3:
			p.record(j.key, false, "", true, false)
			return
		}
		p.record(j.key, false, "", false, false)
		backoff(ctx, try)
	}
}

// record notes an enqueue's outcome and reports whether it is settled.
func (p *producer) record(key string, ok bool, id string, refused, deferred bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.pushed[key]
	p.tries++
	switch {
	case ok:
		r.confirmed, r.deferred = true, deferred
		r.ids = append(r.ids, id)
	case refused:
		r.refused = true
	default:
		r.ambiguous = true
		p.retried++
	}
	return ok || refused
}

func backoff(ctx context.Context, try int) {
	d := min(100*time.Millisecond<<min(try, 5), 2*time.Second)
	select {
	case <-ctx.Done():
	case <-time.After(d): // enqueue retry backoff
	}
}
