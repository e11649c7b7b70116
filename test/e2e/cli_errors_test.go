package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
)

// runWithEnv runs resque-go to completion with extra environment variables
// and returns its exit code, stdout and stderr.
func runWithEnv(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = environ(env)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	_ = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v: still running after 30s; stderr:\n%s", args, errOut.String())
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// environ is this process's environment with the variables of env
// replaced; "NAME=" in env removes NAME.
func environ(env []string) []string {
	set := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	var out []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !set[k] {
			out = append(out, kv)
		}
	}
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// errLines is lines(stderr) without the hint a usage error (exit 2) ends
// with: "Run 'resque-go CMD --help' for usage."
func errLines(stderr string) []string {
	l := lines(stderr)
	if n := len(l); n > 1 && usageHint.MatchString(l[n-1]) {
		l = l[:n-1]
	}
	return l
}

func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// passwordServer is a redis-server of this test's own that wants password.
func passwordServer(t *testing.T, password string) *redistest.Server {
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

// A worker that Redis refuses exits 1 with one line (it used to exit 0
// without a word, and a pool restarted it forever); a malformed URL exits 2
// at once (it used to be retried forever). The password never shows,
// whether it came from --redis, REDIS_URL or REDIS_BACKEND.
func TestWorkRefusedByRedis(t *testing.T) {
	t.Parallel()
	srv := passwordServer(t, "s3cret-pw")
	for _, tc := range []struct {
		url  string
		code int
		want string
	}{
		{"redis://:wrong-pw@" + srv.Addr(), 1, "refused the connection: WRONGPASS"},
		{srv.URL(), 1, "refused the connection: NOAUTH"},
		{"redis://:s3cret-pw@" + srv.Addr() + "/99", 1, "refused the connection: ERR DB index is out of range"},
		{"redis://:s3cret-pw@" + srv.Addr() + "/x", 2, "bad redis url"},
		{"redis://:s3c%zzret-pw@" + srv.Addr(), 2, "bad redis url"},
	} {
		for _, how := range []string{"flag", "REDIS_URL", "REDIS_BACKEND"} {
			args := []string{"work", "-q", "mail", "--exec", "*=true", "--namespace", redistest.Namespace(t)}
			var env []string
			if how == "flag" {
				args = append(args, "--redis", tc.url)
			} else {
				env = []string{"REDIS_URL=", how + "=" + tc.url}
			}
			code, out, errOut := runWithEnv(t, env, args...)
			l := errLines(errOut)
			if code != tc.code || len(l) != 1 || !strings.HasPrefix(l[0], "resque-go: ") || !strings.Contains(l[0], tc.want) {
				t.Errorf("work with %s from %s: exit %d, stderr %q; want exit %d and one line with %q", rdb.RedactURL(tc.url), how, code, errOut, tc.code, tc.want)
			}
			if strings.Contains(out+errOut, "s3c") || strings.Contains(out+errOut, "wrong-pw") {
				t.Errorf("work with %s from %s: the password shows: %q", rdb.RedactURL(tc.url), how, out+errOut)
			}
		}
	}
}

// The one-shot commands: the same lines, and exit 1 when Redis is down
// rather than waiting for it.
func TestOneShotsRefusedByRedis(t *testing.T) {
	t.Parallel()
	srv := passwordServer(t, "s3cret-pw")
	down := passwordServer(t, "s3cret-pw")
	downAddr := down.Addr()
	down.Stop()
	ns := redistest.Namespace(t)
	for _, tc := range []struct {
		url  string
		code int
		want string
	}{
		{"redis://:wrong-pw@" + srv.Addr(), 1, "refused the connection: WRONGPASS"},
		{"redis://:s3cret-pw@" + srv.Addr() + "/99", 1, "DB index is out of range"},
		{"redis://:s3cret-pw@" + downAddr, 1, "cannot reach redis at redis://:xxxxx@" + downAddr},
		{"redis://:s3cret-pw@" + srv.Addr() + "/0?x=1", 2, "bad redis url"},
	} {
		for _, cmd := range []struct{ flags, indexes []string }{
			{[]string{"enqueue", "--queue", "mail", "--class", "Job"}, nil},
			{[]string{"stats"}, nil},
			{[]string{"stats", "--json"}, nil},
			{[]string{"failed", "list"}, nil},
			{[]string{"failed", "show"}, []string{"0"}},
			{[]string{"failed", "retry", "--all"}, nil},
		} {
			args := append(append(append([]string(nil), cmd.flags...), "--redis", tc.url, "--namespace", ns), cmd.indexes...)
			code, out, errOut := runWithEnv(t, nil, args...)
			l := errLines(errOut)
			if code != tc.code || len(l) != 1 || !strings.Contains(errOut, tc.want) {
				t.Errorf("%v with %s: exit %d, stderr %q; want exit %d and one line with %q", args[:2], rdb.RedactURL(tc.url), code, errOut, tc.code, tc.want)
			}
			if strings.Contains(out+errOut, "s3cret") || strings.Contains(out+errOut, "wrong-pw") {
				t.Errorf("%v with %s: the password shows: %q", args[:2], rdb.RedactURL(tc.url), out+errOut)
			}
		}
	}
}

// An unknown flag is one line and a hint, not the whole help.
func TestUnknownFlagIsOneLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		hint string
	}{
		{[]string{"work", "-x"}, "Run 'resque-go work --help' for usage."},
		{[]string{"enqueue", "-x"}, "Run 'resque-go enqueue --help' for usage."},
		{[]string{"failed", "list", "-x"}, "Run 'resque-go failed list --help' for usage."},
		{[]string{"-x"}, "Run 'resque-go --help' for usage."},
	} {
		code, out, errOut := runWithEnv(t, nil, tc.args...)
		l := lines(errOut)
		if code != 2 || out != "" || len(l) != 2 || l[0] != "resque-go: flag provided but not defined: -x" || l[1] != tc.hint {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, the error and %q", tc.args, code, out, errOut, tc.hint)
		}
	}
}

