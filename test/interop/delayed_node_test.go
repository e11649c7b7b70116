// Package interop checks resque-go against other Resque runtimes' own code
// (node-resque, installed in node/ by `make deps`).
package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/redistest/rdbtest"
)

const redisEnv = "RESQUE_GO_TEST_REDIS"

func TestMain(m *testing.M) { os.Exit(redistest.Main(m, redisEnv)) }

// nodeDir is the folder with node-resque installed (npm ci there); the test
// is skipped without it unless RESQUE_GO_REQUIRE_INTEROP=1 (CI).
func nodeDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("node")
	if err != nil {
		t.Fatal(err)
	}
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "node-resque"))
	if nodeErr != nil || modErr != nil {
		msg := fmt.Sprintf("node-resque interop needs node and `npm ci` in %s (node: %v, module: %v)", dir, nodeErr, modErr)
		if os.Getenv("RESQUE_GO_REQUIRE_INTEROP") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

type env struct {
	t   *testing.T
	dir string
	ns  string
	c   *rdb.Client
}

func newEnv(t *testing.T) *env {
	dir := nodeDir(t)
	r := rdbtest.New(t, rdb.Options{})
	return &env{t, dir, r.NS, r.Client}
}

// node runs delayed.js cmd with node-resque against the test namespace and
// decodes what it prints into out.
func (e *env) node(cmd string, stdin any, out any) {
	e.t.Helper()
	u, err := url.Parse(os.Getenv(redisEnv))
	if err != nil {
		e.t.Fatal(err)
	}
	in, err := json.Marshal(stdin)
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "node", "delayed.js", cmd)
	c.Dir = e.dir
	c.Env = append(os.Environ(), "REDIS_HOST="+u.Hostname(), "REDIS_PORT="+u.Port(), "RESQUE_NAMESPACE="+e.ns)
	c.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	b, err := c.Output()
	if err != nil {
		e.t.Fatalf("node delayed.js %s: %v\n%s", cmd, err, stderr.String())
	}
	if err := json.Unmarshal(b, out); err != nil {
		e.t.Fatalf("node delayed.js %s printed %q: %v", cmd, b, err)
	}
}

type nodeJob struct {
	Queue string `json:"queue"`
	Class string `json:"class"`
	Args  []any  `json:"args"`
	At    int64  `json:"at"` // Unix ms
}

// nodeEnqueueAt enqueues n jobs J [first+i] with node-resque's enqueueAt,
// due over the last 50 seconds.
func (e *env) nodeEnqueueAt(queue string, first, n int) {
	e.t.Helper()
	now := time.Now()
	jobs := make([]nodeJob, n)
	for i := range jobs {
		jobs[i] = nodeJob{queue, "J", []any{first + i}, now.Add(-time.Duration(50-i%50) * time.Second).UnixMilli()}
	}
	var out struct{ Enqueued int }
	e.node("enqueueAt", jobs, &out)
	if out.Enqueued != n {
		e.t.Fatalf("node-resque enqueued %d, want %d", out.Enqueued, n)
	}
}

