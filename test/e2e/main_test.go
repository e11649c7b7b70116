// Package e2e runs the resque-go binary as users do: real processes, real
// signals, a real redis-server, and node-resque for interoperability.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
)

var (
	binary   string
	redisURL string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "resque-go-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "resque-go")
	// race-built binaries otherwise sleep 1 s at exit
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	// RESQUE_GO_E2E_RACE=0 builds without the race detector, for the long
	// runs (make test-group-large) where its cost would dominate
	args := []string{"build", "-race", "-o", binary, "github.com/resque-go/resque-go"}
	if os.Getenv("RESQUE_GO_E2E_RACE") == "0" {
		args = append(args[:1], args[2:]...)
	}
	build := exec.Command("go", args...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build:", err)
		return 1
	}
	srv, err := redistest.Start(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Stop()
	redisURL = srv.URL()
	return m.Run()
}

// syncBuffer is a goroutine-safe output buffer.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a running resque-go process.
type proc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

func start(t *testing.T, ns string, args ...string) *proc {
	t.Helper()
	return startURL(t, redisURL, ns, args...)
}

// startURL is start on the Redis at url.
func startURL(t *testing.T, url, ns string, args ...string) *proc {
	t.Helper()
	full := append(args, "--redis", url, "--namespace", ns)
	cmd := exec.Command(binary, full...)
	p := &proc{cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	// A job's grandchild may outlive a killed worker and hold the pipes.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("output of %v:\n%s", args, p.out.String())
		}
	})
	return p
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("process did not exit; output:\n%s", p.out.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *proc) signal(t *testing.T, s syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(s); err != nil {
		t.Fatal(err)
	}
}

// runCLI runs resque-go to completion and returns its exit code and output.
func runCLI(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}

func client(t *testing.T, ns string) *rdb.Client {
	t.Helper()
	c, err := rdb.New(rdb.Options{URL: redisURL, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func do(t *testing.T, c *rdb.Client, cmd string, args ...any) any {
	t.Helper()
	v, err := c.Do(context.Background(), cmd, args...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, string(x.([]byte)))
	}
	return out
}

// waitProgress waits until read() reaches target (jobs run, say). A slow
// or busy machine makes slow progress, not none: it fails only when read's
// value has not changed for stall, and says how far it got.
func waitProgress(t *testing.T, what string, read func() int, target int, stall time.Duration) {
	t.Helper()
	began := time.Now()
	last, moved := read(), time.Now()
	for last < target {
		if time.Since(moved) > stall {
			t.Fatalf("%s: stuck at %d of %d for %s (%s in all)", what, last, target, stall, time.Since(began).Round(time.Second))
		}
		<-time.After(50 * time.Millisecond) // bounded poll
		if v := read(); v != last {
			last, moved = v, time.Now()
		}
	}
}
