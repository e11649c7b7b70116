package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redistest"
)

// nodeDir is the folder with node-resque installed (npm ci there).
func nodeDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../interop/node")
	if err != nil {
		t.Fatal(err)
	}
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "node-resque"))
	if nodeErr != nil || modErr != nil {
		msg := fmt.Sprintf("node-resque interop needs node and `npm ci` in %s (node: %v, module: %v)", dir, nodeErr, modErr)
		if os.Getenv("RESQUE_GO_REQUIRE_INTEROP") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

// node runs interop.js with node-resque's own API against our Redis.
func node(t *testing.T, dir, ns, cmd string, stdin string, out any) {
	t.Helper()
	u, err := url.Parse(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "node", "interop.js", cmd)
	c.Dir = dir
	c.Env = append(os.Environ(), "REDIS_HOST="+u.Hostname(), "REDIS_PORT="+u.Port(), "RESQUE_NAMESPACE="+ns)
	c.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	b, err := c.Output()
	if err != nil {
		t.Fatalf("node interop.js %s: %v\n%s", cmd, err, stderr.String())
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("node interop.js %s printed %q: %v", cmd, b, err)
	}
}

type nodeView struct {
	FailedCount int `json:"failedCount"`
	Failed      []struct {
		Worker    string         `json:"worker"`
		Queue     string         `json:"queue"`
		Payload   map[string]any `json:"payload"`
		Exception string         `json:"exception"`
		Error     string         `json:"error"`
		Backtrace []string       `json:"backtrace"`
		FailedAt  string         `json:"failed_at"`
	} `json:"failed"`
	Workers map[string]*string `json:"workers"`
	Stats   map[string]string  `json:"stats"`
	Length  map[string]int     `json:"length"`
}

// node-resque enqueues; resque-go runs the jobs; node-resque's own API reads
// back the workers, failed entries and stats resque-go wrote, and its
// retryAndRemoveFailed finds our failed entries byte for byte.
func TestNodeResqueInterop(t *testing.T) {
	t.Parallel()
	dir := nodeDir(t)
	ns := redistest.Namespace(t)
	out := filepath.Join(t.TempDir(), "add")
	jobs := `[{"queue":"math","class":"Add","args":[1,2,{"k":"v"},"unicode é ✓ <tag>&"]},
	          {"queue":"math","class":"FailJob","args":[1,"two"]},
	          {"queue":"math","class":"Unknown","args":[]}]`
	var enq struct{ Enqueued int }
	node(t, dir, ns, "enqueue", jobs, &enq)
	if enq.Enqueued != 3 {
		t.Fatalf("node enqueued %d", enq.Enqueued)
	}
	c := client(t, ns)
	k := c.Keys()
	p := start(t, ns, "work", "-q", "math", "--hostname", "interop", "--fail-retries", "1",
		"--exec", fmt.Sprintf("Add=cat >> %q", out), "--exec", `FailJob=echo "boom <1>" >&2; exit 1`)
	redistest.Eventually(t, 0, func() bool {
		n, _ := c.Int(context.Background(), k.StatProcessed())
		return n == 3
	}, "3 jobs processed")
	got, err := os.ReadFile(out)
	if err != nil || string(got) != `{"class":"Add","queue":"math","args":[1,2,{"k":"v"},"unicode é ✓ <tag>&"]}` {
		t.Errorf("Add saw %q (%v)", got, err)
	}
	var v nodeView
	node(t, dir, ns, "inspect", "", &v)
	ids := strs(do(t, c, "SMEMBERS", k.Workers()))
	if len(ids) != 1 {
		t.Fatalf("workers = %v", ids)
	}
	name := strings.Join(strings.SplitN(ids[0], ":", 3)[:2], ":")
	if q, ok := v.Workers[name]; !ok || q == nil || *q != "math" {
		t.Errorf("node-resque workers() = %v, want %s: math", v.Workers, name)
	}
	if v.FailedCount != 2 || len(v.Failed) != 2 {
		t.Fatalf("node-resque failedCount = %d, failed = %+v", v.FailedCount, v.Failed)
	}
	byClass := map[string]int{}
	for i, f := range v.Failed {
		byClass[f.Payload["class"].(string)] = i
		if f.Queue != "math" || f.Worker != ids[0] || f.FailedAt == "" || f.Backtrace == nil {
			t.Errorf("failed[%d] as node-resque reads it: %+v", i, f)
		}
	}
	if f := v.Failed[byClass["FailJob"]]; f.Exception != "ResqueGo::ExecFailed" || !strings.Contains(f.Error, "boom <1>") {
		t.Errorf("FailJob entry: %+v", f)
	}
	if f := v.Failed[byClass["Unknown"]]; f.Exception != "ResqueGo::NoHandler" {
		t.Errorf("Unknown entry: %+v", f)
	}
	if v.Stats["processed"] != "3" || v.Stats["failed"] != "2" {
		t.Errorf("node-resque stats() = %v", v.Stats)
	}
	var r struct{ Retried int }
	node(t, dir, ns, "retry", "", &r)
	if r.Retried != 2 {
		t.Fatalf("node-resque retried %d", r.Retried)
	}
	redistest.Eventually(t, 0, func() bool {
		n, _ := c.Int(context.Background(), k.StatProcessed())
		return n == 5
	}, "retried jobs processed")
	var again nodeView
	node(t, dir, ns, "inspect", "", &again)
	if again.FailedCount != 2 {
		t.Errorf("after node-resque's retry and our re-run, failedCount = %d, want 2", again.FailedCount)
	}
	p.signal(t, syscall.SIGQUIT)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
	var final nodeView
	node(t, dir, ns, "inspect", "", &final)
	if len(final.Workers) != 0 {
		t.Errorf("node-resque still sees workers after QUIT: %v", final.Workers)
	}
}
