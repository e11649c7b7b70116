package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

func (e *cliEnv) run(args ...string) (int, string, string) {
	e.t.Helper()
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	app := newApp(stdout, stderr, nil)
	parseMu.Lock() // urfave/cli writes package-level state while parsing (main_test.go)
	code := runApp(context.Background(), app, append([]string{"resque-go"}, args...))
	parseMu.Unlock()
	return code, stdout.String(), stderr.String()
}

// enqueue --tag --events writes the tag's index and the enqueued event;
// job list, job events and events tail read them back.
func TestEnqueueTagsAndEvents(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	r := e.redisArgs()
	code, out, errOut := e.run(append(append([]string{"enqueue"}, r...), "--queue", "mail", "--class", "Mail", "--tag", "a", "--tag", "b", "--events")...)
	if code != ExitOK || !strings.Contains(out, `"tags":["a","b"]`) {
		t.Fatalf("enqueue: exit %d %s %s", code, out, errOut)
	}
	code, out, _ = e.run(append(append([]string{"job", "list"}, r...), "--tag", "b")...)
	id := strings.Fields(out)
	if code != ExitOK || len(id) != 2 {
		t.Fatalf("job list: exit %d %q", code, out)
	}
	code, out, _ = e.run(append(append([]string{"job", "events"}, r...), id[1])...)
	if code != ExitOK || !strings.Contains(out, "enqueued") || !strings.Contains(out, "Mail") {
		t.Errorf("job events: exit %d %q", code, out)
	}
	code, out, _ = e.run(append(append([]string{"events", "tail"}, r...), "--class", "Other")...)
	if code != ExitOK || out != "" {
		t.Errorf("events tail --class Other: exit %d %q", code, out)
	}
	code, out, _ = e.run(append(append([]string{"events", "tail"}, r...), "--queue", "mail")...)
	if code != ExitOK || !strings.Contains(out, id[1]) {
		t.Errorf("events tail --queue mail: exit %d %q", code, out)
	}
	for _, bad := range [][]string{
		{"enqueue", "--queue", "q", "--class", "C", "--tag", "a b"},
		{"enqueue", "--queue", "q", "--class", "C", "--tag", "a", "--in", "5m"},
		{"job", "list", "--tag", ""},
		{"job", "events"},
		{"events", "tail", "--count", "-1"},
	} {
		args := append(bad[:len(bad):len(bad)], r...)
		if code, _, errOut := e.run(args...); code != ExitUsage || !strings.HasPrefix(errOut, "resque-go: ") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and the error's line", bad, code, errOut)
		}
	}
}

// enqueue --after --events writes the held job's enqueued event; with
// --tag the held job is in the tag's index.
func TestEnqueueHeldWithEvents(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	r := e.redisArgs()
	code, out, errOut := e.run(append(append([]string{"enqueue"}, r...), "--queue", "later", "--class", "Mail", "--after", "parent-1", "--events")...)
	if code != ExitOK || !strings.Contains(errOut, "held") {
		t.Fatalf("enqueue: exit %d %s %s", code, out, errOut)
	}
	code, out, _ = e.run(append(append([]string{"events", "tail"}, r...), "--queue", "later")...)
	if code != ExitOK || !strings.Contains(out, "enqueued") || !strings.Contains(out, "Mail") {
		t.Errorf("events tail: exit %d %q", code, out)
	}
	code, out, errOut = e.run(append(append([]string{"enqueue"}, r...), "--queue", "later", "--class", "Mail", "--after", "parent-1", "--tag", "a")...)
	id := regexpID.FindStringSubmatch(out)
	if code != ExitOK || id == nil || !strings.Contains(errOut, "held") {
		t.Fatalf("--tag with --after: exit %d %s %s", code, out, errOut)
	}
	if code, out, _ := e.run(append(append([]string{"job", "list"}, r...), "--tag", "a")...); code != ExitOK || !strings.Contains(out, id[1]) {
		t.Errorf("job list --tag a: exit %d %q, want the held job", code, out)
	}
}

// job show gives a job's state from its events and lists them: queued
// once enqueued, succeeded after a worker ran it; none for an unknown id.
func TestJobShowStateFromEvents(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	r := e.redisArgs()
	code, out, errOut := e.run(append(append([]string{"enqueue"}, r...), "--queue", "shown", "--class", "Shown", "--events")...)
	id := regexpID.FindStringSubmatch(out)
	if code != ExitOK || id == nil {
		t.Fatalf("enqueue: exit %d %s %s", code, out, errOut)
	}
	show := func() string {
		code, out, errOut := e.run(append(append([]string{"job", "show"}, r...), id[1])...)
		if code != ExitOK {
			t.Fatalf("job show: exit %d %s", code, errOut)
		}
		return out
	}
	if out := show(); !strings.Contains(out, "state: queued") || !strings.Contains(out, "enqueued    Shown") {
		t.Errorf("job show of a queued job:\n%s", out)
	}
	if code, _, errOut := e.run(append(append([]string{"work"}, r...), "-q", "shown", "--interval", "0", "--events", "--exec", "*=true", "--log-level", "error")...); code != ExitOK {
		t.Fatalf("work --interval 0: exit %d %s", code, errOut)
	}
	out = show()
	if !strings.Contains(out, "state: succeeded") || strings.Index(out, "enqueued") > strings.Index(out, "started") || strings.Index(out, "started") > strings.LastIndex(out, "succeeded") {
		t.Errorf("job show of a job run:\n%s", out)
	}
	if code, out, _ := e.run(append(append([]string{"job", "show"}, r...), "f00d")...); code != ExitOK || !strings.Contains(out, "state: unknown") {
		t.Errorf("job show of an unknown id: exit %d\n%s", code, out)
	}
}

var regexpID = regexp.MustCompile(`"id":"([0-9a-f]{32})"`)
