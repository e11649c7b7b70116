package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redistest"
)

// work --metrics-addr: /readyz is 200 while the worker takes jobs, 503
// while it drains after QUIT (a job held running), the reason in its log
// and not in the body; /healthz stays 200. With a token, both want it.
func TestWorkReadyzWhileDraining(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	dir := t.TempDir()
	started, release := filepath.Join(dir, "started"), filepath.Join(dir, "release")
	port := freePortRun(t, 1)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	p := start(t, ns, "work", "-q", "q", "--metrics-addr", fmt.Sprint(port), "--metrics-token", "t0k",
		"--exec", fmt.Sprintf("Job=touch %s; while [ ! -e %s ]; do sleep 0.05; done", started, release))
	get := func(path string) (int, string) { return httpGetToken(base+path, "t0k") }
	redistest.Eventually(t, 0, func() bool { code, _ := get("/readyz"); return code == 200 }, "/readyz 200")
	if code, body := get("/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz: %d %q", code, body)
	}
	if code, _ := httpGet(base + "/readyz"); code != 401 {
		t.Errorf("/readyz without the token: %d, want 401", code)
	}
	enqueue(t, ns, "q", "[1]")
	redistest.Eventually(t, 0, func() bool { _, err := os.Stat(started); return err == nil }, "the job running")
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("/readyz with a job running: %d, want 200", code)
	}
	p.signal(t, syscall.SIGQUIT)
	redistest.Eventually(t, 0, func() bool { code, _ := get("/readyz"); return code == 503 }, "/readyz 503 while draining")
	if code, body := get("/readyz"); code != 503 || body != "not ready\n" {
		t.Errorf("/readyz while draining: %d %q", code, body)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz while draining: %d %q", code, body)
	}
	redistest.Eventually(t, 0, func() bool { return strings.Contains(p.out.String(), "draining") }, "the reason in the log")
	writeFile(t, dir, "release", "")
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// /readyz is 503 while Redis is stopped; /healthz, liveness, stays 200.
func TestWorkReadyzWhileRedisDown(t *testing.T) {
	t.Parallel()
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	port := freePortRun(t, 1)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	p := startURL(t, srv.URL(), redistest.Namespace(t), "work", "-q", "q", "--metrics-addr", fmt.Sprint(port), "--exec", "Job=true")
	redistest.Eventually(t, 0, func() bool { code, _ := httpGet(base + "/readyz"); return code == 200 }, "/readyz 200")
	srv.Stop()
	redistest.Eventually(t, 0, func() bool { code, _ := httpGet(base + "/readyz"); return code == 503 }, "/readyz 503 with Redis down")
	if code, body := httpGet(base + "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz with Redis down: %d %q", code, body)
	}
	if !strings.Contains(p.out.String(), "redis does not answer") {
		t.Errorf("the log does not say why:\n%s", p.out.String())
	}
}

