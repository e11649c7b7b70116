package cli

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/worker"
)

// authServer starts a redis-server of its own that wants password.
func authServer(t *testing.T, password string) *redistest.Server {
	t.Helper()
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	c, err := rdb.New(rdb.Options{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do(context.Background(), "CONFIG", "SET", "requirepass", password); err != nil {
		t.Fatal(err)
	}
	return srv
}

// workCmd is the work command with a handler, so that it logs no
// "no handler" warning.
func workCmd() *ucli.Command {
	reg := worker.NewRegistry()
	reg.Register("Job", func(context.Context, *worker.Job) error { return nil })
	return workCommand(reg)
}

// oneShot is a command line of a command that runs once and exits.
type oneShot struct {
	name string
	cmd  func() *ucli.Command
	args []string
}

func oneShots() []oneShot {
	return []oneShot{
		{"work", workCmd, []string{"-q", "mail"}},
		{"enqueue", enqueueCommand, []string{"--queue", "mail", "--class", "Job"}},
		{"stats", statsCommand, nil},
		{"failed list", failedCommand, []string{"list"}},
		{"failed show", failedCommand, []string{"show"}},
		{"failed retry", failedCommand, []string{"retry"}},
	}
}

// run runs one command line with redisURL; args after "--" are the
// indexes of the failed subcommands.
func (o oneShot) run(t *testing.T, redisURL string) (int, string, string) {
	t.Helper()
	args := append(append([]string(nil), o.args...), "--redis", redisURL, "--namespace", redistest.Namespace(t))
	if strings.HasPrefix(o.name, "failed show") || strings.HasPrefix(o.name, "failed retry") {
		args = append(args, "0")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, errOut := newSyncBuffer(), newSyncBuffer()
	code := runCommand(ctx, o.cmd(), args, out, errOut)
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after 20s; stderr:\n%s", o.name, errOut.String())
	}
	return code, out.String(), errOut.String()
}

// Redis refusing us (bad password, no password, a database out of range)
// is one line and exit 1 for every command, `work` included: it used to
// exit 0 without a word. No message shows the password.
func TestRedisRefusalsExitOneWithOneLine(t *testing.T) {
	t.Parallel()
	srv := authServer(t, "s3cret-pw")
	for _, tc := range []struct{ url, want string }{
		{"redis://:wrong-pw@" + srv.Addr(), "WRONGPASS"},
		{"redis://someone:s3cret-pw@" + srv.Addr(), "WRONGPASS"},
		{srv.URL(), "NOAUTH"},
		{"redis://:s3cret-pw@" + srv.Addr() + "/99", "DB index is out of range"},
	} {
		for _, o := range oneShots() {
			code, out, errOut := o.run(t, tc.url)
			lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
			if code != ExitFailure || len(lines) != 1 || !strings.HasPrefix(lines[0], "resque-go: redis at redis://") ||
				!strings.Contains(lines[0], "refused the connection: ") || !strings.Contains(lines[0], tc.want) {
				t.Errorf("%s with %s: exit %d, stderr %q; want exit 1 and one line with %q", o.name, rdb.RedactURL(tc.url), code, errOut, tc.want)
			}
			if strings.Contains(out+errOut, "s3cret") || strings.Contains(out+errOut, "wrong-pw") {
				t.Errorf("%s with %s: the password shows: %q", o.name, rdb.RedactURL(tc.url), out+errOut)
			}
		}
	}
}

// A malformed URL is a usage error at once (it used to be retried forever
// by work), and its message hides the password whatever the flaw.
func TestMalformedRedisURLExitsTwoAndHidesThePassword(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		"redis://:s3cret@127.0.0.1:6390/abc",
		"redis://:s3c%zzret@127.0.0.1:6390/0",
		"redis://:s3c#ret@127.0.0.1:6390/0",
		"redis://:s3cret@127.0.0.1:6390/0?timeout=5",
		"redis://:s3cret@127.0.0.1:99999",
		"http://:s3cret@127.0.0.1:6390",
	} {
		for _, o := range oneShots() {
			code, out, errOut := o.run(t, bad)
			lines := strings.Split(strings.TrimRight(noHint(errOut), "\n"), "\n")
			if code != ExitUsage || len(lines) != 1 || !strings.Contains(errOut, "bad redis url") {
				t.Errorf("%s --redis %s: exit %d, stderr %q; want exit 2 and one line", o.name, rdb.RedactURL(bad), code, errOut)
			}
			if strings.Contains(out+errOut, "s3c") {
				t.Errorf("%s --redis %s: the password shows: %q", o.name, rdb.RedactURL(bad), out+errOut)
			}
		}
	}
}

// One-shot commands do not wait for a Redis that is down: one line, exit 1.
func TestRedisDownOneShotsExitOne(t *testing.T) {
	t.Parallel()
	down := "redis://:s3cret@" + closedAddr(t)
	for _, o := range oneShots()[1:] {
		code, out, errOut := o.run(t, down)
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		if code != ExitFailure || len(lines) != 1 || !strings.Contains(errOut, "cannot reach redis at redis://:xxxxx@") {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 and one line", o.name, code, errOut)
		}
		if strings.Contains(out+errOut, "s3cret") {
			t.Errorf("%s: the password shows: %q", o.name, out+errOut)
		}
	}
}

// work keeps retrying a Redis that is down (a daemon survives Redis
// restarts) and starts when it comes up.
func TestWorkWaitsForRedis(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errOut := newSyncBuffer(), newSyncBuffer()
	done := make(chan int, 1)
	go func() {
		done <- runCommand(ctx, workCmd(), []string{"-q", "mail", "--redis", fmt.Sprintf("redis://127.0.0.1:%d", port), "--namespace", redistest.Namespace(t), "--mover=false"}, out, errOut)
	}()
	waitFor(t, errOut, "redis unavailable; retrying")
	srv, err := redistest.Start(port)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	waitFor(t, errOut, "worker started")
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit %d after the context ended, want 0; stderr:\n%s", code, errOut.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("work did not stop")
	}
}

