package statsio_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/stats"
)

// Collect reads the whole cluster around keys it cannot use: a garbage
// counter, queue keys, a failed list, a queues set and a worker record of
// another type. Each is named in Problems (with the type it holds), reads
// as absent, and Render marks the numbers it stands for with "?"; every
// other number is as it would be without them. Before, one such key made
// Collect fail whole.
func TestCollectAroundBadKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	loadCluster(e)
	want := collect(e, "")
	e.do("SET", e.key("stat:failed"), "not a number")
	e.do("DEL", e.key("failed"))
	e.do("HSET", e.key("failed"), "f", "v")
	e.do("SET", e.key("queue:critical"), "x")
	e.do("SADD", e.key("queues"), "zbroken")
	e.do("HSET", e.key("queue:zbroken"), "f", "v")
	s := collect(e, "")

	problems := map[string]string{}
	for _, p := range s.Problems {
		problems[p.Key] = p.Problem
	}
	for key, problem := range map[string]string{
		e.key("stat:failed"):    `holds "not a number", not an integer`,
		e.key("failed"):         "holds a hash, not a list",
		e.key("queue:critical"): "holds a string, not a list",
		e.key("queue:zbroken"):  "holds a hash, not a list",
	} {
		if problems[key] != problem {
			t.Errorf("problem of %s = %q, want %q", key, problems[key], problem)
		}
	}
	if len(s.Problems) != 4 {
		t.Errorf("problems: %+v", s.Problems)
	}
	if s.Totals.Processed != want.Totals.Processed || s.Totals.Failed != 0 || s.Totals.RetriesList != want.Totals.RetriesList ||
		len(s.Workers) != len(want.Workers) || len(s.Hosts) != len(want.Hosts) || len(s.Queues) != len(want.Queues)+1 {
		t.Errorf("the rest differs:\n%+v\nwant\n%+v", s.Totals, want.Totals)
	}
	for _, q := range s.Queues {
		if bad := q.Name == "critical" || q.Name == "zbroken"; bad != (q.Problem != "") {
			t.Errorf("queue %s: problem %q", q.Name, q.Problem)
		}
	}
	var text bytes.Buffer
	if err := stats.Render(&text, s); err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(text.String(), "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	for _, line := range []string{"failed ?", "failed list ?", "processed 1234", "total ? 15 13 1 1 116.7ms 233.3ms",
		e.key("queue:zbroken") + " holds a hash, not a list"} {
		if !lines[line] {
			t.Errorf("text lacks %q:\n%s", line, text.String())
		}
	}
}
