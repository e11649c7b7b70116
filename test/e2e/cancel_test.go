package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
)

// resque-go job cancel, run as a process of its own, stops the job another
// worker process runs, for a Go handler (in-process and --fork) and an
// exec command: each ends in failed as ResqueGo::Cancelled, not retried.
// The time from the command's start to the failed entry is logged for a
// series of cancels (never asserted).
func TestJobCancelAcrossProcesses(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "blockingjob")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./testdata/blockingjob")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build testdata/blockingjob: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		name string
		bin  string
		args []string
		runs int
		// direct: more cancels made by this test process through the
		// client library: the request's own latency, without a process start
		direct int
	}{
		{"go", bin, []string{"work", "-q", "q"}, 3, 20},
		{"fork", bin, []string{"work", "-q", "q", "--fork"}, 2, 4},
		{"exec", binary, []string{"work", "-q", "q", "--exec", "*=sleep 60"}, 2, 4},
	} {
		if os.Getenv("RESQUE_GO_CANCEL_SERIES") != "" {
			// the series the figures in docs/operations.md come from
			tc.runs, tc.direct = tc.runs*3, tc.direct*5
		}
		t.Run(tc.name, func(t *testing.T) {
			ns := redistest.Namespace(t)
			c := client(t, ns)
			k := c.Keys()
			w := exec.Command(tc.bin, append(tc.args, "--redis", redisURL, "--namespace", ns, "--fail-retries", "3")...)
			out := &syncBuffer{}
			w.Stdout, w.Stderr = out, out
			w.WaitDelay = time.Second
			if err := w.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = w.Process.Kill()
				_ = w.Wait()
				if t.Failed() {
					t.Logf("worker output:\n%s", out.String())
				}
			})
			// took: from the command's start (a race-built binary's start
			// is most of it); after: from its exit, the request made
			var took, after []time.Duration
			var direct []time.Duration
			for i := 1; i <= tc.runs+tc.direct; i++ {
				do(t, c, "RPUSH", k.Queue("q"), fmt.Sprintf(`{"class":"Blocks","args":[%d]}`, i))
				var id string
				redistest.Eventually(t, 0, func() bool {
					for _, wid := range strs(do(t, c, "SMEMBERS", k.Workers())) {
						if do(t, c, "GET", k.Worker(wid)) != nil {
							id = wid
							return true
						}
					}
					return false
				}, "job claimed")
				began := time.Now()
				viaCLI := i <= tc.runs
				if !viaCLI {
					if _, err := c.CancelJob(context.Background(), id, nil, false); err != nil {
						t.Fatal(err)
					}
				} else if code, msg := runCLI(t, "job", "cancel", id, "--redis", redisURL, "--namespace", ns); code != 0 {
					t.Fatalf("job cancel: exit %d: %s", code, msg)
				}
				exited := time.Now()
				for do(t, c, "LLEN", k.Failed()).(int64) < int64(i) {
					if time.Since(began) > time.Minute {
						t.Fatalf("cancel %d: no failed entry after a minute", i)
					}
					<-time.After(time.Millisecond) // bounded poll, fine-grained: it is what is measured
				}
				if viaCLI {
					took, after = append(took, time.Since(began)), append(after, time.Since(exited))
				} else {
					direct = append(direct, time.Since(began))
				}
			}
			t.Logf("%s: %d cancels, command start to failed entry: %s", tc.name, len(took), spread(took))
			t.Logf("%s: %d cancels, command exit to failed entry: %s", tc.name, len(after), spread(after))
			t.Logf("%s: %d cancels, client.CancelJob call to failed entry: %s", tc.name, len(direct), spread(direct))
			for _, s := range strs(do(t, c, "LRANGE", k.Failed(), 0, -1)) {
				if !strings.Contains(s, `"exception":"`+protocol.ExcCancelled+`"`) {
					t.Errorf("failed entry is not a cancel: %s", s)
				}
			}
			if n := do(t, c, "LLEN", k.Retries()).(int64) + do(t, c, "LLEN", k.Queue("q")).(int64); n != 0 {
				t.Errorf("%d retries or queued jobs after the cancels, want none", n)
			}
			// the worker is idle now: nothing to cancel
			id := strs(do(t, c, "SMEMBERS", k.Workers()))[0]
			code, msg := runCLI(t, "job", "cancel", id, "--redis", redisURL, "--namespace", ns)
			if code != 1 || !strings.Contains(msg, "no job running on "+id) {
				t.Errorf("cancel on an idle worker: exit %d: %s", code, msg)
			}
		})
	}
}

// job cancel's usage errors exit 2.
func TestJobCancelUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"job", "cancel"},
		{"job", "cancel", "a", "b"},
		{"job", "cancel", "w", "--job-id", "x"},
		{"job", "cancel", "--job-id", ""},
	} {
		if code, msg := runCLI(t, append(args, "--redis", redisURL)...); code != 2 || strings.Count(strings.TrimSpace(msg), "\n") > 1 {
			t.Errorf("%v: exit %d: %s", args, code, msg)
		}
	}
	ns := redistest.Namespace(t)
	if code, msg := runCLI(t, "job", "cancel", "--job-id", "nope", "--redis", redisURL, "--namespace", ns); code != 1 || !strings.Contains(msg, "no running job has id nope") {
		t.Errorf("unknown job id: exit %d: %s", code, msg)
	}
}

// spread says min, p50, p99 and max of ds.
func spread(ds []time.Duration) string {
	slices.Sort(ds)
	at := func(q int) time.Duration { return ds[(len(ds)*q-1)/100].Round(time.Millisecond) }
	return fmt.Sprintf("min %s, p50 %s, p99 %s, max %s", ds[0].Round(time.Millisecond), at(50), at(99), ds[len(ds)-1].Round(time.Millisecond))
}
