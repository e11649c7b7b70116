package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/resque-go/resque-go/internal/redistest"
)

// kill -9 of a worker mid-job: a new worker on the same host recovers the
// job at start (the dead pid is gone), runs it, and nothing is lost.
func TestKill9MidJobThenRecovered(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	out := filepath.Join(t.TempDir(), "ran")
	code, msg := runCLI(t, "enqueue", "--redis", redisURL, "--namespace", ns, "--queue", "q", "--class", "Job", "--args", `[1,"two"]`)
	if code != 0 {
		t.Fatalf("enqueue: %d %s", code, msg)
	}
	payload := strings.TrimSpace(msg)
	a := start(t, ns, "work", "-q", "q", "--exec", "*=sleep 60", "--log-format", "json")
	var id string
	redistest.Eventually(t, 0, func() bool {
		ids := strs(do(t, c, "SMEMBERS", k.Workers()))
		if len(ids) == 1 && do(t, c, "GET", k.Worker(ids[0])) != nil {
			id = ids[0]
			return true
		}
		return false
	}, "job claimed")
	a.signal(t, syscall.SIGKILL)
	a.wait(t)
	if do(t, c, "GET", k.Worker(id)) == nil {
		t.Fatal("worker record vanished with the process")
	}
	b := start(t, ns, "work", "-q", "q", "--exec", fmt.Sprintf("*=cat > %q", out), "--log-format", "json")
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
	if n := do(t, c, "LLEN", k.Queue("q")).(int64); n != 0 {
		t.Errorf("queue has %d entries", n)
	}
	ids := strs(do(t, c, "SMEMBERS", k.Workers()))
	if len(ids) != 1 || ids[0] == id {
		t.Errorf("workers = %v; the dead id %s must be gone", ids, id)
	}
	b.signal(t, syscall.SIGQUIT)
	if code := b.wait(t); code != 0 {
		t.Errorf("exit code after QUIT = %d", code)
	}
}

// TERM mid-job: the job is cancelled, requeued at the head, exit code 0.
func TestTermRequeuesAndExitsZero(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	job := `{"class":"Slow","args":[]}`
	do(t, c, "RPUSH", k.Queue("q"), job)
	p := start(t, ns, "work", "-q", "q", "--exec", "*=sleep 60", "--term-timeout", "0.5")
	redistest.Eventually(t, 0, func() bool { return do(t, c, "LLEN", k.Queue("q")).(int64) == 0 }, "job claimed")
	p.signal(t, syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit code after TERM = %d", code)
	}
	if q := strs(do(t, c, "LRANGE", k.Queue("q"), 0, -1)); len(q) != 1 || q[0] != job {
		t.Errorf("queue after TERM = %v, want the job back", q)
	}
	if n := do(t, c, "SCARD", k.Workers()).(int64); n != 0 {
		t.Errorf("%d workers still registered", n)
	}
}

// QUIT while idle exits 0 and unregisters; INT likewise.
func TestQuitAndIntWhileIdle(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGQUIT, syscall.SIGINT} {
		ns := redistest.Namespace(t)
		c := client(t, ns)
		p := start(t, ns, "work", "-q", "q", "-c", "3", "--exec", "*=true")
		redistest.Eventually(t, 0, func() bool { return do(t, c, "SCARD", c.Keys().Workers()).(int64) == 3 }, "registration")
		p.signal(t, sig)
		if code := p.wait(t); code != 0 {
			t.Errorf("%v: exit code %d", sig, code)
		}
		if n := do(t, c, "SCARD", c.Keys().Workers()).(int64); n != 0 {
			t.Errorf("%v: %d workers still registered", sig, n)
		}
	}
}

// Bad command lines: a message and exit code 2.
func TestUsageErrorsExitTwo(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"work"}, "no queues"},
		{[]string{"work", "-q", "a,[b"}, "unmatched ["},
		{[]string{"work", "-q", "a", "--interval", "soon"}, "--interval"},
		{[]string{"work", "-q", "a", "--exec", "nocommand"}, "--exec"},
		{[]string{"work", "-q", "a", "--concurrency", "0"}, "--concurrency"},
		{[]string{"work", "-q", "a", "--log-format", "xml"}, "--log-format"},
		{[]string{"work", "-q", "a", "--redis", "http://x"}, "scheme"},
		{[]string{"work", "-q", "a", "--no-such-flag"}, "no-such-flag"},
		{[]string{"enqueue", "--queue", "q", "--class", "C", "--args", "[1,"}, "not valid JSON"},
		{[]string{"enqueue", "--queue", "a,b", "--class", "C"}, "queue name"},
		{[]string{"enqueue", "--class", "C"}, "queue"},
	} {
		code, out := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, output %q; want exit 2 mentioning %q", tc.args, code, out, tc.want)
		}
	}
}

// enqueue writes docs/protocol.md#payloads-resque-go-writes payloads; --plain writes Ruby's bytes.
func TestEnqueueCommand(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	code, out := runCLI(t, "enqueue", "--redis", redisURL, "--namespace", ns, "--queue", "mail", "--class", "MailJob", "--args", `[1, "<é>&", 12345678901234567890]`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	code, out2 := runCLI(t, "enqueue", "--redis", redisURL, "--namespace", ns, "--queue", "mail", "--class", "NoArgsJob", "--plain")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out2)
	}
	q := strs(do(t, c, "LRANGE", k.Queue("mail"), 0, -1))
	re := regexp.MustCompile(`^\{"class":"MailJob","args":\[1,"<é>&",12345678901234567890\],"id":"[0-9a-f]{32}","queue_time":\d+\.\d{4}\}$`)
	if len(q) != 2 || !re.MatchString(q[0]) || q[1] != `{"class":"NoArgsJob","args":[]}` {
		t.Errorf("queue = %q", q)
	}
	if strings.TrimSpace(out) != q[0] {
		t.Errorf("printed %q, pushed %q", out, q[0])
	}
	if m := strs(do(t, c, "SMEMBERS", k.Queues())); len(m) != 1 || m[0] != "mail" {
		t.Errorf("queues = %v", m)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(q[0]), &v); err != nil {
		t.Error(err)
	}
}

// The demo works with no Redis server at all.
func TestDemo(t *testing.T) {
	t.Parallel()
	code, out := runCLI(t, "demo")
	if code != 0 {
		t.Fatalf("demo exit %d:\n%s", code, out)
	}
	for _, want := range []string{"resque:stat:processed                            11  jobs done", "resque:stat:retries                               1  failed attempts retried",
		"ms waited in the queue, summed: ", "ResqueGo::BadPayload", "boom <1>", "Pending in resque:queue:mail: 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}
