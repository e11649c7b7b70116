package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redistest"
)

// A team's own binary (examples/custom) registers a Go handler and gets the
// whole CLI; its handler runs in-process and, with --fork, in a child
// process of that same binary.
func TestCustomBinaryGoHandler(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "custom")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/resque-go/resque-go/examples/custom")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build examples/custom: %v\n%s", err, out)
	}
	for _, fork := range []bool{false, true} {
		ns := redistest.Namespace(t)
		c := client(t, ns)
		k := c.Keys()
		for _, args := range []string{`["world"]`, `["a","b"]`} {
			cmd := exec.Command(bin, "enqueue", "--redis", redisURL, "--namespace", ns, "--queue", "default", "--class", "Greet", "--args", args)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("enqueue: %v\n%s", err, out)
			}
		}
		out := &syncBuffer{}
		w := exec.Command(bin, "work", "-q", "default", "--redis", redisURL, "--namespace", ns, "--fail-retries", "1")
		if fork {
			w.Args = append(w.Args, "--fork")
		}
		w.Stdout, w.Stderr = out, out
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		redistest.Eventually(t, 0, func() bool {
			n, _ := c.Int(context.Background(), k.StatProcessed())
			return n == 2
		}, "two jobs done")
		_ = w.Process.Signal(syscall.SIGQUIT)
		_ = w.Wait()
		if !strings.Contains(out.String(), "hello, world (job ") {
			t.Errorf("fork=%v: handler output missing:\n%s", fork, out.String())
		}
		failed := strs(do(t, c, "LRANGE", k.Failed(), 0, -1))
		if len(failed) != 1 || !strings.Contains(failed[0], `"exception":"ArgumentError","error":"want 1 name, got 2"`) {
			t.Errorf("fork=%v: failed = %v", fork, failed)
		}
	}
	_ = os.Remove(bin)
}