// waitFor polls b until it contains s.
func waitFor(t *testing.T, b *syncBuffer, s string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for !strings.Contains(b.String(), s) {
		select {
		case <-b.writes:
		case <-time.After(50 * time.Millisecond): // bounded poll
		case <-deadline:
			t.Fatalf("no %q in:\n%s", s, b.String())
		}
	}
}

// --heartbeat-interval 0 used to become 5 s without a word.
func TestHeartbeatIntervalBounds(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	for _, v := range []string{"0", "0s", "0.5", "-1", "61", "2m", "1e300", "NaN"} {
		out, errOut := newSyncBuffer(), newSyncBuffer()
		code := runCommand(context.Background(), workCmd(), append(e.redisArgs(), "-q", "mail", "--heartbeat-interval", v), out, errOut)
		if code != ExitUsage || !strings.Contains(errOut.String(), "--heartbeat-interval") || strings.Count(noHint(errOut.String()), "\n") != 1 {
			t.Errorf("--heartbeat-interval %s: exit %d, stderr %q; want exit 2 and one line", v, code, errOut.String())
		}
	}
}

// A literal queue that is not in the queues set gets one warning at start
// (a typo?); globs and known queues get none.
func TestWorkWarnsOnceAboutUnknownQueues(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	e.do("SADD", e.client.Keys().Queues(), "mail", "low")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errOut := newSyncBuffer(), newSyncBuffer()
	done := make(chan int, 1)
	go func() {
		done <- runCommand(ctx, workCmd(), append(e.redisArgs(), "-q", "mial,mail,lo*,!low", "--log-format", "json"), out, errOut)
	}()
	waitFor(t, errOut, `"queue":"mial"`)
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit %d", code)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("work did not stop")
	}
	if n := strings.Count(errOut.String(), "queue is not in the queues set"); n != 1 {
		t.Errorf("%d warnings, want 1 (for mial):\n%s", n, errOut.String())
	}
}
