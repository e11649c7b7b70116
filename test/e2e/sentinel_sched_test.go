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

	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/planio"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/plan"
)

// A pool on a redis+sentinel:// URL, with its scheduler child, goes on
// through a failover: after the primary is killed and the replica
// promoted, the plan keeps firing and delayed jobs due after the kill are
// promoted and run, through the new master.
func TestSentinelFailoverPoolAndScheduler(t *testing.T) {
	t.Parallel()
	primary, _, url := sentinelGroup(t)
	ns := redistest.Namespace(t)
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	cfg := writeFile(t, dir, "pool.yml", fmt.Sprintf(`
redis: %s
namespace: %s
scheduler: true
handlers:
  "*":
    exec: "printf '%%s %%s\n' \"$RESQUE_CLASS\" \"$RESQUE_ARGS\" >> %s"
workers:
  - queues: q
    processes: 1
    concurrency: 2
`, url, ns, ran))
	c, err := rdb.New(rdb.Options{URL: url, Namespace: ns, DialTimeout: time.Second, ReadTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := planio.Add(ctx, c, plan.Plan{ID: "tick", Queue: "q", Class: "Tick", Every: time.Second}); err != nil {
		t.Fatal(err)
	}
	p := startArgs(t, "pool", "--config", cfg, "--log-format", "json", "--log-level", "warn")
	lines := func(class string) int {
		b, _ := os.ReadFile(ran)
		return strings.Count(string(b), class+" ")
	}
	redistest.Eventually(t, 0, func() bool { return lines("Tick") >= 2 }, "the plan firing through the first master")

	// delayed jobs due over the 20 s after the kill, written (and replicated) before it
	now := time.Now()
	for i := range 10 {
		if err := delayedio.EnqueueAt(ctx, c, "q", fmt.Appendf(nil, `{"class":"Later","args":[%d]}`, i), now.Add(time.Duration(2*i+1)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := c.Do(ctx, "WAIT", 1, 2000); err != nil || n.(int64) != 1 {
		t.Fatalf("WAIT = %v, %v; want the replica's acknowledgement", n, err)
	}
	ticksBefore := lines("Tick")
	primary.Stop() // SIGKILL
	redistest.Eventually(t, 0, func() bool { return lines("Later") >= 10 }, "every delayed job promoted and run through the new master")
	redistest.Eventually(t, 0, func() bool { return lines("Tick") >= ticksBefore+3 }, "the plan firing through the new master")
	p.cmd.Process.Signal(syscall.SIGQUIT)
	p.wait(t)
	if n := lines("Later"); n != 10 {
		t.Errorf("%d delayed jobs ran, want 10 (each once)", n)
	}
}
