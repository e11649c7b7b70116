package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/resque-go/resque-go/internal/redistest"
)

// kill -9 of the worker running a unique job: the recovered job is queued
// again under its uid (a duplicate is still refused), runs, and then the
// uid is free; the job parked meanwhile is released and runs too.
func TestUniqueKill9ThenRecovered(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	out := filepath.Join(t.TempDir(), "ran")
	enqueue := func(args ...string) (int, string) {
		return runCLI(t, append([]string{"enqueue", "--redis", redisURL, "--namespace", ns, "--queue", "q", "--class", "Job"}, args...)...)
	}
	if code, msg := enqueue("--args", "[1]", "--unique-id", "U"); code != 0 {
		t.Fatalf("enqueue: %d %s", code, msg)
	}
	if code, msg := enqueue("--args", "[2]", "--unique-id", "U"); code != 3 || !strings.Contains(msg, "unique id is taken") {
		t.Fatalf("enqueue of a queued uid: exit %d %q, want 3", code, msg)
	}
	a := start(t, ns, "work", "-q", "q", "--exec", "*=sleep 60", "--log-format", "json")
	redistest.Eventually(t, 0, func() bool {
		v, _ := do(t, c, "GET", k.UniqueState("U")).([]byte)
		return string(v) == "running"
	}, "the unique job running")
	code, msg := enqueue("--args", "[3]", "--unique-id", "U", "--deferrable-by", "0")
	if code != 0 || !strings.Contains(msg, "deferred") {
		t.Fatalf("enqueue while running: exit %d %q, want 0 and deferred", code, msg)
	}
	a.signal(t, syscall.SIGKILL)
	a.wait(t)
	b := start(t, ns, "work", "-q", "q", "--exec", "*=cat >> "+out+"; echo >> "+out, "--log-format", "json")
	redistest.Eventually(t, 0, func() bool {
		got, _ := os.ReadFile(out)
		return strings.Count(string(got), "\n") == 2
	}, "the recovered job and the released one ran")
	got, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if !strings.Contains(lines[0], `"args":[1]`) || !strings.Contains(lines[1], `"args":[3]`) {
		t.Errorf("ran %q, want the recovered [1] then the released [3]", lines)
	}
	redistest.Eventually(t, 0, func() bool { return do(t, c, "EXISTS", k.UniqueState("U")).(int64) == 0 }, "the uid free")
	if code, msg := enqueue("--args", "[4]", "--unique-id", "U"); code != 0 {
		t.Errorf("enqueue after recovery: exit %d %s", code, msg)
	}
	code, msg = runCLI(t, "unique", "show", "--redis", redisURL, "--namespace", ns, "--json", "U")
	if code != 0 || !strings.Contains(msg, `"uid": "U"`) {
		t.Errorf("unique show: %d %s", code, msg)
	}
	b.signal(t, syscall.SIGQUIT)
	b.wait(t)
	if n := do(t, c, "LLEN", k.Failed()).(int64); n != 0 {
		t.Errorf("failed has %d entries", n)
	}
}
