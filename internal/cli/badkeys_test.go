package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/stats"
)

// seedBadKeys is seed with a counter that is not an integer, a queue key
// and a worker record of another type.
func (e *cliEnv) seedBadKeys() {
	e.t.Helper()
	e.seed()
	e.do("SET", e.ns+":stat:processed", "abc")
	e.do("SADD", e.ns+":queues", "broken")
	e.do("SET", e.ns+":queue:broken", "not a list")
	e.do("SADD", e.ns+":workers", "web-3:33:*")
	e.do("HSET", e.ns+":worker:web-3:33:*", "f", "v")
}

// One garbage counter or key of another type does not hide the rest of
// stats: every queue and worker is shown, the bad keys are marked in the
// text (? and a PROBLEMS list) and in the JSON (problems, and the queue's
// problem), and the command succeeds. Before, it failed whole.
func TestStatsShowsTheRestAroundBadKeys(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	e.seedBadKeys()
	code, out, errOut := e.stats(context.Background())
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"web-1:11:high,low", "web-3:33:*", "PROBLEMS", e.ns + ":stat:processed", e.ns + ":queue:broken",
		e.ns + ":worker:web-3:33:*", "processed     ?"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = e.stats(context.Background(), "--json")
	if code != ExitOK {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	var s stats.Snapshot
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if len(s.Queues) != 3 || s.Queues[0].Name != "broken" || s.Queues[0].Problem == "" || s.Queues[1].Pending != 2 || len(s.Workers) != 3 {
		t.Errorf("snapshot: %+v", s)
	}
	keys := map[string]bool{}
	for _, p := range s.Problems {
		keys[p.Key] = p.Problem != ""
	}
	for _, k := range []string{e.ns + ":stat:processed", e.ns + ":queue:broken", e.ns + ":worker:web-3:33:*"} {
		if !keys[k] {
			t.Errorf("problems lack %s: %+v", k, s.Problems)
		}
	}
}

// queue list shows every queue around one whose key holds another type,
// and marks that one (text and --json). Before, it failed whole.
func TestQueueListShowsTheRestAroundBadKeys(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	e.seedBadKeys()
	code, out, errOut := e.queue("list")
	if code != 0 || !strings.Contains(out, "high    2\n") || !strings.Contains(out, "low     0\n") ||
		!strings.Contains(out, "broken  ?  ("+e.ns+":queue:broken holds a string, not a list)") {
		t.Fatalf("list: %d %s\n%s", code, errOut, out)
	}
	code, out, errOut = e.queue("list", "--json")
	var list struct {
		Items []struct {
			Name    string
			Size    int64
			Problem string
		}
	}
	err := json.Unmarshal([]byte(out), &list)
	rows := list.Items
	if code != 0 || err != nil || len(rows) != 3 ||
		rows[0].Name != "broken" || rows[0].Problem == "" || rows[1].Size != 2 || rows[2].Problem != "" {
		t.Fatalf("list --json: %d %v %s\n%s", code, err, errOut, out)
	}
}

// The reads of the newer features name a key written by hand with another
// type (job show, group show, events tail, job list --tag), and job show
// shows a held job's other parents around one whose key is bad. Before,
// each failed with Redis's bare WRONGTYPE, naming no key.
func TestFeatureReadsNameBadKeys(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	ns := e.ns
	e.do("SET", ns+":resque-go:events", "x")
	e.do("SET", ns+":resque-go:group:g", "x")
	e.do("SET", ns+":resque-go:deps:held:h1", "x")
	e.do("SET", ns+":resque-go:tag:t", "x")
	e.do("HSET", ns+":resque-go:deps:held:h2", "state", "held", "waiting", "2", "queue", "q", "policy", "fail",
		"payload", `{"class":"C","args":[]}`, "parents", `["p1","group:g"]`)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"job", "show", "h1"}, ExitFailure, ns + ":resque-go:deps:held:h1 holds a string, not a hash"},
		{[]string{"group", "show", "g"}, ExitFailure, ns + ":resque-go:group:g holds a string, not a hash"},
		{[]string{"events", "tail"}, ExitFailure, ns + ":resque-go:events holds a string, not a stream"},
		{[]string{"job", "list", "--tag", "t"}, ExitFailure, ns + ":resque-go:tag:t holds a string, not a zset"},
		{[]string{"job", "show", "h2"}, ExitOK, ns + ":resque-go:group:g holds a string, not a hash"},
	} {
		code, out, errOut := e.run(append(append(tc.args[:2:2], e.redisArgs()...), tc.args[2:]...)...)
		if code != tc.code || !strings.Contains(out+errOut, tc.want) || strings.Count(errOut, "\n") > 1 {
			t.Errorf("%v: exit %d, want %d naming %q:\n%s%s", tc.args, code, tc.code, tc.want, out, errOut)
		}
		if tc.code == ExitOK && !strings.Contains(out, "p1") {
			t.Errorf("%v: the other parent is not shown:\n%s", tc.args, out)
		}
	}
}

// queue limits shows every limit around one whose key holds another type
// and names that key (text and --json); an index of another type is named
// in the one-line error. Before, the bad key read as none, unnamed, and
// the index failed with Redis's bare WRONGTYPE.
func TestQueueLimitsNamesBadKeys(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	ns := e.ns
	e.do("SADD", ns+":resque-go:limits", "class:A", "class:B")
	e.do("SET", ns+":resque-go:limit:class:A:holders", "x")
	e.do("RPUSH", ns+":resque-go:limit:class:B:parked", `{"queue":"q","payload":"{}"}`)
	bad := ns + ":resque-go:limit:class:A:holders holds a string, not a zset"
	code, out, errOut := e.queue("limits")
	if code != ExitOK || !strings.Contains(out, "class:A: 0 running, 0 parked, 0 waiting  ("+bad+")\n") ||
		!strings.Contains(out, "class:B: 0 running, 1 parked, 0 waiting\n") {
		t.Errorf("limits: exit %d %s\n%s", code, errOut, out)
	}
	code, out, _ = e.queue("limits", "--json")
	if code != ExitOK || !strings.Contains(out, `"problem": "`+bad+`"`) || strings.Count(out, `"problem"`) != 1 {
		t.Errorf("limits --json: exit %d\n%s", code, out)
	}
	e.do("DEL", ns+":resque-go:limits")
	e.do("SET", ns+":resque-go:limits", "x")
	code, _, errOut = e.queue("limits")
	if code != ExitFailure || !strings.Contains(errOut, ns+":resque-go:limits holds a string, not a set") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("limits with a bad index: exit %d %q", code, errOut)
	}
}
