package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/internal/redistest"
)

// resque-go process quiet, resume and stop, each run as a process of its
// own, act on one of two worker processes: the quieted one finishes its
// running job and takes no other while the second one drains the queue;
// resumed, it takes jobs again; asked to stop, it finishes its job and
// exits 0.
func TestProcessQuietResumeStop(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(t.TempDir(), "release")
	// A's jobs run until the gate file exists
	a := start(t, ns, "work", "-q", "q", "--exec", fmt.Sprintf("*=while [ ! -e %s ]; do sleep 0.05; done", gate))
	target := host + ":" + strconv.Itoa(a.cmd.Process.Pid)
	aID := target + ":q"
	processed := func(id string) int {
		n, _ := strconv.Atoi(string(bytesOf(do(t, c, "GET", k.StatProcessedWorker(id)))))
		return n
	}
	cli := func(args ...string) (int, string) {
		return runCLI(t, append(args, "--redis", redisURL, "--namespace", ns)...)
	}
	push := func(n int) {
		for i := 0; i < n; i++ {
			do(t, c, "RPUSH", k.Queue("q"), `{"class":"Job","args":[]}`)
		}
	}

	push(1)
	redistest.Eventually(t, 0, func() bool { return do(t, c, "GET", k.Worker(aID)) != nil }, "A runs the first job")
	if code, msg := cli("process", "quiet", target); code != 0 || !strings.Contains(msg, "quiet requested for "+target) {
		t.Fatalf("process quiet: exit %d: %s", code, msg)
	}
	redistest.Eventually(t, 0, func() bool { return strings.Contains(a.out.String(), "worker paused") }, "A paused")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool { return processed(aID) == 1 }, "A's running job finished")

	// queued while A is quiet: B takes every one
	push(5)
	b := start(t, ns, "work", "-q", "q", "--exec", "*=true")
	bTarget := host + ":" + strconv.Itoa(b.cmd.Process.Pid)
	redistest.Eventually(t, 0, func() bool { return processed(bTarget+":q") == 5 }, "B ran the five jobs")
	if n := processed(aID); n != 1 {
		t.Errorf("quiet A ran %d jobs, want only the one it was running", n)
	}
	if !contains(strs(do(t, c, "SMEMBERS", k.Workers())), aID) {
		t.Error("quiet A is no longer registered")
	}
	redistest.Eventually(t, 0, func() bool {
		code, out := cli("process", "list", "--json")
		var doc struct {
			Items []struct{ Process, State string }
		}
		if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
			return false
		}
		for _, it := range doc.Items {
			if it.Process == target {
				return it.State == "quiet"
			}
		}
		return false
	}, "process list shows A quiet")

	// B stops; A, resumed, takes the next job; asked to stop, it finishes it and exits 0
	if code, msg := cli("process", "stop", bTarget); code != 0 {
		t.Fatalf("process stop B: exit %d: %s", code, msg)
	}
	if code := b.wait(t); code != 0 {
		t.Errorf("B exited %d after a stop request, want 0", code)
	}
	if code, msg := cli("process", "resume", aID); code != 0 {
		t.Fatalf("process resume: exit %d: %s", code, msg)
	}
	redistest.Eventually(t, 0, func() bool { return strings.Contains(a.out.String(), "worker resumed") }, "A resumed")
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	push(1)
	redistest.Eventually(t, 0, func() bool { return do(t, c, "GET", k.Worker(aID)) != nil }, "resumed A runs a job")
	if code, msg := cli("process", "stop", target); code != 0 {
		t.Fatalf("process stop A: exit %d: %s", code, msg)
	}
	redistest.Eventually(t, 0, func() bool { return strings.Count(a.out.String(), "process request received") == 3 }, "A got the stop request")
	select {
	case <-a.done:
		t.Fatalf("A exited before its running job finished:\n%s", a.out.String())
	default:
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := a.wait(t); code != 0 {
		t.Errorf("A exited %d after a stop request, want 0", code)
	}
	if n := do(t, c, "LLEN", k.Queue("q")).(int64) + do(t, c, "LLEN", k.Failed()).(int64); n != 0 {
		t.Errorf("%d jobs left queued or failed, want none", n)
	}
	if ids := strs(do(t, c, "SMEMBERS", k.Workers())); len(ids) != 0 {
		t.Errorf("workers still registered after both stopped: %q", ids)
	}
}