// The pool manager's /readyz is 200 while every running child's is; USR2
// (passed to the children: paused) makes both 503, CONT 200 again.
func TestPoolReadyzAggregatesChildren(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	base := freePortRun(t, 3)
	cfg := writeFile(t, t.TempDir(), "pool.yml", "workers:\n  - queues: a\n    processes: 2\nhandlers:\n  \"*\": {exec: \"true\"}\n")
	p := start(t, ns, "pool", "--config", cfg, "--status-interval", "0.2", "--metrics-addr", fmt.Sprintf("127.0.0.1:%d", base))
	url := func(off int, path string) string { return fmt.Sprintf("http://127.0.0.1:%d%s", base+off, path) }
	redistest.Eventually(t, 0, func() bool { code, _ := httpGet(url(0, "/readyz")); return code == 200 }, "manager /readyz 200")
	for off := 1; off <= 2; off++ {
		if code, _ := httpGet(url(off, "/readyz")); code != 200 {
			t.Errorf("child %d /readyz: %d", off, code)
		}
	}
	redistest.Eventually(t, 0, func() bool {
		_, body := httpGet(url(0, "/metrics"))
		return strings.Contains(body, `resque_pool_slots_idle{queues="a"} 2`) && strings.Contains(body, `resque_pool_slots_busy{queues="a"} 0`)
	}, "busy and idle slots of the set")
	p.signal(t, syscall.SIGUSR2)
	redistest.Eventually(t, 0, func() bool { code, _ := httpGet(url(0, "/readyz")); return code == 503 }, "manager /readyz 503 while the children are paused")
	// the manager is not ready once one child is paused; the other may
	// handle the USR2 passed on to it a moment later
	for off := 1; off <= 2; off++ {
		redistest.Eventually(t, 0, func() bool { code, _ := httpGet(url(off, "/readyz")); return code == 503 }, fmt.Sprintf("paused child %d /readyz 503", off))
	}
	if code, _ := httpGet(url(0, "/healthz")); code != 200 {
		t.Errorf("manager /healthz: %d", code)
	}
	p.signal(t, syscall.SIGCONT)
	redistest.Eventually(t, 0, func() bool { code, _ := httpGet(url(0, "/readyz")); return code == 200 }, "manager /readyz 200 after CONT")
	p.signal(t, syscall.SIGQUIT)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// A pool child past max_jobs, or over max_rss (1MB: at once), finishes its
// jobs and is replaced at once: every job runs exactly once, the slot
// counts recycles and no restart, and the manager logs the limit.
func TestPoolRecycles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ limit, setting string }{
		{"max_jobs", "max_jobs: 3"},
		{"max_rss", "max_rss: 1MB"},
	} {
		t.Run(tc.limit, func(t *testing.T) {
			t.Parallel()
			ns := redistest.Namespace(t)
			c := client(t, ns)
			k := c.Keys()
			dir := t.TempDir()
			done := filepath.Join(dir, "done")
			if err := os.Mkdir(done, 0o755); err != nil {
				t.Fatal(err)
			}
			cfg := writeFile(t, dir, "pool.yml", fmt.Sprintf(`
handlers:
  "*": {exec: "sleep 0.1; cat > $(mktemp %s/job.XXXXXX)"}
workers:
  - {queues: q, processes: 1, concurrency: 2, %s}
`, done, tc.setting))
			const jobs = 20
			var payloads []string
			for i := range jobs {
				payloads = append(payloads, fmt.Sprintf(`{"class":"Job","args":[%d]}`, i))
				do(t, c, "RPUSH", k.Queue("q"), payloads[i])
			}
			p := startPool(t, ns, cfg)
			waitProgress(t, "jobs done", func() int {
				n, _ := c.Int(t.Context(), k.StatProcessed())
				return int(n)
			}, jobs, 60*time.Second)
			files, err := filepath.Glob(filepath.Join(done, "job.*"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(b))
			}
			slices.Sort(got)
			want := slices.Clone(payloads)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("jobs run:\n%s\nwant each of the %d payloads once", strings.Join(got, "\n"), jobs)
			}
			// max_jobs 3: 20 jobs take 7 children, 6 of them recycled
			least := 1
			if tc.limit == "max_jobs" {
				least = jobs/3 - 1
			}
			redistest.Eventually(t, 0, func() bool {
				recs := poolRecords(t, c)
				return len(recs) == 1 && len(recs[0].Children) == 1 && recs[0].Children[0].Recycles >= least
			}, "recycles in pool status")
			if ch := poolRecords(t, c)[0].Children[0]; ch.Restarts != 0 || ch.State == "crashloop" {
				t.Errorf("child status %+v: want recycles and no restart", ch)
			}
			if out := p.out.String(); !strings.Contains(out, "child recycled") || !strings.Contains(out, `"limit":"`+tc.limit+`"`) ||
				strings.Contains(out, "child died") {
				t.Errorf("the manager's log does not say recycled (%s):\n%s", tc.limit, out)
			}
			for _, key := range []string{k.Failed(), k.Queue("q")} {
				if n := do(t, c, "LLEN", key).(int64); n != 0 {
					t.Errorf("%s has %d entries", key, n)
				}
			}
			p.signal(t, syscall.SIGQUIT)
			if code := p.wait(t); code != 0 {
				t.Errorf("exit code after QUIT = %d", code)
			}
		})
	}
}
