package rdb_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/rdb"
)

func push(t *testing.T, c *rdb.Client, q string, items ...string) {
	t.Helper()
	for _, it := range items {
		if _, err := c.Do(context.Background(), "RPUSH", c.Keys().Queue(q), it); err != nil {
			t.Fatal(err)
		}
	}
}

func items(t *testing.T, c *rdb.Client, q string) []string {
	t.Helper()
	v, err := redis.Strings(c.Do(context.Background(), "LRANGE", c.Keys().Queue(q), 0, -1))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Payload shapes of Ruby Resque, php-resque (captured), resque-v3 (the
// protocol page's example) and resque-go, plus entries no worker would run.
func queueMix(t *testing.T) (ruby, php []string, v3, garbage []string) {
	t.Helper()
	ruby = fixtures.MustLoad("ruby-resque-3.0.0", "enqueue").List("resque:queue:mail")
	php = fixtures.MustLoad("php-resque-chrisboulton", "enqueue").List("resque:queue:mail")
	if len(ruby) != 2 || len(php) != 3 {
		t.Fatalf("fixtures changed: %d ruby, %d php payloads", len(ruby), len(php))
	}
	v3 = []string{
		`{"class":"Task","args":{"k":"v","n":2},"queue":"q","sourceId":"s1","id":"0123456789abcdef0123456789abcdef","queue_time":1700000000.1234}`,
		`{"class":"Task","args":{"k":"w"},"queue":"q","id":"fedcba9876543210fedcba9876543210","queue_time":1700000000.1234}`,
	}
	garbage = []string{`not json`, `[1,2]`, `{"args":[]}`, `{"class":1,"args":[]}`, `"MailJob"`, `{"class":"MailJob","args":[1,"two"`, ``}
	return ruby, php, v3, garbage
}

func TestQueueRemoveMatches(t *testing.T) {
	t.Parallel()
	ruby, php, v3, garbage := queueMix(t)
	all := slices.Concat(ruby, php, v3, garbage)
	cases := []struct {
		name string
		m    rdb.JobMatch
		gone []string
	}{
		{"ruby class", rdb.JobMatch{Class: "MailJob"}, ruby[:1]},
		{"no such class", rdb.JobMatch{Class: "Nope"}, nil},
		{"php class", rdb.JobMatch{Class: "Mail_Job"}, php[:2]},
		{"php class+id", rdb.JobMatch{Class: "Mail_Job", ID: "90b5db48728ff56f4f2c8129eb47d1df"}, php[1:2]},
		{"id of another class", rdb.JobMatch{Class: "Task", ID: "90b5db48728ff56f4f2c8129eb47d1df"}, nil},
		{"ruby args equal", rdb.JobMatch{Class: "MailJob", Args: []byte(`[1,"two",3.5,{"k":"v"},null,true,12345678901234567890,"unicode é ✓ <tag>&"]`)}, ruby[:1]},
		{"ruby args prefix is not equal", rdb.JobMatch{Class: "MailJob", Args: []byte(`[1,"two"]`)}, nil},
		{"empty args", rdb.JobMatch{Class: "NoArgsJob", Args: []byte(`[]`)}, ruby[1:]},
		{"php wrapped object subset", rdb.JobMatch{Class: "Mail_Job", Args: []byte(`{"k":"v","path":"a/b"}`)}, php[1:2]},
		{"php wrapped object, wrong value", rdb.JobMatch{Class: "Mail_Job", Args: []byte(`{"k":"x"}`)}, nil},
		{"php args as the array it is", rdb.JobMatch{Class: "NoArgs_Job", Args: []byte(`[null]`)}, php[2:]},
		{"v3 object subset", rdb.JobMatch{Class: "Task", Args: []byte(`{"k":"v"}`)}, v3[:1]},
		{"v3 every key", rdb.JobMatch{Class: "Task", Args: []byte(` {"n":2.0,"k":"v"} `)}, v3[:1]},
		{"v3 empty object matches every object", rdb.JobMatch{Class: "Task", Args: []byte(`{}`)}, v3},
		{"v3 key missing", rdb.JobMatch{Class: "Task", Args: []byte(`{"k":"v","x":1}`)}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newClient(t)
			push(t, c, "q", all...)
			for _, chunk := range []int{0, 2} { // one call, and many
				if chunk == 2 {
					c.Do(context.Background(), "DEL", c.Keys().Queue("q"))
					push(t, c, "q", all...)
				}
				n, err := c.RemoveJobs(context.Background(), "q", tc.m, rdb.RemoveOptions{Chunk: chunk})
				want := slices.DeleteFunc(slices.Clone(all), func(s string) bool { return slices.Contains(tc.gone, s) })
				if err != nil || n != int64(len(tc.gone)) {
					t.Fatalf("chunk %d: removed %d, %v; want %d", chunk, n, err, len(tc.gone))
				}
				if got := items(t, c, "q"); !slices.Equal(got, want) {
					t.Fatalf("chunk %d: queue after\n%q\nwant\n%q", chunk, got, want)
				}
			}
		})
	}
}

func TestQueueRemoveRefusesBadMatch(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	push(t, c, "q", `{"class":"A","args":[]}`)
	for _, m := range []rdb.JobMatch{{}, {Class: "A", Args: []byte(`1`)}, {Class: "A", Args: []byte(`"x"`)}, {Class: "A", Args: []byte(`[1`)}, {Class: "A", Args: []byte{}}} {
		if _, err := c.RemoveJobs(context.Background(), "q", m, rdb.RemoveOptions{}); !errors.Is(err, rdb.ErrBadMatch) {
			t.Errorf("%+v: %v, want ErrBadMatch", m, err)
		}
	}
	if got := items(t, c, "q"); len(got) != 1 {
		t.Errorf("queue after refusals: %q", got)
	}
}

func TestQueueClear(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := context.Background()
	if err := c.Enqueue(ctx, "q", []byte(`{"class":"A","args":[]}`)); err != nil {
		t.Fatal(err)
	}
	push(t, c, "q", "x", "y")
	n, err := c.ClearQueue(ctx, "q")
	if err != nil || n != 3 {
		t.Fatalf("clear: %d %v, want 3", n, err)
	}
	if n, err = c.ClearQueue(ctx, "q"); err != nil || n != 0 {
		t.Fatalf("clear again: %d %v, want 0", n, err)
	}
	if qs, _ := c.KnownQueues(ctx); !slices.Equal(qs, []string{"q"}) {
		t.Errorf("queues set after clear: %v (the queue stays known)", qs)
	}
}

// job is a unique payload; every third one is of class Match.
func job(prefix string, i int) string { return jobEvery(prefix, i, 3) }

// jobEvery is a unique payload; every nth one is of class Keep when n is
// negative, of class Match when positive.
func jobEvery(prefix string, i, n int) string {
	class := "Keep"
	if n > 0 && i%n == 0 || n < 0 && i%-n != 0 {
		class = "Match"
	}
	return fmt.Sprintf(`{"class":%q,"args":[%d],"id":"%s-%d"}`, class, i, prefix, i)
}

func isMatch(s string) bool { return len(s) > 16 && s[:16] == `{"class":"Match"` }

// Between chunks (the Progress callback), workers pop from the head, a
// dead worker's job is pushed back to the head and producers push to the
// tail: each call finds its place again. Ids make every payload unique, so
// the result is exact.
func TestQueueRemoveBetweenChunks(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := context.Background()
	var orig []string
	for i := range 300 {
		orig = append(orig, job("o", i))
	}
	push(t, c, "q", orig...)
	key := c.Keys().Queue("q")
	var popped, pushed []string
	step := 0
	var pushedBack string
	progress := func(rdb.RemoveProgress) {
		step++
		for range step % 4 { // 0 to 3 pops
			v, err := redis.String(c.Do(ctx, "LPOP", key))
			if err == nil {
				popped = append(popped, v)
			}
		}
		p := job("p", step)
		pushed = append(pushed, p)
		push(t, c, "q", p)
		if step == 4 && len(popped) > 0 { // a recovery: LPUSH of a job taken earlier
			pushedBack = popped[len(popped)-1]
			popped = popped[:len(popped)-1]
			c.Do(ctx, "LPUSH", key, pushedBack)
		}
	}
	n, err := c.RemoveJobs(ctx, "q", rdb.JobMatch{Class: "Match"}, rdb.RemoveOptions{Chunk: 7, Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	got := items(t, c, "q")
	var want []string
	var wantRemoved int64
	for _, s := range orig {
		switch {
		case slices.Contains(popped, s):
		case isMatch(s) && s != pushedBack:
			wantRemoved++
		default:
			want = append(want, s)
		}
	}
	if pushedBack != "" && isMatch(pushedBack) {
		wantRemoved++ // it is an original job again, at the head
	}
	want = slices.DeleteFunc(want, func(s string) bool { return s == pushedBack && isMatch(s) })
	want = append(want, pushed...)
	if n != wantRemoved || !slices.Equal(got, want) {
		t.Fatalf("removed %d, want %d (%d steps, %d popped)\nqueue %q\nwant  %q", n, wantRemoved, step, len(popped), got, want)
	}
}

// When every job examined matches, nothing separates the jobs left to
// examine from those pushed since: pops at the head must not make a chunk
// reach into the pushed jobs, and a job pushed back to the head must not
// make it miss the last one left.
func TestQueueRemoveAllMatchingBetweenChunks(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := context.Background()
	key := c.Keys().Queue("q")
	var orig []string
	for i := range 60 {
		orig = append(orig, jobEvery("o", i, 1))
	}
	push(t, c, "q", orig...)
	var popped, pushed []string
	step := 0
	back := jobEvery("back", 0, 1)
	n, err := c.RemoveJobs(ctx, "q", rdb.JobMatch{Class: "Match"}, rdb.RemoveOptions{Chunk: 5, Progress: func(rdb.RemoveProgress) {
		step++
		if step == 2 { // a dead worker's job is pushed back to the head
			c.Do(ctx, "LPUSH", key, back)
			return
		}
		for range 3 {
			if v, err := redis.String(c.Do(ctx, "LPOP", key)); err == nil {
				popped = append(popped, v)
			}
		}
		for i := range 2 {
			p := jobEvery(fmt.Sprintf("p%d", step), i, 1)
			pushed = append(pushed, p)
			push(t, c, "q", p)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	// the last pops (after the last chunk) take pushed jobs
	want := slices.DeleteFunc(slices.Clone(pushed), func(s string) bool { return slices.Contains(popped, s) })
	wantRemoved := int64(len(orig) + 1 - (len(popped) - (len(pushed) - len(want))))
	if got := items(t, c, "q"); !slices.Equal(got, want) || n != wantRemoved {
		t.Fatalf("removed %d, want %d; queue %q\nwant %q", n, wantRemoved, got, want)
	}
}

// Runs of byte-identical payloads (Ruby's id-less jobs) are all found
// when nobody else touches the queue.
func TestQueueRemoveIdenticalPayloads(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	a, b := `{"class":"A","args":[]}`, `{"class":"B","args":[]}`
	var all, want []string
	for i := range 200 {
		it := a
		if i%10 == 9 || i < 20 {
			it = b
		}
		all = append(all, it)
		if it == b {
			want = append(want, it)
		}
	}
	push(t, c, "q", all...)
	n, err := c.RemoveJobs(context.Background(), "q", rdb.JobMatch{Class: "A"}, rdb.RemoveOptions{Chunk: 9})
	if err != nil || n != int64(len(all)-len(want)) {
		t.Fatalf("removed %d, %v; want %d", n, err, len(all)-len(want))
	}
	if got := items(t, c, "q"); !slices.Equal(got, want) {
		t.Fatalf("queue after: %q", got)
	}
}

// The done-criterion: a producer pushes and a consumer pops while remove
// runs; it deletes exactly the matching jobs that were there when it began
// and were not popped, and never deletes, loses or reorders another job.
// RESQUE_GO_QUEUE_REMOVE_JOBS=100000 runs it at full size.
func TestQueueRemoveConcurrent(t *testing.T) {
	t.Parallel()
	size := 20000
	if testing.Short() {
		size = 3000
	}
	if v := os.Getenv("RESQUE_GO_QUEUE_REMOVE_JOBS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		size = n
	}
	c := newClient(t)
	ctx := context.Background()
	key := c.Keys().Queue("q")
	orig := make([]any, 0, size+1)
	orig = append(orig, key)
	for i := range size { // nearly all match: little but the window tells old from new
		orig = append(orig, jobEvery("o", i, -1000))
	}
	for i := 1; i < len(orig); i += 1000 {
		if _, err := c.Do(ctx, "RPUSH", append([]any{key}, orig[i:min(i+1000, len(orig))]...)...); err != nil {
			t.Fatal(err)
		}
	}

	started := make(chan struct{})
	var startOnce sync.Once
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var popped, pushed []string
	var pops, pushes atomic.Int64
	wg.Add(2)
	go func() { // consumer
		defer wg.Done()
		<-started
		for {
			select {
			case <-stop:
				return
			default:
			}
			v, err := redis.String(c.Do(ctx, "LPOP", key))
			if err == nil {
				popped = append(popped, v)
				pops.Add(1)
			}
		}
	}()
	go func() { // producer
		defer wg.Done()
		<-started
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := job("p", i)
			if _, err := c.Do(ctx, "RPUSH", key, p); err == nil {
				pushed = append(pushed, p)
				pushes.Add(1)
			}
		}
	}()
	begin := time.Now()
	chunks := 0
	n, err := c.RemoveJobs(ctx, "q", rdb.JobMatch{Class: "Match"}, rdb.RemoveOptions{Progress: func(rdb.RemoveProgress) {
		chunks++
		startOnce.Do(func() { close(started) })
		// let the others in between chunks (2 cores, shared)
		for p0, q0, deadline := pops.Load(), pushes.Load(), time.Now().Add(50*time.Millisecond); pops.Load() == p0 || pushes.Load() == q0; {
			if time.Now().After(deadline) {
				break
			}
			<-time.After(50 * time.Microsecond)
		}
	}})
	took := time.Since(begin)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d jobs: removed %d in %d chunks in %v while %d were popped and %d pushed", size, n, chunks, took, len(popped), len(pushed))
	if len(popped) == 0 || len(pushed) == 0 {
		t.Fatalf("the consumer (%d) or producer (%d) never ran during the removal", len(popped), len(pushed))
	}

	got := items(t, c, "q")
	// what remains plus what was popped, in order, is the original queue
	// then the pushed jobs, less exactly the matching originals not popped
	poppedSet := map[string]bool{}
	for _, p := range popped {
		poppedSet[p] = true
	}
	var want []string
	var wantRemoved int64
	for _, o := range orig[1:] {
		s := o.(string)
		if isMatch(s) && !poppedSet[s] {
			wantRemoved++
			continue
		}
		want = append(want, s)
	}
	want = append(want, pushed...)
	seen := append(slices.Clone(popped), got...)
	if n != wantRemoved || !slices.Equal(seen, want) {
		i := 0
		for i < min(len(seen), len(want)) && seen[i] == want[i] {
			i++
		}
		t.Fatalf("removed %d, want %d; popped+remaining (%d) differs from expected (%d) at %d", n, wantRemoved, len(seen), len(want), i)
	}
}
