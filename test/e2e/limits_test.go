package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
)

// A cap of 2 on a class, worked by 3 processes of 8 slots: at most 2 of
// its jobs run at once (counted inside the handler); a holder killed with
// -9 frees its slot within its lease (3 heartbeats of 1 s) and the rest
// of the jobs run.
func TestLimitsCapAcrossProcessesAndKill9(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	const n = 24
	for i := range n {
		do(t, c, "RPUSH", k.Queue("q"), fmt.Sprintf(`{"class":"Capped","args":[%d]}`, i))
	}
	running, counts, done, handler := cappedHandler(t, "0.3")
	args := []string{"work", "-q", "q", "-c", "8", "--exec", handler, "--limit", "Capped=2", "--heartbeat-interval", "1", "--log-level", "error"}
	var procs []*proc
	for range 3 {
		procs = append(procs, start(t, ns, args...))
	}
	waitProgress(t, "jobs done", func() int { return fileLines(done) }, 6, time.Minute)
	// kill -9 a process while it holds a slot
	holders := k.LimitBase("class:Capped") + protocol.LimitHoldersSuffix
	victim := -1
	redistest.Eventually(t, 0, func() bool {
		for _, m := range strs(do(t, c, "ZRANGE", holders, 0, -1)) {
			for i, p := range procs {
				pid := ":" + strconv.Itoa(p.cmd.Process.Pid)
				if strings.Contains(m, pid+"-") || strings.Contains(m, pid+":") {
					victim = i
					return true
				}
			}
		}
		return false
	}, "a holder")
	procs[victim].signal(t, syscall.SIGKILL)
	procs[victim].wait(t)
	clearMarks(running) // the killed job's mark stays: not counted again
	waitProgress(t, "every job but the killed one done", func() int { return fileLines(done) }, n-1, time.Minute)
	most := mostAtOnce(counts)
	if most > 2 {
		t.Errorf("%d jobs of a class capped at 2 ran at once", most)
	}
	t.Logf("%d jobs done, at most %d at once", fileLines(done), most)
}

// A pool child killed -9 while it holds a cap's slot: its job's recovery
// (the manager's observer, or a sibling's pruner, whichever comes first:
// both now recover with the file's limits and events) frees the slot at
// once, so the parked job of that class runs before the killed hold's
// lease (3 heartbeats of 60 s) would have ended; the killed job is
// requeued with its event, then runs.
func TestPoolKill9CapHolderFreesSlot(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	dir := t.TempDir()
	mark, out := filepath.Join(dir, "go"), filepath.Join(dir, "ran")
	cfg := writeFile(t, dir, "pool.yml", fmt.Sprintf(`
events: true
heartbeat_interval: 60
limits:
  Capped: 1
handlers:
  "*":
    exec: test -e %s && cat >> %s || exec sleep 30
workers:
  - queues: q
    processes: 1
    concurrency: 2
`, mark, out))
	for _, id := range []string{"j1", "j2"} {
		do(t, c, "RPUSH", k.Queue("q"), `{"class":"Capped","args":[],"id":"`+id+`"}`)
		do(t, c, "SADD", k.Queues(), "q")
	}
	startPool(t, ns, cfg)
	holders, parked := k.LimitBase("class:Capped")+protocol.LimitHoldersSuffix, k.LimitBase("class:Capped")+protocol.LimitParkedSuffix
	var hold []string
	redistest.Eventually(t, 0, func() bool {
		hold = strs(do(t, c, "ZRANGE", holders, 0, -1, "WITHSCORES"))
		return len(hold) == 2 && do(t, c, "LLEN", parked).(int64) == 1
	}, "one job holding the cap, the other parked")
	lease, err := strconv.ParseFloat(hold[1], 64)
	if err != nil {
		t.Fatalf("lease %q: %v", hold[1], err)
	}
	// a hold is <worker id>:<claim sequence>
	dead, err := protocol.ParseWorkerID(hold[0][:strings.LastIndex(hold[0], ":")])
	if err != nil {
		t.Fatalf("holder %q: %v", hold[0], err)
	}
	writeFile(t, dir, "go", "")
	if err := syscall.Kill(dead.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool {
		b, _ := os.ReadFile(out) // the payloads, one after the other
		return strings.Count(string(b), `"id":"j`) == 2
	}, "both jobs run")
	now := strs(do(t, c, "TIME"))
	secs, _ := strconv.ParseInt(now[0], 10, 64)
	if ms := float64(secs * 1000); ms >= lease {
		t.Errorf("the jobs ran at %.0f, after the killed hold's lease ended (%.0f)", ms, lease)
	}
	evs, err := c.JobEvents(t.Context(), "j1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ev := range evs {
		names = append(names, ev.Fields["event"])
	}
	if !slices.Contains(names, protocol.EventRequeued) {
		t.Errorf("events of the killed job: %v, want a requeued", names)
	}
}

