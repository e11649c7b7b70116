package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/massqueue"
)

// massLedger reads the lines "<sourceId> <batch or static> <args> <worker>"
// the handler appended, by job args.
func massLedger(t *testing.T, path string) (runs map[string]int, order []string) {
	t.Helper()
	runs = map[string]int{}
	b, _ := os.ReadFile(path)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(line); len(f) >= 3 {
			runs[f[2]]++
			order = append(order, line)
		}
	}
	return runs, order
}

// A pool with a mass-queue section (a static pool and a batch pool of 2
// units, real child processes): batches of 1,000, 100 and 10 jobs from 3
// sources, static jobs from the CLI and in the released producers' shape
// (LPUSH unassigned), a stream mapped to a missing pool; all units of one
// unit killed with -9 mid-run, then the pool manager too. Every job runs
// (twice only if it was running in a killed worker), never two active
// batches of one source, the unroutable stream runs after reallocate.
func TestMassPoolBatchesStaticAndKills(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	ctx := context.Background()
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ran")
	handler := fmt.Sprintf(`*=echo "$(printf %%s "$RESQUE_ARGS" | tr -d ' ') $RESQUE_QUEUE $RESQUE_WORKER" | awk '{print "x", $2, $1, $3}' >> %q; sleep 0.00$((RANDOM %% 9))`, ledger)
	cfg := writeFile(t, dir, "pool.yml", fmt.Sprintf(`
redis: %s
namespace: %s
handlers:
  "*":
    exec: %q
node_id: n1
pools:
  static: {general: {worker_count: 3}}
  batch:  {imports: {unit_count: 2, workers_per_unit: 2}}
mapping:
  static: {default: {default: general}, s9: {lost: nowhere}}
  batch:  {default: {default: imports}}
`, redisURL, ns, strings.TrimPrefix(handler, "*=")))

	want := map[string]bool{}
	sizes := map[string]int{"s1": 1000, "s2": 100, "s3": 10}
	for src, n := range sizes {
		for round := range 2 { // two batches per source: the second waits in the backlog
			b, err := massio.NewBatch(c, src, "import", 0)
			if err != nil {
				t.Fatal(err)
			}
			jobs := make([]massqueue.Job, n)
			for i := range jobs {
				id := fmt.Sprintf("%s-b%d-%d", src, round, i)
				jobs[i] = massqueue.Job{Class: "Import", Args: []byte(`["` + id + `"]`)}
				want[`["`+id+`"]`] = true
			}
			if err := b.Push(ctx, jobs...); err != nil {
				t.Fatal(err)
			}
			if err := b.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 50 {
		id := fmt.Sprintf("st-%d", i)
		if code, out := runCLIQuiet(t, "mass", "enqueue", "--redis", redisURL, "--namespace", ns, "--source", fmt.Sprintf("t%d", i%5),
			"--name", "mail", "--class", "Mail", "--args", `["`+id+`"]`); code != 0 {
			t.Fatalf("mass enqueue: %d %s", code, out)
		}
		want[`["`+id+`"]`] = true
	}
	// what resqu-client writes: class, sourceId, name, args, id, queue_time
	for i := range 20 {
		id := fmt.Sprintf("php-%d", i)
		do(t, c, "LPUSH", k.Unassigned(), fmt.Sprintf(`{"class":"Php","sourceId":"p1","name":"report","args":["%s"],"id":"%032d","queue_time":1700000000.5}`, id, i))
		want[`["`+id+`"]`] = true
	}
	// a stream mapped to a pool nobody serves
	for i := range 3 {
		id := fmt.Sprintf("lost-%d", i)
		if _, err := massio.EnqueueStatic(ctx, c, massqueue.Job{Class: "Lost", Source: "s9", Name: "lost", Args: []byte(`["` + id + `"]`)}); err != nil {
			t.Fatal(err)
		}
		want[`["`+id+`"]`] = true
	}

	p := startPool(t, ns, cfg)
	// kill -9 every worker of unit n1-0 once it has run some jobs
	ran := func() int { _, order := massLedger(t, ledger); return len(order) }
	waitProgress(t, "jobs running on both units", ran, 301, massStall)
	killed := 0
	for _, id := range strs(do(t, c, "SMEMBERS", k.Workers())) {
		if strings.Contains(id, "mass.imports.n1-0") {
			w, err := protocol.ParseWorkerID(id)
			if err == nil && syscall.Kill(w.PID, syscall.SIGKILL) == nil {
				killed++
			}
		}
	}
	if killed == 0 {
		t.Fatal("no worker of unit n1-0 found to kill")
	}
	// ... and the manager too, then a new one
	waitProgress(t, "more jobs ran", ran, 701, massStall)
	p.signal(t, syscall.SIGKILL)
	p.wait(t)
	p = startPool(t, ns, cfg)

	redistest.Eventually(t, 0, func() bool {
		f, err := massio.Failures(ctx, c)
		return err == nil && len(f) == 3
	}, "the unroutable stream recorded")
	if code, out := runCLIQuiet(t, "mass", "route", "--redis", redisURL, "--namespace", ns, "--source", "s9", "--name", "lost", "--pool", "general"); code != 0 {
		t.Fatalf("mass route: %d %s", code, out)
	}
	if code, out := runCLIQuiet(t, "mass", "reallocate", "--redis", redisURL, "--namespace", ns, "--all"); code != 0 {
		t.Fatalf("mass reallocate: %d %s", code, out)
	}
	waitProgress(t, "every job ran", func() int {
		runs, _ := massLedger(t, ledger)
		done := 0
		for id := range want {
			if runs[id] > 0 {
				done++
			}
		}
		return done
	}, len(want), massStall)
	p.signal(t, syscall.SIGQUIT)
	p.wait(t)

	runs, order := massLedger(t, ledger)
	dups := 0
	for id, n := range runs {
		if !want[id] {
			t.Errorf("unexpected job %s ran", id)
		}
		if n > 1 {
			dups++
		}
	}
	if dups > killed+3*2+2 { // at most the jobs held by killed workers (and the manager's children)
		t.Errorf("%d jobs ran twice; %d workers were killed", dups, killed)
	}
	// never two active batches of one source: a source's batch jobs run
	// batch after batch (the next one comes from its backlog)
	for src := range sizes {
		var seq []string
		for _, line := range order {
			f := strings.Fields(line)
			if strings.Contains(f[2], src+"-b") {
				b := f[2][strings.Index(f[2], "-b")+1 : strings.Index(f[2], "-b")+3]
				if len(seq) == 0 || seq[len(seq)-1] != b {
					seq = append(seq, b)
				}
			}
		}
		if len(seq) > 3 { // b0, b1 (a recovered b0 job may run once after b1 began)
			t.Errorf("source %s batches interleaved: %v", src, seq)
		}
	}
	// batches spread over both units (the least loaded one takes the next),
	// and within a unit the workers rotate over its batches: some worker
	// ran a job of batch A, then of B, then of A again
	units := map[string]bool{}
	interleaved := false
	last := map[string][]string{} // worker -> batches in the order it ran them
	for _, line := range order {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[1], "committed:") {
			continue
		}
		for _, u := range []string{"n1-0", "n1-1"} {
			if strings.Contains(f[3], u) {
				units[u] = true
			}
		}
		seq := last[f[3]]
		if len(seq) == 0 || seq[len(seq)-1] != f[1] {
			for _, b := range seq {
				if b == f[1] {
					interleaved = true
				}
			}
			last[f[3]] = append(seq, f[1])
		}
	}
	if len(units) != 2 {
		t.Errorf("batch jobs ran on units %v, want both", units)
	}
	if !interleaved {
		t.Error("no worker alternated between batches: units do not rotate")
	}
	t.Logf("%d jobs, %d workers killed (+ the manager), %d ran twice", len(want), killed, dups)
}

// massStall is how long the mass tests wait for a job to run before they
// call the pool stuck: a restarted manager's children start and reclaim in
// a few seconds even on a busy machine.
const massStall = 60 * time.Second

// runCLIQuiet is runCLI for commands run many times (no log noise).
func runCLIQuiet(t *testing.T, args ...string) (int, string) {
	t.Helper()
	return runCLI(t, append(args, "--log-level", "error")...)
}

// A reload that shrinks a batch pool from 2 units to 1 converges: the
// retired unit's child finishes its job and stops, its batches go back to
// committed and on to the remaining unit, and every job runs.
func TestMassPoolShrinkOnReload(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	ctx := context.Background()
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ran")
	section := func(units int) string {
		return fmt.Sprintf(`
redis: %s
namespace: %s
handlers:
  "*":
    exec: "printf '%%s\n' \"$RESQUE_ARGS\" >> %s; sleep 0.02"
node_id: n1
pools:
  batch: {imports: {unit_count: %d, workers_per_unit: 2}}
mapping:
  batch: {default: {default: imports}}
`, redisURL, ns, ledger, units)
	}
	cfg := writeFile(t, dir, "pool.yml", section(2))
	want := map[string]bool{}
	for _, src := range []string{"a", "b", "c", "d"} {
		b, err := massio.NewBatch(c, src, "import", 0)
		if err != nil {
			t.Fatal(err)
		}
		jobs := make([]massqueue.Job, 60)
		for i := range jobs {
			id := fmt.Sprintf(`["%s-%d"]`, src, i)
			jobs[i] = massqueue.Job{Class: "Import", Args: []byte(id)}
			want[id] = true
		}
		if err := b.Push(ctx, jobs...); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	p := startPool(t, ns, cfg)
	redistest.Eventually(t, 0, func() bool {
		return do(t, c, "LLEN", k.UnitQueues("imports", "n1-1")).(int64) > 0 &&
			do(t, c, "LLEN", k.UnitQueues("imports", "n1-0")).(int64) > 0
	}, "both units working")
	writeFile(t, dir, "pool.yml", section(1))
	p.signal(t, syscall.SIGHUP)
	waitProgress(t, "every job ran", func() int {
		b, _ := os.ReadFile(ledger)
		ran := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if want[line] {
				ran[line] = true
			}
		}
		return len(ran)
	}, len(want), massStall)
	if n := do(t, c, "LLEN", k.UnitQueues("imports", "n1-1")).(int64); n != 0 {
		t.Errorf("the retired unit still holds %d batches", n)
	}
	for _, id := range strs(do(t, c, "SMEMBERS", k.Workers())) {
		if strings.Contains(id, "n1-1") {
			t.Errorf("a worker of the retired unit is still registered: %s", id)
		}
	}
	p.signal(t, syscall.SIGQUIT)
	p.wait(t)
}
