package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/poolrun"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/pool"
)

// writeFile writes a file in dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// startPool runs `resque-go pool` on cfg in namespace ns, refreshing its
// status record every 200 ms.
func startPool(t *testing.T, ns, cfg string) *proc {
	t.Helper()
	return start(t, ns, "pool", "--config", cfg, "--status-interval", "0.2", "--log-format", "json")
}

// poolRecords reads the status records as `resque-go pool status` does
// (without starting a process per poll).
func poolRecords(t *testing.T, c *rdb.Client) []pool.Record {
	t.Helper()
	recs, warnings, err := poolrun.ReadStatus(t.Context(), c, "")
	if err != nil || len(warnings) > 0 {
		t.Fatalf("pool status: %v %v", err, warnings)
	}
	return recs
}

// poolStatus runs `resque-go pool status --json`.
func poolStatus(t *testing.T, ns string) []protocol.PoolRecord {
	t.Helper()
	code, out := runCLI(t, "pool", "status", "--json", "--redis", redisURL, "--namespace", ns)
	if code != 0 {
		t.Fatalf("pool status: exit %d: %s", code, out)
	}
	var doc struct {
		Pools []protocol.PoolRecord `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("pool status --json: %v\n%s", err, out)
	}
	return doc.Pools
}

// workerPIDs returns the registered worker ids and the pids in them.
func workerPIDs(t *testing.T, c *rdb.Client) (ids []string, pids []int) {
	t.Helper()
	ids = strs(do(t, c, "SMEMBERS", c.Keys().Workers()))
	for _, id := range ids {
		w, err := protocol.ParseWorkerID(id)
		if err != nil {
			t.Fatalf("worker id %q: %v", id, err)
		}
		if !slices.Contains(pids, w.PID) {
			pids = append(pids, w.PID)
		}
	}
	slices.Sort(pids)
	return ids, pids
}

// gone reports whether pid has exited (a zombie waiting for a reaper
// counts as gone).
func gone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z")
}

func enqueue(t *testing.T, ns, queue, args string) string {
	t.Helper()
	code, out := runCLI(t, "enqueue", "--redis", redisURL, "--namespace", ns, "--queue", queue, "--class", "Job", "--args", args)
	if code != 0 {
		t.Fatalf("enqueue: %d %s", code, out)
	}
	return strings.TrimSpace(out)
}

// kill -9 of a child: the manager starts a replacement (a new pid
// registers), prunes the dead one, and its job is recovered and run.
func TestPoolKill9ChildReplacedAndJobRecovered(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	dir := t.TempDir()
	mark, out := filepath.Join(dir, "go"), filepath.Join(dir, "ran")
	// The first run of the job sleeps; once the mark exists, a run writes
	// the payload it got.
	cfg := writeFile(t, dir, "pool.yml", fmt.Sprintf(`
handlers:
  "*":
    exec: test -e %s && cat > %s || exec sleep 30
workers:
  - queues: q
    processes: 1
`, mark, out))
	payload := enqueue(t, ns, "q", `[1,"two"]`)
	p := startPool(t, ns, cfg)

	var id string
	redistest.Eventually(t, 0, func() bool {
		ids := strs(do(t, c, "SMEMBERS", k.Workers()))
		if len(ids) == 1 && do(t, c, "GET", k.Worker(ids[0])) != nil {
			id = ids[0]
			return true
		}
		return false
	}, "job claimed")
	dead, _ := protocol.ParseWorkerID(id)
	writeFile(t, dir, "go", "")
	if err := syscall.Kill(dead.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool {
		_, pids := workerPIDs(t, c)
		return len(pids) == 1 && pids[0] != dead.PID
	}, "a replacement registered")
	redistest.Eventually(t, 0, func() bool {
		got, err := os.ReadFile(out)
		return err == nil && string(got) == payload
	}, "recovered job run")
	redistest.Eventually(t, 0, func() bool {
		n, _ := c.Int(t.Context(), k.StatProcessed())
		return n == 1
	}, "job recorded")
	if n := do(t, c, "LLEN", k.Failed()).(int64); n != 0 {
		t.Errorf("failed has %d entries", n)
	}
	if ids := strs(do(t, c, "SMEMBERS", k.Workers())); slices.Contains(ids, id) {
		t.Errorf("the dead id %s is still registered: %v", id, ids)
	}
	redistest.Eventually(t, 0, func() bool {
		pools := poolRecords(t, c)
		if len(pools) != 1 || len(pools[0].Children) != 1 {
			return false
		}
		ch := pools[0].Children[0]
		return ch.State == "running" && ch.Restarts == 1 && ch.LastExit == "signal: killed" && ch.PID != dead.PID && ch.RSSBytes > 0
	}, "status shows the restart")
	pools := poolStatus(t, ns)
	if pools[0].PID != p.cmd.Process.Pid || pools[0].Format != "resque-go" || pools[0].Config != cfg {
		t.Errorf("status record = %+v", pools[0])
	}
	code, text := runCLI(t, "pool", "status", "--redis", redisURL, "--namespace", ns)
	if code != 0 || !strings.Contains(text, "signal: killed") || !strings.Contains(text, "1/1 running") {
		t.Errorf("pool status: exit %d\n%s", code, text)
	}

	p.signal(t, syscall.SIGQUIT)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit code after QUIT = %d", code)
	}
	if pools := poolStatus(t, ns); len(pools) != 0 {
		t.Errorf("status record left after a clean exit: %+v", pools)
	}
}

// HUP with other counts and settings: the pool converges (the workers set
// shows it) and every job runs exactly once.
func TestPoolHUPConvergesWithoutLosingJobs(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	dir := t.TempDir()
	done := filepath.Join(dir, "done")
	if err := os.Mkdir(done, 0o755); err != nil {
		t.Fatal(err)
	}
	// Every run of a job leaves a file of its own with the payload.
	config := func(processes, concurrency int) string {
		return fmt.Sprintf(`
handlers:
  "*": {exec: "sleep 0.2; cat > $(mktemp %s/job.XXXXXX)"}
workers:
  q:
    processes: %d
    concurrency: %d
  other: 1
`, done, processes, concurrency)
	}
	cfg := writeFile(t, dir, "pool.yml", config(2, 1))
	const jobs = 40
	var payloads []string
	for i := range jobs {
		payloads = append(payloads, fmt.Sprintf(`{"class":"Job","args":[%d]}`, i))
		do(t, c, "RPUSH", k.Queue("q"), payloads[i])
	}
	p := startPool(t, ns, cfg)
	redistest.Eventually(t, 0, func() bool { return do(t, c, "SCARD", k.Workers()).(int64) == 3 }, "3 workers")
	_, before := workerPIDs(t, c)
	redistest.Eventually(t, 0, func() bool { return do(t, c, "LLEN", k.Queue("q")).(int64) < jobs-2 }, "jobs under way")

	// q: 3 processes of 2 slots (its settings changed: all replaced), other
	// unchanged (kept).
	writeFile(t, dir, "pool.yml", config(3, 2))
	p.signal(t, syscall.SIGHUP)
	redistest.Eventually(t, 0, func() bool {
		ids, pids := workerPIDs(t, c)
		return len(ids) == 7 && len(pids) == 4
	}, "7 workers (3x2 + 1)")
	_, after := workerPIDs(t, c)
	if kept := slices.DeleteFunc(slices.Clone(after), func(pid int) bool { return !slices.Contains(before, pid) }); len(kept) != 1 {
		t.Errorf("pids before %v, after %v: want only the unchanged child kept", before, after)
	}

	// Fewer processes, same settings: two are QUIT, one stays.
	writeFile(t, dir, "pool.yml", config(1, 2))
	p.signal(t, syscall.SIGHUP)
	redistest.Eventually(t, 0, func() bool {
		ids, pids := workerPIDs(t, c)
		return len(ids) == 3 && len(pids) == 2
	}, "3 workers (1x2 + 1)")

	redistest.Eventually(t, 0, func() bool {
		n, _ := c.Int(t.Context(), k.StatProcessed())
		return n == jobs
	}, "every job done")
	files, err := filepath.Glob(filepath.Join(done, "job.*"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	slices.Sort(got)
	want := slices.Clone(payloads)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("jobs run:\n%s\nwant each of the %d payloads once", strings.Join(got, "\n"), jobs)
	}
	for _, key := range []string{k.Failed(), k.Queue("q")} {
		if n := do(t, c, "LLEN", key).(int64); n != 0 {
			t.Errorf("%s has %d entries", key, n)
		}
	}
	p.signal(t, syscall.SIGQUIT)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit code after QUIT = %d", code)
	}
}

// QUIT: every child finishes its running job and exits, then the manager
// exits 0; nothing stays registered.
func TestPoolQuitFinishesJobs(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	dir := t.TempDir()
	started, done, release := filepath.Join(dir, "started"), filepath.Join(dir, "done"), filepath.Join(dir, "release")
	// A job runs until the test releases it: both jobs run at once, so in
	// both children, and are still running when the QUIT arrives, however
	// slowly the machine starts the children.
	cfg := writeFile(t, dir, "pool.yml", fmt.Sprintf(`
handlers:
  "*": {exec: "echo x >> %s; while [ ! -e %s ]; do sleep 0.05; done; printf '%%s\\n' \"$(cat)\" >> %s"}
workers: [{queues: q, processes: 2}]
`, started, release, done))
	a, b := enqueue(t, ns, "q", "[1]"), enqueue(t, ns, "q", "[2]")
	p := startPool(t, ns, cfg)
	redistest.Eventually(t, 0, func() bool {
		s, _ := os.ReadFile(started)
		return strings.Count(string(s), "x") == 2
	}, "both jobs started")
	_, pids := workerPIDs(t, c)
	if len(pids) != 2 {
		t.Fatalf("worker pids %v", pids)
	}
	p.signal(t, syscall.SIGQUIT)
	// the manager and both children took the signal; then the jobs end
	redistest.Eventually(t, 0, func() bool { return strings.Count(p.out.String(), "signal received") >= 3 }, "the children told to quit")
	select {
	case <-p.done:
		t.Fatalf("the manager exited before its children's jobs ended:\n%s", p.out.String())
	default:
	}
	writeFile(t, dir, "release", "")
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit code after QUIT = %d", code)
	}
	got, _ := os.ReadFile(done)
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	slices.Sort(lines)
	want := []string{a, b}
	slices.Sort(want)
	if !slices.Equal(lines, want) {
		t.Errorf("finished jobs = %q, want both", lines)
	}
	for _, pid := range pids {
		if !gone(pid) {
			t.Errorf("child %d outlived the manager", pid)
		}
	}
	if n := do(t, c, "SCARD", k.Workers()).(int64); n != 0 {
		t.Errorf("%d workers still registered", n)
	}
	if n, _ := c.Int(t.Context(), k.StatProcessed()); n != 2 {
		t.Errorf("processed = %d", n)
	}
	if n := do(t, c, "LLEN", k.Failed()).(int64); n != 0 {
		t.Errorf("failed has %d entries", n)
	}
}

// The manager killed with -9: its children notice and exit (within a few
// seconds on an idle machine), unregistering as on TERM.
func TestPoolManagerKill9ChildrenExit(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	dir := t.TempDir()
	cfg := writeFile(t, dir, "pool.yml", "workers:\n  a: 2\n  b: {processes: 1, concurrency: 3}\n")
	p := startPool(t, ns, cfg)
	redistest.Eventually(t, 0, func() bool {
		_, pids := workerPIDs(t, c)
		return len(pids) == 3
	}, "3 children registered")
	_, pids := workerPIDs(t, c)
	p.signal(t, syscall.SIGKILL)
	p.wait(t)
	killed := time.Now()
	// They take a few seconds (TERM, then --term-timeout); the bound is
	// for a busy machine, the time it took is logged.
	redistest.Eventually(t, 0, func() bool {
		return len(slices.DeleteFunc(slices.Clone(pids), gone)) == 0
	}, "the children gone after the manager's kill -9")
	t.Logf("children gone %v after the manager's kill -9", time.Since(killed).Round(10*time.Millisecond))
	redistest.Eventually(t, 0, func() bool { return do(t, c, "SCARD", c.Keys().Workers()).(int64) == 0 }, "children unregistered")
}

// Bad config files: the message names file, line and key; exit code 2.
// pool check prints what a good file resolves to.
func TestPoolConfigErrorsExitTwo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"workers:\n  - queues: a\n    concurrency: lots\n", []string{"pool.yml:3: workers[0].concurrency: want a whole number"}},
		{"workers:\n  - queues: a\n    fork: true\n    forks: 2\n", []string{`pool.yml:4: unknown key "forks" in workers[0] (did you mean "fork"?)`}},
		// a misspelt workers key used to read as a resque-pool queue "wrokers"
		{"wrokers:\n  - queues: a\n    processes: 2\n", []string{`pool.yml:1: unknown key "wrokers" (did you mean "workers"?)`}},
		{"queues:\n  default:\n    worker_count: 2\nstatsd_host: x\n", []string{`pool.yml:4: unknown key "statsd_host"`}},
		{"redis: redis://127.0.0.1:6379\nqueues:\n  default:\n    worker_count: two\n", []string{"pool.yml:4: queues.default.worker_count: want a whole number"}},
		{"foo: 1\nproduction:\n  \"foo,bar\": -2\n", []string{`pool.yml:3: production."foo,bar": -2 is out of range`}},
	} {
		cfg := writeFile(t, dir, "pool.yml", tc.text)
		for _, args := range [][]string{{"pool", "--config", cfg}, {"pool", "check", "--config", cfg}} {
			code, out := runCLI(t, append(args, "--redis", redisURL)...)
			if code != 2 {
				t.Errorf("%v on %q: exit %d, want 2\n%s", args, tc.text, code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%v: output lacks %q:\n%s", args, w, out)
				}
			}
		}
	}
	if code, out := runCLI(t, "pool", "--config", filepath.Join(dir, "missing.yml")); code != 2 || !strings.Contains(out, "missing.yml") {
		t.Errorf("missing file: exit %d\n%s", code, out)
	}
	cfg := writeFile(t, dir, "resque-pool.yml", "foo: 1\n\"foo,bar,baz\": 1\nproduction:\n  \"foo,bar,baz\": 4\n")
	code, out := runCLI(t, "pool", "check", "--config", cfg, "--environment", "production", "--exec", "*=true")
	if code != 0 || !strings.Contains(out, "resque-pool format, environment production") ||
		!strings.Contains(out, "foo,bar,baz: 4 process(es)") || !strings.Contains(out, `"queues":"foo,bar,baz","concurrency":1,`) {
		t.Errorf("pool check: exit %d\n%s", code, out)
	}
}