// A cap of 16 worked by 2 processes of 8 slots: each holds a lease of
// its 8 slots (no job takes a hold of its own). One killed with -9 while
// its jobs run: its lease members go within the lease (3 heartbeats of
// 1 s, or at once for a slot whose job the survivor's recovery takes
// back), a third process then takes its lease, and every job runs, at
// most 16 at once.
func TestLimitsLeaseHolderKill9(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	running, counts, done, handler := cappedHandler(t, "0.2")
	args := []string{"work", "-q", "q", "-c", "8", "--exec", handler, "--limit", "Capped=16", "--heartbeat-interval", "1", "--log-level", "error"}
	holders := k.LimitBase("class:Capped") + protocol.LimitHoldersSuffix
	members := func() []string { return strs(do(t, c, "ZRANGE", holders, 0, -1)) }
	a := start(t, ns, args...)
	start(t, ns, args...)
	redistest.Eventually(t, 0, func() bool { return len(members()) == 16 }, "both processes' leases")
	const n = 120
	for i := range n {
		do(t, c, "RPUSH", k.Queue("q"), fmt.Sprintf(`{"class":"Capped","args":[%d]}`, i))
	}
	waitProgress(t, "jobs done", func() int { return fileLines(done) }, 10, time.Minute)
	for _, m := range members() {
		if !strings.HasSuffix(m, ":lease") {
			t.Errorf("a job's own hold under the leases: %s", m)
		}
	}
	a.signal(t, syscall.SIGKILL)
	a.wait(t)
	clearMarks(running) // the killed jobs' marks stay: not counted again
	dead := ":" + strconv.Itoa(a.cmd.Process.Pid) + "-"
	redistest.Eventually(t, 0, func() bool {
		for _, m := range members() {
			if strings.Contains(m, dead) {
				return false
			}
		}
		return true
	}, "the killed process's lease gone")
	c3 := start(t, ns, args...)
	third := ":" + strconv.Itoa(c3.cmd.Process.Pid) + "-"
	redistest.Eventually(t, 0, func() bool {
		got := 0
		for _, m := range members() {
			if strings.Contains(m, third) && strings.HasSuffix(m, ":lease") {
				got++
			}
		}
		return got == 8
	}, "the third process's lease")
	// every job ran; the killed ones again (their recovery requeued them)
	waitProgress(t, "every job done", func() int {
		b, _ := os.ReadFile(done)
		seen := map[string]bool{}
		for _, l := range strings.Fields(string(b)) {
			seen[l] = true
		}
		return len(seen)
	}, n, time.Minute)
	most := mostAtOnce(counts)
	if most > 16 {
		t.Errorf("%d jobs of a class capped at 16 ran at once", most)
	}
	t.Logf("%d jobs done, at most %d at once", fileLines(done), most)
}

// clearMarks removes the marks of running jobs a handler left in dir.
func clearMarks(dir string) {
	marks, _ := os.ReadDir(dir)
	for _, m := range marks {
		_ = os.Remove(filepath.Join(dir, m.Name()))
	}
}

// mostAtOnce is the largest count a handler wrote to path, one a line.
func mostAtOnce(path string) int {
	b, _ := os.ReadFile(path)
	most := 0
	for _, s := range strings.Fields(string(b)) {
		v, _ := strconv.Atoi(s)
		most = max(most, v)
	}
	return most
}

// cappedHandler is an exec handler for class Capped that counts the jobs
// running at once: each job puts its mark in running, appends how many
// marks there are to counts, sleeps for secs, removes its mark and
// appends its args to done.
func cappedHandler(t *testing.T, secs string) (running, counts, done, handler string) {
	t.Helper()
	dir := t.TempDir()
	running, counts, done = filepath.Join(dir, "running"), filepath.Join(dir, "counts"), filepath.Join(dir, "done")
	if err := os.Mkdir(running, 0o755); err != nil {
		t.Fatal(err)
	}
	handler = fmt.Sprintf(`Capped=d=%s/$(echo "$RESQUE_ARGS" | tr -dc 0-9); mkdir "$d"; ls %s | wc -l >> %s; sleep %s; rmdir "$d"; echo "$RESQUE_ARGS" >> %s`,
		running, running, counts, secs, done)
	return running, counts, done, handler
}

// fileLines counts the lines of the file at path (0 for none).
func fileLines(path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
}
