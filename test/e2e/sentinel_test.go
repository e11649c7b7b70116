package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redisproc"
	"github.com/resque-go/resque-go/internal/redistest"
)

const sentinelMaster = "resque-e2e"

// sentinelGroup starts a primary, a replica and three Sentinels (quorum
// 2, down-after-milliseconds 1000, failover-timeout 5000) on free local
// ports, and returns them once every Sentinel knows the replica and the
// two others.
func sentinelGroup(t *testing.T) (primary, replica *redisproc.Server, url string) {
	t.Helper()
	if !redisproc.SentinelSupport() {
		t.Skip("redis-server cannot run as a Sentinel (--sentinel): no failover test")
	}
	// no 5 s delay before the replica's first sync (repl-diskless-sync-delay)
	primary, err := redisproc.StartWith(redisproc.Options{Args: []string{"--repl-diskless-sync-delay", "0"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(primary.Stop)
	replica, err = redisproc.StartWith(redisproc.Options{Args: []string{"--replicaof", "127.0.0.1", strconv.Itoa(primary.Port)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(replica.Stop)
	conf := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d 2\nsentinel down-after-milliseconds %[1]s 1000\nsentinel failover-timeout %[1]s 5000\n",
		sentinelMaster, primary.Port)
	var addrs []string
	var sentinels []*rdb.Client
	for range 3 {
		s, err := redisproc.StartWith(redisproc.Options{Config: conf, Args: []string{"--sentinel"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		addrs = append(addrs, s.Addr())
		c, err := rdb.New(rdb.Options{URL: s.URL(), DialTimeout: time.Second, ReadTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		sentinels = append(sentinels, c)
	}
	rc, err := rdb.New(rdb.Options{URL: replica.URL(), DialTimeout: time.Second, ReadTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	redistest.Eventually(t, 0, func() bool {
		info, err := rc.Do(context.Background(), "INFO", "replication")
		if err != nil || !strings.Contains(string(info.([]byte)), "master_link_status:up") {
			return false
		}
		for _, c := range sentinels {
			others, err1 := c.Do(context.Background(), "SENTINEL", "SENTINELS", sentinelMaster)
			replicas, err2 := c.Do(context.Background(), "SENTINEL", "REPLICAS", sentinelMaster)
			if err1 != nil || err2 != nil || len(others.([]any)) != 2 || len(replicas.([]any)) != 1 {
				return false
			}
		}
		return true
	}, "the replica to sync and the sentinels to find it and each other")
	return primary, replica, "redis+sentinel://" + strings.Join(addrs, ",") + "/" + sentinelMaster
}

// acked is what the enqueuer saw: each job it enqueued, by number, with
// when its first attempt began; the number of jobs Redis had acknowledged
// when the test asked the replica to confirm the writes so far.
type acked struct {
	mu         sync.Mutex
	started    []time.Time // by job number, for the acknowledged ones
	ackedAt    []time.Time // when each was acknowledged
	checkpoint int
	retries    int
}

func (a *acked) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.started)
}

// A worker and an enqueuer on a redis+sentinel:// URL go on through a
// failover: the primary is killed (SIGKILL), the Sentinels promote the
// replica, and jobs are enqueued and run through the new master. Every
// job acknowledged before the last write the replica confirmed (WAIT)
// runs; a job acknowledged in the instant before the kill may be lost
// with the writes not yet replicated (asynchronous replication): the test
// counts those and reports them.
func TestSentinelFailover(t *testing.T) {
	t.Parallel()
	primary, replica, url := sentinelGroup(t)
	ns := redistest.Namespace(t)
	ran := filepath.Join(t.TempDir(), "ran")
	w := startArgs(t, "work", "--redis", url, "--namespace", ns, "-q", "q", "-c", "2", "--log-level", "warn",
		"--exec", "*=echo \"$RESQUE_ARGS\" >> "+ran)

	c, err := rdb.New(rdb.Options{URL: url, Namespace: ns, DialTimeout: time.Second, ReadTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, stop := context.WithCancel(context.Background())
	var a acked
	enqueued := make(chan struct{})
	go func() { // the enqueuer: one job every 10 ms, each retried until acknowledged
		defer close(enqueued)
		for i := 0; ctx.Err() == nil; i++ {
			began := time.Now()
			payload := fmt.Appendf(nil, `{"class":"Job","args":[%d]}`, i)
			for {
				err := c.Enqueue(ctx, "q", payload)
				if err == nil {
					break
				}
				if !rdb.IsTransient(err) || ctx.Err() != nil {
					return
				}
				a.mu.Lock()
				a.retries++
				a.mu.Unlock()
				<-time.After(50 * time.Millisecond)
			}
			a.mu.Lock()
			a.started = append(a.started, began)
			a.ackedAt = append(a.ackedAt, time.Now())
			a.mu.Unlock()
			<-time.After(10 * time.Millisecond)
		}
	}()
	defer func() {
		stop()
		<-enqueued
	}()
	ranJobs := func() map[int]int {
		seen := map[int]int{}
		b, _ := os.ReadFile(ran)
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var args []int
			if json.Unmarshal([]byte(line), &args) == nil && len(args) == 1 {
				seen[args[0]]++
			}
		}
		return seen
	}
	redistest.Eventually(t, 0, func() bool { return len(ranJobs()) >= 30 }, "jobs to run through the first master")

	// The replica confirms every write before the checkpoint (the
	// replication stream keeps their order); then the primary dies.
	a.mu.Lock()
	a.checkpoint = len(a.started)
	a.mu.Unlock()
	if _, err := c.Do(context.Background(), "INCR", ns+":checkpoint"); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Do(context.Background(), "WAIT", 1, 2000); err != nil || n.(int64) != 1 {
		t.Fatalf("WAIT = %v, %v; want the replica's acknowledgement", n, err)
	}
	killed := time.Now()
	primary.Stop() // SIGKILL
	t.Logf("primary killed; %d jobs acknowledged, %d before the checkpoint", a.count(), a.checkpoint)

	// Jobs are enqueued and run through the new master.
	after := func() []int {
		a.mu.Lock()
		defer a.mu.Unlock()
		var out []int
		for i, s := range a.started {
			if s.After(killed) {
				out = append(out, i)
			}
		}
		return out
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(after()) < 30 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d jobs enqueued in 30 s after the kill (%d retries)", len(after()), a.retries)
		}
		<-time.After(50 * time.Millisecond)
	}
	stop()
	<-enqueued
	total := a.count()
	redistest.Eventually(t, 0, func() bool {
		seen := ranJobs()
		for _, i := range after() {
			if seen[i] == 0 {
				return false
			}
		}
		return true
	}, "every job acknowledged after the kill to run")
	redistest.Eventually(t, 0, func() bool {
		n, err := c.Do(context.Background(), "LLEN", c.Keys().Queue("q"))
		return err == nil && n.(int64) == 0
	}, "the queue to drain")
	if addr, err := c.Do(context.Background(), "CONFIG", "GET", "port"); err != nil || string(addr.([]any)[1].([]byte)) != strconv.Itoa(replica.Port) {
		t.Errorf("the client talks to port %v (%v), want the promoted replica's %d", addr, err, replica.Port)
	}

	var resumed time.Duration // from the kill to the first acknowledgement of a job begun after it
	for _, i := range after()[:1] {
		resumed = a.ackedAt[i].Sub(killed)
	}
	seen := ranJobs()
	var lostConfirmed, lostLastInstant, twice []int
	for i := range total {
		switch {
		case seen[i] > 1:
			twice = append(twice, i)
		case seen[i] == 1:
		case i < a.checkpoint:
			lostConfirmed = append(lostConfirmed, i)
		default:
			lostLastInstant = append(lostLastInstant, i)
		}
	}
	t.Logf("%d jobs acknowledged (%d before the checkpoint, %d after the kill), %d enqueue retries; "+
		"writes resumed %.1fs after the kill; lost in the last instant before the kill (not yet replicated): %d %v; run twice: %d %v",
		total, a.checkpoint, len(after()), a.retries, resumed.Seconds(), len(lostLastInstant), lostLastInstant, len(twice), twice)
	if len(lostConfirmed) > 0 {
		t.Errorf("jobs acknowledged before the replica's confirmation never ran: %v", lostConfirmed)
	}
	w.signal(t, syscall.SIGQUIT)
	if code := w.wait(t); code != 0 {
		t.Errorf("work exited %d after the failover", code)
	}
}
