package delayedio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/redistest/rdbtest"
)

const redisEnv = "RESQUE_GO_TEST_REDIS"

func TestMain(m *testing.M) { os.Exit(redistest.Main(m, redisEnv)) }

type env struct {
	t  testing.TB
	c  *rdb.Client
	ns string
}

func newEnv(t testing.TB) *env {
	r := rdbtest.New(t, rdb.Options{})
	return &env{t, r.Client, r.NS}
}

func (e *env) do(cmd string, args ...any) any {
	e.t.Helper()
	v, err := e.c.Do(context.Background(), cmd, args...)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func (e *env) strs(cmd string, args ...any) []string {
	e.t.Helper()
	var out []string
	for _, x := range e.do(cmd, args...).([]any) {
		out = append(out, string(x.([]byte)))
	}
	return out
}

// load writes the delayed-queue keys of a fixture into the test namespace.
func (e *env) load(d *fixtures.Dump) {
	e.t.Helper()
	for _, k := range d.Keys {
		name := e.ns + ":" + strings.TrimPrefix(k.Key, "resque:")
		switch k.Type {
		case "list":
			for _, v := range d.List(k.Key) {
				e.do("RPUSH", name, v)
			}
		case "set":
			for _, v := range d.List(k.Key) {
				e.do("SADD", name, v)
			}
		case "zset":
			var pairs [][2]json.Number
			if err := json.Unmarshal(k.Value, &pairs); err != nil {
				e.t.Fatal(err)
			}
			for _, p := range pairs {
				e.do("ZADD", name, p[1].String(), p[0].String())
			}
		}
	}
}

// EnqueueAt writes the same bytes resque-scheduler's enqueue_at writes.
func TestEnqueueAtMatchesResqueScheduler(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ruby := fixtures.MustLoad("resque-scheduler-5.0.0", "delayed-enqueue")
	payload := fixtures.MustLoad("ruby-resque-3.0.0", "enqueue").List("resque:queue:mail")[0]
	at := time.Unix(1795299965, 0)
	if err := delayedio.EnqueueAt(context.Background(), e.c, "mail", []byte(payload), at); err != nil {
		t.Fatal(err)
	}
	k := e.c.Keys()
	want := ruby.List("resque:delayed:1795299965")[0]
	if got := e.strs("LRANGE", k.Delayed(1795299965), 0, -1); len(got) != 1 || got[0] != want {
		t.Errorf("delayed item = %q, resque-scheduler wrote %q", got, want)
	}
	if got := e.strs("SMEMBERS", k.Timestamps([]byte(want))); len(got) != 1 || got[0] != "delayed:1795299965" {
		t.Errorf("timestamps index = %v", got)
	}
	if got := e.strs("ZRANGE", k.DelayedSchedule(), 0, -1, "WITHSCORES"); strings.Join(got, " ") != "1795299965 1795299965" {
		t.Errorf("schedule = %v", got)
	}
}

// The mover promotes what resque-scheduler, node-resque and php-resque put
// in the delayed queue: oldest bucket first, FIFO in a bucket, the item
// without its queue plus id and queue_time; nothing left behind.
func TestMoverPromotesOtherProducersItems(t *testing.T) {
	t.Parallel()
	for _, src := range []struct{ dir, scenario string }{
		{"resque-scheduler-5.0.0", "delayed-enqueue"},
		{"node-resque-9.7.1", "delayed-enqueue"},
		{"php-resque-resque-master", "delayed-enqueue"},
	} {
		t.Run(src.dir, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			d := fixtures.MustLoad(src.dir, src.scenario)
			e.load(d)
			var wantByQueue = map[string][]map[string]json.RawMessage{}
			var buckets []string
			for _, name := range d.Names() {
				if strings.HasPrefix(name, "resque:delayed:") {
					buckets = append(buckets, name)
				}
			}
			sort.Strings(buckets) // same-width timestamps: lexical = numeric
			total := 0
			for _, b := range buckets {
				for _, item := range d.List(b) {
					var m map[string]json.RawMessage
					if err := json.Unmarshal([]byte(item), &m); err != nil {
						t.Fatal(err)
					}
					var q string
					_ = json.Unmarshal(m["queue"], &q)
					delete(m, "queue")
					wantByQueue[q] = append(wantByQueue[q], m)
					total++
				}
			}
			now := time.Unix(1900000000, 0)
			m, err := delayedio.NewMover(delayedio.MoverConfig{Client: e.c, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			n, err := m.Pass(context.Background())
			if err != nil || n != total {
				t.Fatalf("moved %d (%v), want %d", n, err, total)
			}
			k := e.c.Keys()
			for q, want := range wantByQueue {
				got := e.strs("LRANGE", k.Queue(q), 0, -1)
				if len(got) != len(want) {
					t.Fatalf("queue %s has %d jobs, want %d", q, len(got), len(want))
				}
				for i, raw := range got {
					var g map[string]json.RawMessage
					if err := json.Unmarshal([]byte(raw), &g); err != nil {
						t.Fatal(err)
					}
					for f, v := range want[i] {
						if string(g[f]) != string(v) {
							t.Errorf("%s[%d].%s = %s, want %s (order or bytes changed)", q, i, f, g[f], v)
						}
					}
					// these items have only class, args and queue: promoted as
					// resque-scheduler promotes them, {"class","args"} and nothing else
					if len(g) != 2 || len(g["class"]) == 0 || len(g["args"]) == 0 {
						t.Errorf("promoted payload %s: want class and args only, as resque-scheduler writes", raw)
					}
				}
				if !strings.HasPrefix(got[0], `{"class":`) {
					t.Errorf("promoted payload does not start with class: %s", got[0])
				}
			}
			if left, _ := e.c.ScanKeys(context.Background(), e.ns+":delayed*"); len(left) != 0 {
				t.Errorf("delayed keys left: %v", left)
			}
			if left, _ := e.c.ScanKeys(context.Background(), e.ns+":timestamps:*"); len(left) != 0 {
				t.Errorf("timestamps keys left: %v", left)
			}
		})
	}
}

// Items that cannot be promoted go to failed, never vanish; items not due
// stay.
func TestMoverBadItemsAndFutureItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := e.c.Keys()
	e.do("RPUSH", k.Delayed(100), `{"class":"NoQueue","args":[]}`, `garbage {`, `{"class":"Ok","args":[],"queue":"q"}`)
	e.do("ZADD", k.DelayedSchedule(), 100, 100)
	if err := delayedio.EnqueueAt(context.Background(), e.c, "q", []byte(`{"class":"Future","args":[]}`), time.Unix(300, 0)); err != nil {
		t.Fatal(err)
	}
	m, _ := delayedio.NewMover(delayedio.MoverConfig{Client: e.c, Hostname: "h", Now: func() time.Time { return time.Unix(200, 0) }})
	if n, err := m.Pass(context.Background()); err != nil || n != 3 {
		t.Fatalf("moved %d (%v), want 3", n, err)
	}
	failed := e.strs("LRANGE", k.Failed(), 0, -1)
	if len(failed) != 2 || !strings.Contains(failed[0], "no queue") || !strings.Contains(failed[1], `"payload":"garbage {"`) {
		t.Errorf("failed = %v", failed)
	}
	if q := e.strs("LRANGE", k.Queue("q"), 0, -1); len(q) != 1 || !strings.Contains(q[0], `"Ok"`) {
		t.Errorf("queue = %v", q)
	}
	if n := e.do("ZCARD", k.DelayedSchedule()).(int64); n != 1 {
		t.Errorf("schedule has %d entries, want the future one", n)
	}
}

// Several movers at once never duplicate or lose an item.
func TestConcurrentMovers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 400
	for i := 0; i < n; i++ {
		payload := fmt.Sprintf(`{"class":"J","args":[%d]}`, i)
		if err := delayedio.EnqueueAt(context.Background(), e.c, "q", []byte(payload), time.Unix(int64(1000+i%37), 0)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	counts := make([]int, 4)
	for i := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, _ := delayedio.NewMover(delayedio.MoverConfig{Client: e.c, Now: func() time.Time { return time.Unix(5000, 0) }})
			moved, err := m.Pass(context.Background())
			if err != nil {
				t.Error(err)
			}
			counts[i] = moved
		}()
	}
	wg.Wait()
	sum := 0
	for _, c := range counts {
		sum += c
	}
	q := e.strs("LRANGE", e.c.Keys().Queue("q"), 0, -1)
	seen := map[string]int{}
	for _, p := range q {
		var v struct{ Args []int }
		_ = json.Unmarshal([]byte(p), &v)
		seen[fmt.Sprint(v.Args)]++
	}
	if sum != n || len(q) != n || len(seen) != n {
		t.Errorf("movers reported %d, queue has %d jobs, %d distinct; want %d", sum, len(q), len(seen), n)
	}
}