// goEnqueueAt enqueues n plain jobs J [first+i] with delayed.EnqueueAt, due
// over the last 50 seconds.
func (e *env) goEnqueueAt(queue string, first, n int) {
	e.t.Helper()
	now := time.Now()
	for i := 0; i < n; i++ {
		payload := fmt.Sprintf(`{"class":"J","args":[%d]}`, first+i)
		if err := delayedio.EnqueueAt(context.Background(), e.c, queue, []byte(payload), now.Add(-time.Duration(50-i%50)*time.Second)); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *env) list(key string) []string {
	e.t.Helper()
	v, err := e.c.Do(context.Background(), "LRANGE", key, 0, -1)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, x := range v.([]any) {
		out = append(out, string(x.([]byte)))
	}
	return out
}

// promotedOnce checks that queue holds J [0..n) exactly once each and that
// the delayed queue is empty (no bucket, index key or schedule left).
func (e *env) promotedOnce(queue string, n int) []string {
	e.t.Helper()
	jobs := e.list(e.c.Keys().Queue(queue))
	counts := map[int]int{}
	for _, p := range jobs {
		var v struct {
			Class string
			Args  []int
		}
		if err := json.Unmarshal([]byte(p), &v); err != nil || v.Class != "J" || len(v.Args) != 1 {
			e.t.Fatalf("promoted payload %s (%v)", p, err)
		}
		counts[v.Args[0]]++
	}
	for i := 0; i < n; i++ {
		if counts[i] != 1 {
			e.t.Fatalf("job %d promoted %d times", i, counts[i])
		}
	}
	if len(jobs) != n {
		e.t.Fatalf("%d jobs in the queue, want %d", len(jobs), n)
	}
	for _, pattern := range []string{"delayed:*", "timestamps:*", "delayed_queue_schedule"} {
		if left, _ := e.c.ScanKeys(context.Background(), e.ns+":"+pattern); len(left) != 0 {
			e.t.Errorf("%d %s keys left, e.g. %s", len(left), pattern, left[0])
		}
	}
	return jobs
}

func (e *env) mover() *delayedio.Mover {
	e.t.Helper()
	m, err := delayedio.NewMover(delayedio.MoverConfig{Client: e.c, Interval: 10 * time.Millisecond})
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// node-resque's enqueueAt items are promoted by resque-go's mover, each
// once, in bucket and FIFO order, as {"class","args"}.
func TestNodeResqueEnqueueAtPromotedByResqueGo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 2000
	e.nodeEnqueueAt("q", 0, n)
	moved, err := e.mover().Pass(context.Background())
	if err != nil || moved != n {
		t.Fatalf("moved %d (%v), want %d", moved, err, n)
	}
	jobs := e.promotedOnce("q", n)
	// buckets oldest first (i%50 picks the second), FIFO inside: i, i+50, ...
	for k, p := range jobs {
		i := (k%(n/50))*50 + k/(n/50)
		if want := fmt.Sprintf(`{"class":"J","args":[%d]}`, i); p != want {
			t.Fatalf("queue[%d] = %s, want %s", k, p, want)
		}
	}
}

// resque-go's delayed items are promoted by node-resque's Scheduler (with
// its leader lock), each once.
func TestResqueGoItemsPromotedByNodeScheduler(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 2000
	e.goEnqueueAt("q", 0, n)
	var out struct {
		Transferred int
		Leader      bool
	}
	e.node("schedule", nil, &out)
	if out.Transferred != n || !out.Leader {
		t.Fatalf("node-resque's scheduler: %+v, want %d transferred as leader", out, n)
	}
	for _, p := range e.promotedOnce("q", n)[:3] {
		// node-resque re-encodes: {"class","queue","args"}
		if !strings.HasPrefix(p, `{"class":"J","queue":"q","args":[`) {
			t.Errorf("node-resque promoted %s", p)
		}
	}
}

// What node-resque's Scheduler changes in the items it promotes: it parses
// each item and enqueues (queue, class, args) anew, so a resque-go job's
// id and queue_time are dropped, object args become a one-element array
// (its arrayify), and integers beyond 2^53 are rounded (JavaScript
// numbers). Nothing is lost or doubled; resque-go's mover keeps the bytes.
func TestNodeSchedulerRewritesItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	at := time.Now().Add(-time.Second)
	for _, p := range []string{
		`{"class":"WithID","args":[1],"id":"abc","queue_time":1.5}`,
		`{"class":"Object","args":{"user":7}}`,
		`{"class":"Big","args":[12345678901234567890]}`,
	} {
		if err := delayedio.EnqueueAt(context.Background(), e.c, "q", []byte(p), at); err != nil {
			t.Fatal(err)
		}
	}
	var out struct{ Transferred int }
	e.node("schedule", nil, &out)
	got := e.list(e.c.Keys().Queue("q"))
	want := []string{
		`{"class":"WithID","queue":"q","args":[1]}`,
		`{"class":"Object","queue":"q","args":[{"user":7}]}`,
		`{"class":"Big","queue":"q","args":[12345678901234567000]}`,
	}
	if out.Transferred != 3 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("node-resque promoted (%d):\n%s\nwant (as documented):\n%s", out.Transferred, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// node-resque's Scheduler and four resque-go movers promote the same
// buckets at once, items from both producers: each item is promoted
// exactly once, and the two sides' counts add up.
func TestNodeSchedulerAndResqueGoMoversTogether(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const half = 1500
	e.nodeEnqueueAt("q", 0, half)
	e.goEnqueueAt("q", half, half)
	var mu sync.Mutex
	goMoved := 0
	var movers []*delayedio.Mover
	for i := 0; i < 4; i++ {
		m, err := delayedio.NewMover(delayedio.MoverConfig{Client: e.c, Interval: 10 * time.Millisecond, OnPass: func(n int) {
			mu.Lock()
			goMoved += n
			mu.Unlock()
		}})
		if err != nil {
			t.Fatal(err)
		}
		movers = append(movers, m)
	}
	var out struct{ Transferred int }
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.node("schedule", nil, &out)
	}()
	for _, m := range movers {
		m.Start(context.Background())
	}
	wg.Wait()
	for _, m := range movers {
		m.Stop()
	}
	e.promotedOnce("q", 2*half)
	mu.Lock()
	defer mu.Unlock()
	if out.Transferred+goMoved != 2*half {
		t.Errorf("node-resque transferred %d, resque-go moved %d: want %d in all", out.Transferred, goMoved, 2*half)
	}
	t.Logf("node-resque transferred %d, resque-go's movers %d", out.Transferred, goMoved)
}

// resque-go removes node-resque's items through the index: the lookup
// tries node-resque's key order, {"class","queue","args"}, too.
func TestResqueGoRemovesNodeResqueItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.nodeEnqueueAt("q", 0, 100)
	r, err := delayedio.Remove(context.Background(), e.c, delayed.Filter{Class: "J", Queue: "q", Args: []byte(`[7]`)}, nil)
	if err != nil || r.Removed != 1 || r.Unindexed != 1 {
		t.Fatalf("remove through the index: %+v, %v", r, err)
	}
	n, err := delayedio.Count(context.Background(), e.c, delayed.Filter{})
	if err != nil || n.Items != 99 {
		t.Fatalf("count after remove: %+v, %v", n, err)
	}
	item, _ := protocol.DelayedItemForms("J", []byte(`[8]`), "q")
	if len(item) < 2 || string(item[1]) != `{"class":"J","queue":"q","args":[8]}` {
		t.Errorf("node-resque form = %q", item)
	}
}