// The names Resque users know still work, though the help shows one name
// per flag.
func TestOldEnvNamesStillRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"QUEUE=", "QUEUES=a,[b"}, "unmatched ["},
		{[]string{"QUEUE=mail", "FAIL_RETRIES=0"}, "--fail-retries 0"},
		{[]string{"QUEUE=mail", "RESQUE_CONCURRENCY=0", "COUNT="}, "--concurrency 0"},
		{[]string{"QUEUE=mail", "WORKER_HEARTBEAT_INTERVAL=0"}, `--heartbeat-interval "0"`},
		{[]string{"QUEUE=mail", "VVERBOSE=maybe"}, "VVERBOSE"},
	} {
		code, _, errOut := runWithEnv(t, tc.env, "work", "--redis", redisURL)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.env, code, errOut, tc.want)
		}
	}
	code, out, _ := runWithEnv(t, nil, "work", "--help")
	for _, old := range []string{"$QUEUES", "$RESQUE_CONCURRENCY", "$FAIL_RETRIES", "$REDIS_BACKEND", "$PREFIX"} {
		if code != 0 || strings.Contains(out, old) {
			t.Errorf("work --help (exit %d) shows %s", code, old)
		}
	}
}

// Logs to a pipe carry no colour codes, and durations carry their unit.
func TestLogsPlainWithUnits(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	do(t, c, "RPUSH", c.Keys().Queue("mail"), `{"class":"Job","args":[]}`)
	for _, format := range []string{"console", "json"} {
		p := start(t, ns, "work", "-q", "mail", "--exec", "Job=true", "--log-format", format, "--log-level", "debug")
		redistest.Eventually(t, 0, func() bool { return strings.Contains(p.out.String(), "job done") }, "a job done line")
		p.signal(t, syscall.SIGTERM)
		if code := p.wait(t); code != 0 {
			t.Errorf("%s: exit %d", format, code)
		}
		out := p.out.String()
		if strings.Contains(out, "\x1b[") {
			t.Errorf("%s: colour codes in a pipe:\n%q", format, out)
		}
		unit := regexp.MustCompile(`duration=\d+(\.\d+)?(ns|µs|ms|s)\b`)
		if format == "json" {
			unit = regexp.MustCompile(`"duration":"\d+(\.\d+)?(ns|µs|ms|s)"`)
		}
		if !unit.MatchString(out) {
			t.Errorf("%s: no duration with a unit:\n%s", format, out)
		}
		do(t, c, "RPUSH", c.Keys().Queue("mail"), `{"class":"Job","args":[]}`)
	}
}
