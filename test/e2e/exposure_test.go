package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/internal/redistest"
)

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// cmdline is what ps shows of pid, its NULs as spaces.
func cmdline(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// childrenOf lists the live processes whose parent is pid.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		cpid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, cpid)
		}
	}
	return out
}

// Every long-running command keeps the password of its --redis URL and
// the tokens given as flags out of ps (/proc/<pid>/cmdline, which every
// user can read) for its whole life; what it is stays visible.
func TestLongRunningCommandsHideSecrets(t *testing.T) {
	t.Parallel()
	const pw = "s3cret-pw-4711"
	srv := passwordServer(t, pw)
	url := "redis://:" + pw + "@" + srv.Addr()
	ns := redistest.Namespace(t)
	cfg := writeFile(t, t.TempDir(), "pool.yml", "workers:\n  - queues: a\n    processes: 2\nscheduler: true\nhandlers:\n  \"*\": {exec: \"true\"}\n")
	redis := []string{"--redis", url, "--namespace", ns}
	tokens := []string{"--http-token", "tok-" + pw, "--metrics-token=mt-" + pw}
	for _, tc := range []struct {
		name  string
		args  []string
		ready string // in the output once the command runs
		shows string // in its command line
	}{
		{"scheduler", cat([]string{"scheduler"}, redis, []string{"--metrics-token", "mt-" + pw}),
			"scheduler started", "scheduler --redis redis://:***@"},
		{"pool", cat([]string{"pool", "--config", cfg, "--status-interval", "0.2"}, redis, tokens),
			"child started", "pool --config " + cfg},
		{"work", cat([]string{"work", "-q", "a", "--exec", "*=true"}, redis, tokens),
			"worker started", "resque-"},
		{"stats --watch", cat([]string{"stats", "--watch", "--every", "0.2"}, redis), "", "stats --watch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startArgs(t, tc.args...)
			pid := p.cmd.Process.Pid
			redistest.Eventually(t, 0, func() bool {
				if tc.ready != "" {
					return strings.Contains(p.out.String(), tc.ready)
				}
				return len(p.out.String()) > 0
			}, tc.name+" running")
			procs := []int{pid}
			if tc.name == "pool" {
				// two workers and the scheduler
				redistest.Eventually(t, 0, func() bool { return len(childrenOf(pid)) >= 3 }, "the pool's children")
				procs = append(procs, childrenOf(pid)...)
			}
			for _, q := range procs {
				line := cmdline(q)
				if strings.Contains(line, pw) {
					t.Errorf("pid %d (%s) shows the secret: %q", q, tc.name, line)
				}
				if q == pid && !strings.Contains(line, tc.shows) {
					t.Errorf("pid %d (%s) shows %q, want it to show %q", q, tc.name, line, tc.shows)
				}
			}
		})
	}
}

// procEnviron is what ps e shows of pid's environment (/proc/<pid>/environ,
// readable by the same user).
func procEnviron(pid int) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	return string(b)
}

// Secrets given in the environment (REDIS_URL with a password, the tokens'
// variables) are masked in the environment ps e shows, for the whole life
// of every long-running command and of a pool's children, while the
// commands still use them: each one connects and runs.
func TestLongRunningCommandsHideSecretsInTheirEnvironment(t *testing.T) {
	t.Parallel()
	const pw = "env-s3cret-0815"
	srv := passwordServer(t, pw)
	ns := redistest.Namespace(t)
	env := []string{"REDIS_URL=redis://:" + pw + "@" + srv.Addr(), "RESQUE_NAMESPACE=" + ns,
		"RESQUE_HTTP_TOKEN=tok-" + pw, "RESQUE_METRICS_TOKEN=mt-" + pw}
	cfg := writeFile(t, t.TempDir(), "pool.yml", "workers:\n  - queues: a\n    processes: 2\nscheduler: true\nhandlers:\n  \"*\": {exec: \"true\"}\n")
	for _, tc := range []struct {
		name  string
		args  []string
		ready string
	}{
		{"scheduler", []string{"scheduler"}, "scheduler started"},
		{"pool", []string{"pool", "--config", cfg, "--status-interval", "0.2"}, "child started"},
		{"work", []string{"work", "-q", "a", "--exec", "*=true"}, "worker started"},
		{"stats --watch", []string{"stats", "--watch", "--every", "0.2"}, "WORKERS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startArgsEnv(t, env, tc.args...)
			pid := p.cmd.Process.Pid
			redistest.Eventually(t, 0, func() bool { return strings.Contains(p.out.String(), tc.ready) }, tc.name+" running")
			procs := []int{pid}
			if tc.name == "pool" {
				redistest.Eventually(t, 0, func() bool { return len(childrenOf(pid)) >= 3 }, "the pool's children")
				procs = append(procs, childrenOf(pid)...)
			}
			for _, q := range procs {
				// a child masks its environment as it starts
				redistest.Eventually(t, 0, func() bool { return !strings.Contains(procEnviron(q), pw) }, fmt.Sprintf("pid %d (%s) masking its environment", q, tc.name))
			}
			if e := procEnviron(pid); tc.name != "work" && !strings.Contains(e, "REDIS_URL=redis://:***@") {
				t.Errorf("%s: environment %q, want REDIS_URL shown masked", tc.name, strings.ReplaceAll(e, "\x00", " "))
			}
		})
	}
}

// A pool with --metrics-addr given as a bare port and --metrics-token:
// the manager and its children listen on 127.0.0.1 and answer 401
// without the token; /healthz says ok.
func TestPoolMetricsToken(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	base := freePortRun(t, 2)
	cfg := writeFile(t, t.TempDir(), "pool.yml", "workers:\n  - queues: a\n    processes: 1\nhandlers:\n  \"*\": {exec: \"true\"}\n")
	start(t, ns, "pool", "--config", cfg, "--metrics-addr", strconv.Itoa(base), "--metrics-token", "t0k")
	get := func(url, token string) int {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, port := range []int{base, base + 1} {
		for _, path := range []string{"/metrics", "/healthz"} {
			u := fmt.Sprintf("http://127.0.0.1:%d%s", port, path)
			redistest.Eventually(t, 0, func() bool { return get(u, "t0k") == http.StatusOK }, u+" with the token")
			if code := get(u, ""); code != http.StatusUnauthorized {
				t.Errorf("%s without the token: %d, want 401", u, code)
			}
			if code := get(u, "wrong"); code != http.StatusUnauthorized {
				t.Errorf("%s with a wrong token: %d, want 401", u, code)
			}
		}
	}
}
