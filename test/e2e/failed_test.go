package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/redistest"
)

// resque-go failed list|show|retry|remove|clear through the binary.
func TestFailedCommand(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	for _, dir := range []string{"ruby-resque-3.0.0", "php-resque-chrisboulton", "node-resque-9.7.1"} {
		do(t, c, "RPUSH", k.Failed(), fixtures.MustLoad(dir, "failure").List("resque:failed")[0])
	}
	// flags first: urfave/cli stops at the first index
	r := func(sub string, args ...string) (int, string) {
		return runCLI(t, append([]string{"failed", sub, "--redis", redisURL, "--namespace", ns}, args...)...)
	}
	code, out := r("list")
	if code != 0 || !strings.Contains(out, "Fail_Job") || !strings.Contains(out, "3 shown, 3 entries") {
		t.Fatalf("list: %d\n%s", code, out)
	}
	code, out = r("list", "--json", "--class", "FailJob")
	var listed struct {
		Total   int
		Entries []struct {
			Index int
			Class string
			Queue string
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &listed); code != 0 || err != nil || listed.Total != 3 || len(listed.Entries) != 2 || listed.Entries[1].Index != 2 {
		t.Fatalf("list --json: %d %v\n%s", code, err, out)
	}
	if code, out = r("show", "1"); code != 0 || !strings.Contains(out, "exception:    Exception") {
		t.Errorf("show: %d\n%s", code, out)
	}
	if code, out = r("retry", "0"); code != 0 || !strings.Contains(out, "retried 1") {
		t.Errorf("retry: %d\n%s", code, out)
	}
	if q := strs(do(t, c, "LRANGE", k.Queue("mail"), 0, -1)); len(q) != 1 || !strings.HasPrefix(q[0], `{"class":"FailJob","args":[1,`) {
		t.Errorf("queue after retry = %v", q)
	}
	if code, out = r("remove", "--all", "--class", "Fail_Job", "--yes"); code != 0 || !strings.Contains(out, "removed 1") {
		t.Errorf("remove --all --class: %d\n%s", code, out)
	}
	if code, out = r("clear", "--yes"); code != 0 || !strings.Contains(out, "removed 2") {
		t.Errorf("clear: %d\n%s", code, out)
	}
	if n := do(t, c, "LLEN", k.Failed()).(int64); n != 0 {
		t.Errorf("failed has %d entries after clear", n)
	}
	for _, bad := range [][]string{{"retry"}, {"retry", "--all", "0"}, {"retry", "0", "--json"}, {"show", "x"}, {"show"}, {"remove", "-1"}} {
		if code, out := r(bad[0], bad[1:]...); code != 2 {
			t.Errorf("failed %v: exit %d, want 2\n%s", bad, code, out)
		}
	}
	if code, out := r("show", "7"); code != 2 || !strings.Contains(out, "no entry 7: the failed list is empty") {
		t.Errorf("show 7: exit %d\n%s", code, out)
	}
}
