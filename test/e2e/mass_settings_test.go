package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/massqueue"
)

// A real pool (a static pool of 2 slots, a batch pool of one unit with 4
// slots) with per-source settings set through the CLI: a paused source's
// static jobs and batch run nothing until `mass resume`, while the others
// drain; a source limited to 1 never has two jobs running at once, in
// either pool; every job runs exactly once.
func TestMassPoolPauseAndLimit(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	ctx := context.Background()
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ran")
	// "b <args>" when a job begins, "e <args>" when it ends
	handler := fmt.Sprintf(`a=$(printf %%s "$RESQUE_ARGS" | tr -d ' '); echo "b $a" >> %q; sleep 0.0$((RANDOM %% 5)); echo "e $a" >> %q`, ledger, ledger)
	cfg := writeFile(t, dir, "pool.yml", fmt.Sprintf(`
redis: %s
namespace: %s
handlers:
  "*":
    exec: %q
node_id: n1
pools:
  static: {general: {worker_count: 2}}
  batch:  {imports: {unit_count: 1, workers_per_unit: 4}}
mapping:
  static: {default: {default: general}}
  batch:  {default: {default: imports}}
`, redisURL, ns, handler))
	cli := func(args ...string) {
		t.Helper()
		if code, out := runCLIQuiet(t, append([]string{"mass"}, append(args, "--redis", redisURL, "--namespace", ns)...)...); code != 0 {
			t.Fatalf("mass %v: %d %s", args, code, out)
		}
	}
	cli("pause", "--source", "sp")
	cli("limit", "--source", "sl", "--concurrency", "1")
	want := map[string]bool{}
	for _, src := range []string{"sp", "sf", "sl"} {
		b, err := massio.NewBatch(c, src, "import", 0)
		if err != nil {
			t.Fatal(err)
		}
		var jobs []massqueue.Job
		for i := range 40 {
			id := fmt.Sprintf(`["%s-b-%d"]`, src, i)
			jobs = append(jobs, massqueue.Job{Class: "Import", Args: []byte(id)})
			want[id] = true
		}
		if err := b.Push(ctx, jobs...); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			id := fmt.Sprintf(`["%s-s-%d"]`, src, i)
			if _, err := massio.EnqueueStatic(ctx, c, massqueue.Job{Class: "Mail", Source: src, Name: "mail", Args: []byte(id)}); err != nil {
				t.Fatal(err)
			}
			want[id] = true
		}
	}
	read := func() (began, ended map[string]int, lines []string) {
		began, ended = map[string]int{}, map[string]int{}
		b, _ := os.ReadFile(ledger)
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			lines = append(lines, line)
			if f[0] == "b" {
				began[f[1]]++
			} else {
				ended[f[1]]++
			}
		}
		return began, ended, lines
	}
	// done counts the jobs of the sources that ended, and how many there are
	done := func(srcs ...string) (n, of int) {
		_, ended, _ := read()
		for id := range want {
			for _, src := range srcs {
				if strings.HasPrefix(id, `["`+src+"-") {
					of++
					if ended[id] > 0 {
						n++
					}
				}
			}
		}
		return n, of
	}
	drained := func(what string, srcs ...string) {
		t.Helper()
		_, of := done(srcs...)
		waitProgress(t, what, func() int { n, _ := done(srcs...); return n }, of, massStall)
	}
	p := startPool(t, ns, cfg)
	drained("the sources that are not paused drained", "sf", "sl")
	began, _, _ := read()
	for id := range began {
		if strings.HasPrefix(id, `["sp-`) {
			t.Errorf("a job of the paused source ran: %s", id)
		}
	}
	cli("resume", "--source", "sp")
	drained("the resumed source drained", "sp")
	p.signal(t, syscall.SIGQUIT)
	p.wait(t)

	began, ended, lines := read()
	for id := range want {
		if began[id] != 1 || ended[id] != 1 {
			t.Errorf("%s began %d and ended %d times, want once", id, began[id], ended[id])
		}
	}
	// the limited source: per pool, never two of its jobs between a
	// begin and its end
	for _, kind := range []string{"-b-", "-s-"} {
		running, most := 0, 0
		for _, line := range lines {
			f := strings.Fields(line)
			if !strings.HasPrefix(f[1], `["sl`+kind) {
				continue
			}
			if f[0] == "b" {
				running++
			} else {
				running--
			}
			most = max(most, running)
		}
		if most > 1 {
			t.Errorf("source sl (%s jobs) had %d jobs running at once, limit 1", kind, most)
		}
	}
}
