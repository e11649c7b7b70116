package massio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/massqueue"
)

type jobView struct {
	SourceID string `json:"sourceId"`
	Args     struct {
		Batch string `json:"batch"`
		N     int    `json:"n"`
	} `json:"args"`
}

func view(t testing.TB, p []byte) jobView {
	var v jobView
	if err := json.Unmarshal(p, &v); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return v
}

// Within a unit, jobs of different batches interleave; each job's record
// names its batch; batches run in the producer's order.
func TestUnitInterleaves(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clk := newClock()
	a := e.allocator(mustConfig(t, testConfig), clk)
	e.beat("imports", "n1-0")
	b1 := e.releasedBatch("s1", "import", 5)
	b2 := e.releasedBatch("s2", "import", 5)
	e.pass(a)
	w := e.worker(1, protocol.UnitSource("imports", "n1-0"))
	var order []string
	for {
		res, ok := w.claim()
		if !ok {
			break
		}
		v := view(t, res.Payload)
		if res.Queue != "committed:"+v.Args.Batch || res.Source.List != "committed:"+v.Args.Batch {
			t.Fatalf("job of %s reported %+v", v.Args.Batch, res.Source)
		}
		rec, _ := e.c.WorkerRecord(context.Background(), w.id)
		if r, err := protocol.ParseWorkerRecord(rec); err != nil || r.Queue != res.Queue || r.Source != res.Source.List {
			t.Fatalf("record %s: %v", rec, err)
		}
		order = append(order, fmt.Sprintf("%s/%d", v.SourceID, v.Args.N))
		w.finish(res, rdb.OutcomeOK)
	}
	got := strings.Join(order, " ")
	if got != "s1/0 s2/0 s1/1 s2/1 s1/2 s2/2 s1/3 s2/3 s1/4 s2/4" { // the older batch first
		t.Errorf("order: %s", got)
	}
	clk.Add(time.Second)
	if st := e.pass(a); st.Finished != 2 {
		t.Errorf("finish: %+v", st)
	}
	if e.int("HLEN", e.ns+":pool:imports") != 0 || e.int("EXISTS", e.ns+":pool:imports:n1-0:queues") != 0 {
		t.Error("finished batches left")
	}
	_, _ = b1, b2
}

// The design's reference scenario, with workers as goroutines: 3 sources with batches
// of 1,000, 100 and 10 jobs (two batches each), a pool of 2 units of 2
// workers; then every worker of one unit dies holding a job. Never two
// active batches of a source, batches to the least-loaded unit, every job
// finished exactly once.
func TestUnitsEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	clk := newClock()
	cfg := mustConfig(t, testConfig)
	a := e.allocator(cfg, clk)
	units := []string{"n1-0", "n1-1"}
	e.beat("imports", units...)
	sizes := map[string]int{"s1": 1000, "s2": 100, "s3": 10}
	total := 0
	for round := 0; round < 2; round++ {
		for _, s := range []string{"s1", "s2", "s3"} {
			b, err := massio.NewBatch(e.c, s, "import", 0)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < sizes[s]; i++ {
				if err := b.Push(ctx, massqueue.Job{Class: "J", Args: []byte(fmt.Sprintf(`{"batch":%q,"n":%d}`, s, round*10000+i))}); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			total += sizes[s]
		}
	}
	st := e.pass(a)
	if st.Batches[rdb.BatchAssigned] != 3 || st.Batches[rdb.BatchBacklog] != 3 {
		t.Fatalf("allocation: %+v", st)
	}
	loads := map[string]int{}
	for _, u := range units {
		loads[u] = len(e.units("imports", u))
	}
	if loads["n1-0"] != 2 || loads["n1-1"] != 1 {
		t.Fatalf("loads %v: want the least-loaded unit each time (2 and 1)", loads)
	}

	var mu sync.Mutex
	done := map[string]int{}
	unitDone := map[int]int{}
	var kill sync.Once
	killed := make(chan struct{})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for ui, u := range units {
		for k := 0; k < 2; k++ {
			w := e.worker(ui*10+k, protocol.UnitSource("imports", u))
			wg.Add(1)
			go func(unit int) {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					res, ok := w.claim()
					if !ok {
						<-time.After(time.Millisecond) // an idle worker polls (bounded)
						continue
					}
					v := view(t, res.Payload)
					mu.Lock()
					n := unitDone[unit]
					mu.Unlock()
					if unit == 1 && n >= 50 {
						// the whole unit dies holding its jobs (kill -9): the
						// record stays, no finish comes
						kill.Do(func() { close(killed) })
						return
					}
					w.finish(res, rdb.OutcomeOK)
					mu.Lock()
					done[fmt.Sprintf("%s/%d", v.SourceID, v.Args.N)]++
					unitDone[unit]++
					mu.Unlock()
				}
			}(ui)
		}
	}
	// the allocator and the heartbeats run meanwhile; unit n1-1 stops beating
	// when it dies, the recovery service prunes its workers
	deadline := time.Now().Add(15 * time.Second)
	recovered := false
	for {
		mu.Lock()
		n := len(done)
		mu.Unlock()
		if n == total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d jobs done", n, total)
		}
		clk.Add(time.Second)
		select {
		case <-killed:
			if !recovered {
				recovered = true
				for k := 0; k < 2; k++ {
					id := e.worker(10+k, protocol.Source{}).id
					rec, _ := e.c.WorkerRecord(ctx, id)
					if rec == nil {
						continue
					}
					r, _ := protocol.ParseWorkerRecord(rec)
					if _, err := e.c.Prune(ctx, rdb.PruneArgs{WorkerID: id, Record: rec, Queue: r.Queue, Source: r.SourceOf(), Payload: r.Payload, MaxRecoveries: 3, Host: "h"}); err != nil {
						t.Fatal(err)
					}
				}
			}
		default:
			_ = e.c.UnitBeat(ctx, "imports", "n1-1", clk.Now())
		}
		_ = e.c.UnitBeat(ctx, "imports", "n1-0", clk.Now())
		e.pass(a)
		// never two active batches of one source in the pool
		active := map[string]int{}
		for _, u := range units {
			for _, id := range e.units("imports", u) {
				s, _, _, _ := protocol.ParseBatchID(id)
				if e.int("EXISTS", e.ns+":committed:"+id) == 1 {
					active[s]++
				}
			}
		}
		for s, n := range active {
			if n > 1 {
				t.Fatalf("source %s has %d active batches", s, n)
			}
		}
		<-time.After(2 * time.Millisecond) // sampling pace
	}
	close(stop)
	wg.Wait()
	if !recovered {
		t.Fatal("the unit never died")
	}
	for j, n := range done {
		if n != 1 {
			t.Errorf("job %s finished %d times", j, n)
		}
	}
	clk.Add(time.Minute)
	_ = e.c.UnitBeat(ctx, "imports", "n1-0", clk.Now())
	e.pass(a)
	if e.int("HLEN", e.ns+":pool:imports") != 0 || e.int("LLEN", e.ns+":committed") != 0 || e.int("EXISTS", e.ns+":pool:imports:n1-1:queues") != 0 {
		t.Errorf("left behind: pool %v, committed %d", e.strs("HGETALL", e.ns+":pool:imports"), e.int("LLEN", e.ns+":committed"))
	}
}
