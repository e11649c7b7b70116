package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redistest"
)

// Workers killed with -9 at random instants, again and again: in the end
// every job ran (at least once) or sits in failed as a DirtyExit; none is
// lost, none is left claimed.
func TestKill9AtRandomInstantsLosesNothing(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	out := filepath.Join(t.TempDir(), "ran")
	const n = 80
	for i := 0; i < n; i++ {
		do(t, c, "RPUSH", k.Queue("q"), fmt.Sprintf(`{"class":"J","args":[%d]}`, i))
	}
	handler := fmt.Sprintf(`*=echo "$RESQUE_ARGS" >> %q.started; sleep 0.$((RANDOM %% 3 + 1)); echo "$RESQUE_ARGS" >> %q`, out, out)
	lines := func(path string) int {
		b, _ := os.ReadFile(path)
		return strings.Count(string(b), "\n")
	}
	// A run that started and never ended was interrupted by a kill.
	interrupted := func() int { return lines(out+".started") - lines(out) }
	rng := rand.New(rand.NewPCG(1, 2))
	// Each kill lands at a random instant inside a job this worker was
	// seen to start (a job runs 100 to 300 ms), however long the worker
	// took to start. Should no kill have caught a job still running (the
	// test itself descheduled that long), more rounds follow.
	for round := 0; round < 6 || (interrupted() == 0 && round < 20); round++ {
		if do(t, c, "LLEN", k.Queue("q")).(int64) == 0 {
			break
		}
		p := start(t, ns, "work", "-q", "q", "-c", "3", "--exec", handler, "--log-level", "error")
		before := lines(out + ".started")
		redistest.Eventually(t, 0, func() bool { return lines(out+".started") > before }, "a job started")
		<-time.After(time.Duration(rng.IntN(100)) * time.Millisecond) // the instant within the job
		p.signal(t, syscall.SIGKILL)
		p.wait(t)
	}
	final := start(t, ns, "work", "-q", "q", "-c", "3", "--exec", handler, "--log-level", "error")
	// the jobs neither queued nor claimed: all of them once the last
	// worker is done
	settled := func() int {
		left := int(do(t, c, "LLEN", k.Queue("q")).(int64))
		for _, id := range strs(do(t, c, "SMEMBERS", k.Workers())) {
			left += int(do(t, c, "EXISTS", k.Worker(id)).(int64))
		}
		return n - left
	}
	waitProgress(t, "queue drained and nothing claimed", settled, n, time.Minute)
	final.signal(t, syscall.SIGQUIT)
	final.wait(t)

	ran := map[int]int{}
	if b, err := os.ReadFile(out); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var args []int
			if json.Unmarshal([]byte(line), &args) == nil && len(args) == 1 {
				ran[args[0]]++
			}
		}
	}
	inFailed := map[int]bool{}
	for _, s := range strs(do(t, c, "LRANGE", k.Failed(), 0, -1)) {
		var e struct {
			Exception string
			Payload   struct{ Args []int }
		}
		if err := json.Unmarshal([]byte(s), &e); err != nil || len(e.Payload.Args) != 1 {
			t.Fatalf("unexpected failed entry %s", s)
		}
		if !strings.Contains(e.Exception, "DirtyExit") {
			t.Errorf("failed entry is not a DirtyExit: %s", s)
		}
		inFailed[e.Payload.Args[0]] = true
	}
	for i := 0; i < n; i++ {
		if ran[i] == 0 && !inFailed[i] {
			t.Errorf("job %d neither ran nor is in failed: lost", i)
		}
	}
	started := lines(out + ".started")
	if started <= n {
		t.Errorf("no job was interrupted (%d starts for %d jobs): the kills did not test recovery", started, n)
	}
	processed, _ := c.Int(context.Background(), k.StatProcessed())
	t.Logf("%d jobs: %d starts, %d distinct completed, %d completions, %d in failed, stat:processed %d",
		n, started, len(ran), sum(ran), len(inFailed), processed)
}

func sum(m map[int]int) int {
	s := 0
	for _, v := range m {
		s += v
	}
	return s
}
