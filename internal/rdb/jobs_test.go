package rdb_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
)

const redisEnv = "RESQUE_GO_TEST_REDIS"

func TestMain(m *testing.M) { os.Exit(redistest.Main(m, redisEnv)) }

func newClient(t *testing.T) *rdb.Client {
	t.Helper()
	c, err := rdb.New(rdb.Options{URL: os.Getenv(redisEnv), Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A finish retried after its reply was lost (the first attempt ran and
// claimed the next job) neither counts twice nor touches the new job, and
// the claim part hands that job back.
func TestFinishAndClaimIsSafeToRetry(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := context.Background()
	k := c.Keys()
	for _, p := range []string{`{"class":"A","args":[]}`, `{"class":"B","args":[]}`} {
		if err := c.Enqueue(ctx, "q", []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	args := rdb.ClaimArgs{WorkerID: "h:1:q", Host: "h", Queues: []string{"q"}, Now: time.Now()}
	a, err := c.Claim(ctx, args)
	if err != nil || string(a.Payload) != `{"class":"A","args":[]}` || a.Seq == "" {
		t.Fatalf("claim A: %+v %v", a, err)
	}
	done := rdb.Outcome{Seq: a.Seq, Now: time.Now()}
	ferr, b, err := c.FinishAndClaim(ctx, "h:1:q", "h", protocol.QueueSource("q"), done, args)
	if err != nil || ferr != nil || string(b.Payload) != `{"class":"B","args":[]}` || b.Seq == a.Seq {
		t.Fatalf("finish A + claim B: %v %v %+v", ferr, err, b)
	}
	// the same call again, as after a lost reply
	ferr, again, err := c.FinishAndClaim(ctx, "h:1:q", "h", protocol.QueueSource("q"), done, args)
	if err != nil || !errors.Is(ferr, rdb.ErrNotOwned) || !again.Resumed || string(again.Payload) != string(b.Payload) || again.Seq != b.Seq {
		t.Fatalf("retry: finish %v, claim %+v, err %v; want ErrNotOwned and B resumed", ferr, again, err)
	}
	if err := c.Finish(ctx, "h:1:q", "h", protocol.QueueSource("q"), done); !errors.Is(err, rdb.ErrNotOwned) {
		t.Errorf("a stale finish: %v, want ErrNotOwned", err)
	}
	if n, _ := c.Int(ctx, k.StatProcessed()); n != 1 {
		t.Errorf("stat:processed = %d, want 1", n)
	}
	if err := c.Finish(ctx, "h:1:q", "h", protocol.QueueSource("q"), rdb.Outcome{Seq: b.Seq, Now: time.Now()}); err != nil {
		t.Errorf("finish B: %v", err)
	}
	ferr, empty, err := c.FinishAndClaim(ctx, "h:1:q", "h", protocol.QueueSource("q"), rdb.Outcome{Seq: b.Seq, Now: time.Now()}, args)
	if err != nil || !errors.Is(ferr, rdb.ErrNotOwned) || !empty.Empty {
		t.Errorf("finish of a finished job + claim on an empty queue: %v %+v %v", ferr, empty, err)
	}
	if n, _ := c.Int(ctx, k.StatProcessed()); n != 2 {
		t.Errorf("stat:processed = %d, want 2", n)
	}
}

// A record left by an earlier version (no claim sequence) is resumed with a
// fresh sequence, so it can be finished instead of being resumed forever.
func TestResumeWithoutSequence(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := context.Background()
	k := c.Keys()
	if _, err := c.Do(ctx, "SET", k.Worker("h:2:q"), `{"queue":"q","run_at":"2026-01-01T00:00:00Z","payload":{"class":"Old","args":[]}}`); err != nil {
		t.Fatal(err)
	}
	res, err := c.Claim(ctx, rdb.ClaimArgs{WorkerID: "h:2:q", Host: "h", Queues: []string{"q"}, Now: time.Now()})
	if err != nil || !res.Resumed || res.Seq == "" || res.Seq == "0" {
		t.Fatalf("resume: %+v %v", res, err)
	}
	if err := c.Finish(ctx, "h:2:q", "h", protocol.QueueSource("q"), rdb.Outcome{Seq: res.Seq, Now: time.Now()}); err != nil {
		t.Errorf("finish the resumed job: %v", err)
	}
}
