package node_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

// uniqueEnv is a node whose "Job" handler holds each job until released,
// and a producer client, on one namespace.
type uniqueEnv struct {
	*env
	cl      *client.Client
	started chan *worker.Job
	release chan error
	runs    atomic.Int32
}

func newUniqueEnv(t *testing.T, failRetries int) *uniqueEnv {
	t.Helper()
	e := &uniqueEnv{env: newEnv(t), started: make(chan *worker.Job, 16), release: make(chan error, 16)}
	cl, err := client.New(client.Options{URL: os.Getenv(redisEnv), Namespace: e.ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	e.cl = cl
	reg := worker.NewRegistry()
	reg.Register("Job", func(ctx context.Context, j *worker.Job) error {
		e.runs.Add(1)
		e.started <- j
		select {
		case err := <-e.release:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	cfg := e.config("q")
	cfg.FailRetries = failRetries
	n, err := node.New(cfg, reg, node.WithLogger(zerolog.New(e.log)), node.WithTitle(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *uniqueEnv) state(uid string) string {
	v, err := redis.String(e.client.Do(context.Background(), "GET", e.client.Keys().UniqueState(uid)))
	if errors.Is(err, redis.ErrNil) {
		return ""
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func (e *uniqueEnv) waitStart() *worker.Job {
	e.t.Helper()
	select {
	case j := <-e.started:
		return j
	case <-time.After(20 * time.Second):
		e.t.Fatal("no job started")
		return nil
	}
}

// A deferrable job that meets its uid running is parked, refused again
// while parked, and released after the running job succeeds: through the
// delayed queue after its deferrableBy, or at once for 0.
func TestUniqueDeferredReleasedAfterSuccess(t *testing.T) {
	t.Parallel()
	e := newUniqueEnv(t, 1)
	ctx := context.Background()
	k := e.client.Keys()
	if _, err := e.cl.Enqueue(ctx, "q", "Job", 1); err != nil { // a plain job costs no unique key
		t.Fatal(err)
	}
	e.waitStart()
	e.release <- nil
	first, err := e.cl.EnqueueRaw(ctx, "q", "Job", []byte("[1]"), client.Unique("U"), client.DeferrableBy(0))
	if err != nil || first.Deferred {
		t.Fatalf("first enqueue = %+v, %v", first, err)
	}
	e.waitStart()
	if s := e.state("U"); s != "running" {
		t.Fatalf("state while running = %q", s)
	}
	parked, err := e.cl.EnqueueRaw(ctx, "q", "Job", []byte("[2]"), client.Unique("U"), client.DeferrableBy(0))
	if err != nil || !parked.Deferred {
		t.Fatalf("enqueue while running = %+v, %v; want deferred", parked, err)
	}
	if _, err := e.cl.EnqueueRaw(ctx, "q", "Job", []byte("[3]"), client.Unique("U"), client.DeferrableBy(0)); !errors.Is(err, client.ErrDuplicate) {
		t.Fatalf("second deferral = %v, want ErrDuplicate (the first deferred job wins)", err)
	}
	if _, err := e.cl.EnqueueRaw(ctx, "q", "Job", []byte("[4]"), client.Unique("U")); !errors.Is(err, client.ErrDuplicate) {
		t.Fatalf("non-deferrable while running = %v, want ErrDuplicate", err)
	}
	e.release <- nil // success: the parked job is released now (deferrableBy 0)
	j := e.waitStart()
	if got := string(j.Args); got != "[2]" {
		t.Fatalf("released job args = %v, want the parked job's [2]", j.Args)
	}
	if s := e.state("U"); s != "running" {
		t.Fatalf("state of the released job = %q", s)
	}
	// park one with a delay, then let the running job succeed
	if r, err := e.cl.EnqueueRaw(ctx, "q", "Job", []byte("[5]"), client.Unique("U"), client.DeferrableBy(90*time.Second)); err != nil || !r.Deferred {
		t.Fatalf("deferral with delay = %+v, %v", r, err)
	}
	before := time.Now().Unix()
	e.release <- nil
	redistest.Eventually(t, 0, func() bool {
		return e.do("ZCARD", k.DelayedSchedule()).(int64) == 1
	}, "the deferred job filed in the delayed queue")
	ts, _ := redis.Int64s(e.do("ZRANGE", k.DelayedSchedule(), 0, -1, "WITHSCORES"), nil)
	if ts[1] < before+90 || ts[1] > time.Now().Unix()+90 {
		t.Errorf("due at %d, want now+90 (now %d)", ts[1], before)
	}
	items, _ := redis.ByteSlices(e.do("LRANGE", k.Delayed(ts[1]), 0, -1), nil)
	if len(items) != 1 || e.do("SISMEMBER", k.Timestamps(items[0]), fmt.Sprintf("delayed:%d", ts[1])).(int64) != 1 {
		t.Fatalf("delayed bucket %q: want the parked job, indexed", items)
	}
	if s := e.state("U"); s != "queued" {
		t.Errorf("state while the released job is delayed = %q, want queued", s)
	}
	if ttl := e.do("TTL", k.UniqueState("U")).(int64); ttl < 90+86400-60 || ttl > 90+86400 {
		t.Errorf("TTL of the released job's state = %d, want about a day after it is due", ttl)
	}
	if _, err := e.cl.EnqueueRaw(ctx, "q", "Job", []byte("[6]"), client.Unique("U")); !errors.Is(err, client.ErrDuplicate) {
		t.Errorf("enqueue while the released job is delayed = %v, want ErrDuplicate", err)
	}
	if n := e.runs.Load(); n != 3 {
		t.Errorf("runs = %d, want 3", n)
	}
}

// A failure (no retry left) clears the uid and drops the parked job, as
// the PHP fork did; a retry keeps the uid queued for the job's next copy.
func TestUniqueFailureAndRetry(t *testing.T) {
	t.Parallel()
	e := newUniqueEnv(t, 2)
	ctx := context.Background()
	k := e.client.Keys()
	if _, err := e.cl.EnqueueRaw(ctx, "q", "Job", []byte("[1]"), client.Unique("F")); err != nil {
		t.Fatal(err)
	}
	e.waitStart()
	if r, err := e.cl.EnqueueRaw(ctx, "q", "Job", []byte("[2]"), client.Unique("F"), client.DeferrableBy(0)); err != nil || !r.Deferred {
		t.Fatalf("deferral = %+v, %v", r, err)
	}
	e.release <- errors.New("boom") // attempt 1 of 2: retried
	e.waitStart()
	if s := e.state("F"); s != "running" {
		t.Errorf("state of the retry = %q", s)
	}
	if e.do("EXISTS", k.UniqueDeferred("F")).(int64) != 0 {
		t.Error("the parked job survived the retry (the PHP fork drops it)")
	}
	if r, err := e.cl.EnqueueRaw(ctx, "q", "Job", []byte("[3]"), client.Unique("F"), client.DeferrableBy(0)); err != nil || !r.Deferred {
		t.Fatalf("deferral during the retry = %+v, %v", r, err)
	}
	e.release <- errors.New("boom") // attempt 2 of 2: failed for good
	redistest.Eventually(t, 0, func() bool { return e.do("LLEN", k.Failed()).(int64) == 1 }, "the failure recorded")
	if s := e.state("F"); s != "" {
		t.Errorf("state after the final failure = %q, want none", s)
	}
	if e.do("EXISTS", k.UniqueDeferred("F")).(int64) != 0 {
		t.Error("the parked job was kept after the final failure")
	}
	if n := e.do("LLEN", k.Queue("q")).(int64); n != 0 {
		t.Errorf("queue has %d jobs: the parked job must not be released on failure", n)
	}
	if _, err := e.cl.EnqueueRaw(ctx, "q", "Job", []byte("[4]"), client.Unique("F")); err != nil {
		t.Errorf("the uid is not free after the failure: %v", err)
	}
}

// Jobs written by the resque-v3 PHP producer (its unique field, its keys,
// its deferred payload) get the same transitions.
func TestUniqueResqueV3Payloads(t *testing.T) {
	t.Parallel()
	e := newUniqueEnv(t, 1)
	k := e.client.Keys()
	// what resqu-client writes: SETNX state queued, then the job (its
	// toArray, json_encode'd: class, args, queue, unique, isMonitored)
	job := `{"class":"Job","args":{"n":1},"queue":"q","unique":{"uid":"1506092109.1235","deferrableBy":0},"isMonitored":true}`
	e.do("SET", k.UniqueState("1506092109.1235"), "queued", "NX")
	e.do("RPUSH", k.Queue("q"), job)
	e.waitStart()
	if s := e.state("1506092109.1235"); s != "running" {
		t.Fatalf("state = %q, want running", s)
	}
	// the PHP producer's addDeferred: the state is running, SETNX deferred
	deferred := `{"class":"Job","args":{"n":2},"queue":"q","unique":{"uid":"1506092109.1235","deferrableBy":0}}`
	e.do("SET", k.UniqueDeferred("1506092109.1235"), deferred, "NX")
	e.release <- nil
	j := e.waitStart()
	if string(j.Payload) != deferred {
		t.Errorf("released payload = %s, want the parked bytes %s", j.Payload, deferred)
	}
	e.release <- nil
	redistest.Eventually(t, 0, func() bool { return e.state("1506092109.1235") == "" }, "the uid freed")
	// a numeric uid (json number) is keyed by its literal text
	e.do("RPUSH", k.Queue("q"), `{"class":"Job","args":[],"queue":"q","unique":{"uid":15060921091235}}`)
	e.waitStart()
	if s := e.state("15060921091235"); s != "running" {
		t.Errorf("numeric uid state = %q, want running", s)
	}
	e.release <- nil
	redistest.Eventually(t, 0, func() bool { return e.state("15060921091235") == "" }, "the numeric uid freed")
}