// A request to a Ruby worker's process, an unknown process or a malformed
// name is refused: exit 1 for the first two (saying why), 2 for the last;
// nothing is stored.
func TestProcessRequestRefused(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	ruby := "rubyhost:77:mail"
	do(t, c, "SADD", k.Workers(), ruby)
	do(t, c, "SET", k.WorkerStarted(ruby), "2026-11-21 21:23:41 +0000")
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"process", "stop", "rubyhost:77"}, 1, "rubyhost:77 is not a resque-go process"},
		{[]string{"process", "quiet", ruby}, 1, "rubyhost:77 is not a resque-go process"},
		{[]string{"process", "resume", "otherhost:5"}, 1, "no worker of process otherhost:5 is registered"},
		{[]string{"process", "quiet"}, 2, "needs a PROCESS"},
		{[]string{"process", "quiet", "a:1", "b:2"}, 2, "takes one PROCESS"},
		{[]string{"process", "stop", "nohost"}, 2, "want host:pid"},
	} {
		code, msg := runCLI(t, append(tc.args, "--redis", redisURL, "--namespace", ns)...)
		if code != tc.code || !strings.Contains(msg, tc.msg) || strings.Count(strings.TrimSpace(msg), "\n") > 1 {
			t.Errorf("%v: exit %d: %s; want exit %d saying %q", tc.args, code, msg, tc.code, tc.msg)
		}
	}
	if n := do(t, c, "EXISTS", k.ProcessControlKey("rubyhost", 77)).(int64); n != 0 {
		t.Error("a request to a Ruby worker's process was stored")
	}
}

func bytesOf(v any) []byte {
	b, _ := v.([]byte)
	return b
}

// A pool child asked to stop exits as a recycled one does: the manager
// starts a fresh process at once and counts a recycle, not a crash. A
// request to the manager itself is refused.
func TestProcessStopPoolChild(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, t.TempDir(), "pool.yml", "handlers:\n  \"*\": {exec: \"true\"}\nworkers: [{queues: q, processes: 1}]\n")
	p := startPool(t, ns, cfg)
	var first int
	redistest.Eventually(t, 0, func() bool {
		_, pids := workerPIDs(t, c)
		if len(pids) == 1 {
			first = pids[0]
		}
		return first != 0 && len(poolStatus(t, ns)) == 1
	}, "the child registered")
	manager := host + ":" + strconv.Itoa(p.cmd.Process.Pid)
	if code, msg := runCLI(t, "process", "quiet", manager, "--redis", redisURL, "--namespace", ns); code != 1 || !strings.Contains(msg, "is a resque-go pool manager") {
		t.Errorf("quiet the manager: exit %d: %s", code, msg)
	}
	if code, msg := runCLI(t, "process", "stop", host+":"+strconv.Itoa(first), "--redis", redisURL, "--namespace", ns); code != 0 {
		t.Fatalf("process stop: exit %d: %s", code, msg)
	}
	redistest.Eventually(t, 0, func() bool {
		_, pids := workerPIDs(t, c)
		return len(pids) == 1 && pids[0] != first && gone(first)
	}, "a fresh child replaced the stopped one")
	redistest.Eventually(t, 0, func() bool {
		ch := poolStatus(t, ns)[0].Children[0]
		return ch.Recycles == 1 && ch.Restarts == 0 && strings.Contains(ch.LastExit, "stop_requested")
	}, "pool status counts a recycle (stop_requested), not a restart")
}
