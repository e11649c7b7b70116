package e2e

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/resque-go/resque-go/internal/redistest"
)

// The work settings a pool file gives reach its real children, which
// accept them: the child's command line has each flag, and the heartbeat
// interval it registers is the file's.
func TestPoolWorkSettingsReachChildren(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	cfg := writeFile(t, t.TempDir(), "pool.yml", `
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
  - queues: q
`)
	p := startPool(t, ns, cfg)
	var id string
	eventually(t, "the child registered", func() bool {
		ids := strs(do(t, c, "SMEMBERS", c.Keys().Workers()))
		if len(ids) == 1 {
			id = ids[0]
		}
		return id != ""
	})
	_, pids := workerPIDs(t, c)
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pids[0]))
	if err != nil {
		t.Fatal(err)
	}
	args := " " + strings.ReplaceAll(string(cmdline), "\x00", " ")
	for _, want := range []string{"--retry-backoff exp:2s:10m:0.2", "--class-retry MailJob=5:fixed:30s", "--max-recoveries 2",
		"--heartbeat-interval 2.5", "--mover=false", "--ruby-prune=false", "--graceful-term=true", "--dirty-exit-on-term=true"} {
		if !strings.Contains(args, " "+want+" ") {
			t.Errorf("child command line lacks %q:%s", want, args)
		}
	}
	if iv := do(t, c, "HGET", c.Keys().WorkerIntervals(), id); iv == nil || string(iv.([]byte)) != "2.5" {
		t.Errorf("registered heartbeat interval %v, want 2.5", iv)
	}
	p.signal(t, syscall.SIGQUIT)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d", code)
	}
}
