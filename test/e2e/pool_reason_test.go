package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
)

// freePortPair listens on a port whose successor is free too, and returns
// the listener on the successor and the port (free again).
func freePortPair(t *testing.T) (int, net.Listener) {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		next, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+1))
		l.Close()
		if err == nil {
			t.Cleanup(func() { next.Close() })
			return port, next
		}
	}
	t.Fatal("no pair of free ports")
	return 0, nil
}

// A child that fails at start (here: the metrics port it is given is
// taken) is shown crash-looping with the line it printed, in pool status
// --json and in text. It used to show only "exit status N".
func TestPoolStatusShowsWhyChildFails(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	port, _ := freePortPair(t)
	cfg := writeFile(t, t.TempDir(), "pool.yml", "workers:\n  - queues: a\n")
	p := start(t, ns, "pool", "--config", cfg, "--status-interval", "0.2", "--log-format", "json",
		"--metrics-addr", fmt.Sprintf("127.0.0.1:%d", port))
	var reason string
	redistest.Eventually(t, 0, func() bool {
		recs := poolStatus(t, ns)
		if len(recs) != 1 || len(recs[0].Children) != 1 {
			return false
		}
		c := recs[0].Children[0]
		reason = c.LastExitReason
		return c.State == "crashloop" && c.LastExit != "" && c.LastExit != "exit status 0"
	}, "a crash-looping child with its reason")
	if !strings.Contains(reason, "address already in use") || !strings.HasPrefix(reason, "resque-go: ") {
		t.Errorf("last_exit_reason = %q", reason)
	}
	code, out := runCLI(t, "pool", "status", "--redis", redisURL, "--namespace", ns)
	if code != 0 || !regexp.MustCompile(`crashloop .*exit status \d+ \(restart in [^)]*\): resque-go: .*address already in use`).MatchString(out) {
		t.Errorf("pool status: exit %d\n%s", code, out)
	}
	// The manager's log event for the exit carries it; the child's own
	// line still reaches the manager's stderr.
	log := p.out.String()
	if !regexp.MustCompile(`"exit_reason":"resque-go: (?:[^"\\]|\\.)*address already in use`).MatchString(log) ||
		strings.Count(log, "address already in use") < 2 {
		t.Errorf("manager output:\n%s", log)
	}
}

// A Redis that refuses the credentials at start: the pool exits 1 with one
// line saying so (as work does) instead of starting children that would
// only crash-loop on the same refusal. (A refusal met later, while the
// pool runs, is retried: a password being rotated comes back.)
func TestPoolExitsWhenRedisRefusesCredentials(t *testing.T) {
	t.Parallel()
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	admin, err := rdb.New(rdb.Options{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx := context.Background()
	if _, err := admin.Do(ctx, "CONFIG", "SET", "requirepass", "sekret"); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, t.TempDir(), "pool.yml", "workers:\n  - queues: a\n")
	ns := redistest.Namespace(t)
	out, err := exec.Command(binary, "pool", "--config", cfg, "--redis", srv.URL(), "--namespace", ns).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !regexp.MustCompile(`(?m)^resque-go: redis at \S+ refused the connection: NOAUTH`).Match(out) {
		t.Fatalf("pool against a Redis refusing its credentials: %v\n%s", err, out)
	}
	// with the password, the same pool runs its child
	authURL := strings.Replace(srv.URL(), "redis://", "redis://:sekret@", 1)
	authed, err := rdb.New(rdb.Options{URL: authURL})
	if err != nil {
		t.Fatal(err)
	}
	defer authed.Close()
	cmd := exec.Command(binary, "pool", "--config", cfg, "--redis", authURL, "--namespace", ns)
	p := &proc{cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
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
			t.Logf("pool output:\n%s", p.out.String())
		}
	})
	redistest.Eventually(t, 0, func() bool {
		n, err := redis.Int(authed.Do(ctx, "SCARD", protocol.NewKeys(ns).Workers()))
		return err == nil && n == 1
	}, "the child registered")
	p.signal(t, syscall.SIGQUIT)
	if code := p.wait(t); code != 0 {
		t.Errorf("pool exit %d", code)
	}
}
