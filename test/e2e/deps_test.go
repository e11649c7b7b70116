package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
)

// enqueueJob runs `resque-go enqueue` and returns the job's id.
func enqueueJob(t *testing.T, ns string, args ...string) string {
	t.Helper()
	code, out := runCLI(t, append([]string{"enqueue", "--redis", redisURL, "--namespace", ns, "--queue", "q", "--class", "J"}, args...)...)
	if code != 0 {
		t.Fatalf("enqueue %v: exit %d: %s", args, code, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if p, err := protocol.DecodePayload([]byte(line)); err == nil && p.ID != "" {
			return p.ID
		}
	}
	t.Fatalf("enqueue %v printed no payload: %s", args, out)
	return ""
}

// A chain (a, b after a, c after b, d after c) and a diamond (e; f and g
// after e; h after f and g), run by workers killed with -9 at random
// instants: every job ends succeeded, and no job starts before the last
// run of each of its parents has ended.
func TestDependenciesChainAndDiamondSurviveKill9(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	// dependencies on before any parent can end (the enqueue would do it
	// at the first --after otherwise)
	if err := c.EnableDeps(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	parents := map[string][]string{"b": {"a"}, "c": {"b"}, "d": {"c"}, "f": {"e"}, "g": {"e"}, "h": {"f", "g"}}
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		args := []string{"--args", `["` + name + `"]`}
		var after []string
		for _, p := range parents[name] {
			after = append(after, ids[p])
		}
		if len(after) > 0 {
			args = append(args, "--after", strings.Join(after, ","))
		}
		ids[name] = enqueueJob(t, ns, args...)
	}
	if code, out := runCLI(t, "job", "show", ids["h"], "--redis", redisURL, "--namespace", ns); code != 0 || !strings.Contains(out, "state: held") {
		t.Fatalf("job show: %d %s", code, out)
	}
	log := filepath.Join(t.TempDir(), "log")
	handler := fmt.Sprintf(`*=echo "S $RESQUE_ARGS" >> %q; sleep 0.$(($$ %% 3 + 2)); echo "E $RESQUE_ARGS" >> %q`, log, log)
	lines := func() []string {
		b, _ := os.ReadFile(log)
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	count := func(prefix string) int {
		n := 0
		for _, l := range lines() {
			if strings.HasPrefix(l, prefix) {
				n++
			}
		}
		return n
	}
	succeeded := func() int {
		n := 0
		for _, id := range ids {
			if v, _ := c.Do(context.Background(), "GET", k.DepOutcome(id)); v != nil && string(v.([]byte)) == "succeeded" {
				n++
			}
		}
		return n
	}
	work := []string{"work", "-q", "q", "-c", "2", "--exec", handler, "--log-level", "error", "--max-recoveries", "100"}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 8 && succeeded() < len(ids); round++ {
		p := start(t, ns, work...)
		before := count("S ")
		redistest.Eventually(t, 0, func() bool { return count("S ") > before || succeeded() == len(ids) }, "a job started")
		<-time.After(time.Duration(rng.IntN(150)) * time.Millisecond) // the instant within the job
		p.signal(t, syscall.SIGKILL)
		p.wait(t)
	}
	final := start(t, ns, work...)
	waitProgress(t, "every job of the graph succeeded", succeeded, len(ids), time.Minute)
	final.signal(t, syscall.SIGQUIT)
	final.wait(t)

	// order: a job's first start comes after its parents' last end
	ls := lines()
	first := func(what string) int {
		for i, l := range ls {
			if l == what {
				return i
			}
		}
		return -1
	}
	last := func(what string) int {
		for i := len(ls) - 1; i >= 0; i-- {
			if ls[i] == what {
				return i
			}
		}
		return -1
	}
	for child, ps := range parents {
		s := first(`S ["` + child + `"]`)
		for _, p := range ps {
			if e := last(`E ["` + p + `"]`); s < 0 || e < 0 || s < e {
				t.Errorf("%s started (line %d) before its parent %s's last end (line %d):\n%s", child, s, p, e, strings.Join(ls, "\n"))
			}
		}
	}
	// a job runs at least once; more when a kill lands between its end
	// and its finish (the runtime's at-least-once), which its children
	// never see: they are released by the finish, once
	for name := range ids {
		if n := count(`E ["` + name + `"]`); n < 1 {
			t.Errorf("%s never ended", name)
		}
	}
	for _, e := range strs(do(t, c, "LRANGE", k.Failed(), 0, -1)) {
		t.Errorf("failed entry: %s", e)
	}
	t.Logf("%d lines in the log for 8 jobs", len(ls))
}

// groupJobs is how many jobs TestGroupCallbackFiresOnceUnderKills runs:
// 300, or RESQUE_GO_E2E_GROUP_JOBS (make test-group-large: 100,000).
func groupJobs(t *testing.T) int {
	if v := os.Getenv("RESQUE_GO_E2E_GROUP_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("RESQUE_GO_E2E_GROUP_JOBS=%q", v)
		}
		return n
	}
	return 300
}

// A group whose jobs fail, are retried, and whose workers are killed with
// -9 at random instants fires its callback exactly once, with counts in
// which each job counts once.
func TestGroupCallbackFiresOnceUnderKills(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	ctx := context.Background()
	n := groupJobs(t)
	now := time.Now()
	for i := 0; i < n; i++ {
		p, err := protocol.NewPayload("J", []byte(fmt.Sprintf("[%d]", i)), protocol.EnqueueOptions{Deps: protocol.DepFields{Group: "big"}})
		if err != nil {
			t.Fatal(err)
		}
		v, _ := protocol.DecodePayload(p)
		if _, _, err := c.EnqueueDeps(ctx, rdb.DepJob{ID: v.ID, Queue: "q", Payload: p, Group: "big"}, now); err != nil {
			t.Fatal(err)
		}
	}
	if code, out := runCLI(t, "group", "on-complete", "big", "--queue", "cb", "--class", "Done", "--args", `["x"]`, "--redis", redisURL, "--namespace", ns); code != 0 || !strings.Contains(out, "registered") {
		t.Fatalf("group on-complete: %d %s", code, out)
	}
	// every 7th job always fails (3 attempts, then failed); every 10th
	// fails its first attempt and is retried
	marks := t.TempDir()
	handler := fmt.Sprintf(`*=i=$(echo "$RESQUE_ARGS" | tr -dc 0-9); if [ $((i %% 7)) -eq 0 ]; then exit 1; fi; `+
		`if [ $((i %% 10)) -eq 0 ] && [ ! -e %s/$i ]; then touch %s/$i; exit 1; fi`, marks, marks)
	work := []string{"work", "-q", "q", "-c", "8", "--exec", handler, "--log-level", "error", "--max-recoveries", "100", "--fail-retries", "3"}
	ended := func() int {
		g, err := c.Group(ctx, "big")
		if err != nil {
			t.Fatal(err)
		}
		return int(g.Succeeded + g.Failed)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 4; round++ {
		p := start(t, ns, work...)
		before := ended()
		redistest.Eventually(t, 0, func() bool { return ended() > before+n/200+5 || ended() == n }, "jobs ended")
		<-time.After(time.Duration(rng.IntN(200)) * time.Millisecond)
		p.signal(t, syscall.SIGKILL)
		p.wait(t)
	}
	final := start(t, ns, work...)
	waitProgress(t, "every job of the group ended", ended, n, time.Minute)
	redistest.Eventually(t, 0, func() bool { return do(t, c, "LLEN", k.Queue("cb")).(int64) > 0 }, "the callback")
	final.signal(t, syscall.SIGQUIT)
	final.wait(t)

	wantFailed := 0
	for i := 0; i < n; i++ {
		if i%7 == 0 {
			wantFailed++
		}
	}
	g, err := c.Group(ctx, "big")
	if err != nil || !g.Fired || g.Pending != 0 || g.Total != int64(n) || g.Failed != int64(wantFailed) || g.Succeeded != int64(n-wantFailed) {
		t.Fatalf("group %+v %v; want %d failed of %d", g, err, wantFailed, n)
	}
	cbs := strs(do(t, c, "LRANGE", k.Queue("cb"), 0, -1))
	if len(cbs) != 1 {
		t.Fatalf("%d callbacks, want 1: %v", len(cbs), cbs)
	}
	var cb struct {
		Class string
		Args  []json.RawMessage
	}
	if err := json.Unmarshal([]byte(cbs[0]), &cb); err != nil || cb.Class != "Done" || len(cb.Args) != 2 {
		t.Fatalf("callback %s: %v", cbs[0], err)
	}
	want := fmt.Sprintf(`{"group":"big","total":%d,"succeeded":%d,"failed":%d}`, n, n-wantFailed, wantFailed)
	if string(cb.Args[1]) != want {
		t.Errorf("callback counts %s, want %s", cb.Args[1], want)
	}
	if code, out := runCLI(t, "group", "show", "big", "--json", "--redis", redisURL, "--namespace", ns); code != 0 || !strings.Contains(out, `"fired": true`) {
		t.Errorf("group show: %d %s", code, out)
	}
}

// A parent whose workers are killed with -9 until --max-recoveries is
// spent is recorded as failed by the recovery (Resque::DirtyExit), and
// that end settles its held child as a failed finish does: the child,
// on-parent-failure=fail, is failed too instead of waiting for ever.
func TestDependenciesParentKilledPastMaxRecoveries(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	ctx := context.Background()
	if err := c.EnableDeps(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	parent := enqueueJob(t, ns, "--args", `["parent"]`)
	child := enqueueJob(t, ns, "--args", `["child"]`, "--after", parent, "--on-parent-failure", "fail")
	log := filepath.Join(t.TempDir(), "log")
	handler := fmt.Sprintf(`*=echo "S $RESQUE_ARGS" >> %q; sleep 60`, log)
	starts := func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "S ")
	}
	work := []string{"work", "-q", "q", "-c", "1", "--exec", handler, "--log-level", "error", "--max-recoveries", "1"}
	// killed twice while running the parent: the first recovery requeues
	// it, the second records it as failed
	for round := 1; round <= 2; round++ {
		p := start(t, ns, work...)
		redistest.Eventually(t, 0, func() bool { return starts() >= round }, "the parent started")
		p.signal(t, syscall.SIGKILL)
		p.wait(t)
	}
	final := start(t, ns, work...)
	redistest.Eventually(t, 0, func() bool {
		st, err := c.DepJob(ctx, child)
		return err == nil && st.State == "failed"
	}, "the child failed with its parent")
	final.signal(t, syscall.SIGQUIT)
	final.wait(t)
	entries := strs(do(t, c, "LRANGE", c.Keys().Failed(), 0, -1))
	if len(entries) != 2 || !strings.Contains(entries[0], "DirtyExit") || !strings.Contains(entries[1], "ResqueGo::ParentFailed") {
		t.Errorf("failed entries %q, want the parent's DirtyExit, then the child's ParentFailed", entries)
	}
	if v, _ := c.Do(ctx, "GET", c.Keys().DepOutcome(parent)); v == nil || string(v.([]byte)) != "failed" {
		t.Errorf("parent's outcome %v", v)
	}
	if n := starts(); n != 2 {
		t.Errorf("%d starts, want the parent's 2 (the child never runs)", n)
	}
}
