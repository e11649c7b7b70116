package e2e

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
)

// The work settings of a pool file reach its real children, which run by
// them, and by nothing in the manager's environment: variables that would
// set a child's queues, slots or heartbeat interval are ignored, and so are
// bad values of settings the file leaves out (children used to inherit
// them and die of them).
func TestPoolWorkSettingsReachChildren(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	cfg := writeFile(t, t.TempDir(), "pool.yml", `
hostname: settings-host
retry_backoff: exp:2s:10m:0.2
class_retry: {MailJob: "5:fixed:30s"}
max_recoveries: 2
heartbeat_interval: 2.5
mover: false
ruby_prune: false
graceful_term: true
dirty_exit_on_term: true
handlers:
  "*": {exec: "true"}
workers:
  - queues: q,r
    concurrency: 2
`)
	cmd := exec.Command(binary, "pool", "--config", cfg, "--redis", redisURL, "--namespace", ns, "--status-interval", "0.2", "--log-format", "json")
	cmd.Env = append(os.Environ(), "QUEUE=other", "QUEUES=other", "COUNT=7", "RESQUE_CONCURRENCY=7", "WORKER_HEARTBEAT_INTERVAL=9",
		"GRACEFUL_TERM=", "RESQUE_MOVER=true", "RESQUE_TERM_TIMEOUT=bogus", "FAIL_RETRIES=0", "RESQUE_JOB_TIMEOUT=soon")
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("pool output:\n%s", out.String())
		}
	})
	var ids []string
	redistest.Eventually(t, 0, func() bool {
		ids = strs(do(t, c, "SMEMBERS", c.Keys().Workers()))
		return len(ids) == 2
	}, "the child's 2 slots registered")
	for _, id := range ids {
		w, err := protocol.ParseWorkerID(id)
		if err != nil || w.Host != "settings-host" || w.Queues != "q,r" {
			t.Errorf("worker id %q (%v): want host settings-host, queues q,r", id, err)
		}
		if iv := do(t, c, "HGET", c.Keys().WorkerIntervals(), id); iv == nil || string(iv.([]byte)) != "2.5" {
			t.Errorf("%s: registered heartbeat interval %v, want 2.5", id, iv)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("pool did not exit")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit %d", code)
	}
	if slices.ContainsFunc(strings.Split(out.String(), "\n"), func(l string) bool { return strings.Contains(l, "child died") }) {
		t.Errorf("a child died:\n%s", out.String())
	}
}
