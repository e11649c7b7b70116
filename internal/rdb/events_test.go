package rdb_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
)

func eventsClient(t *testing.T, on, unbatched bool) *rdb.Client {
	t.Helper()
	c, err := rdb.New(rdb.Options{URL: os.Getenv(redisEnv), Namespace: redistest.Namespace(t), Unbatched: unbatched,
		Events: rdb.EventsConfig{On: on, MaxLen: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// One job's life, retried once and rescheduled once, through each way a
// slot finishes and claims (alone, finish-and-claim, a batch): exactly one
// event a state change, in order, with the job's fields.
func TestEventsOfOneJobInOrder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		unbatched bool
		serial    bool
	}{{"batched", false, false}, {"unbatched", true, false}, {"serial", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := eventsClient(t, true, tc.unbatched)
			payload := []byte(`{"class":"Mail","args":[1],"id":"j1","tags":["t1"]}`)
			if err := c.EnqueueTracked(ctx, rdb.TrackedJob{Queue: "q", Class: "Mail", ID: "j1", Payload: payload,
				Tags: []string{"t1"}, Event: true, Events: rdb.EventsConfig{MaxLen: 1000}}); err != nil {
				t.Fatal(err)
			}
			src := protocol.QueueSource("q")
			src.Serial = tc.serial
			args := rdb.ClaimArgs{WorkerID: "h:1:q", Host: "h", Sources: []protocol.Source{src}, Now: time.Now(), Token: "0123456789abcdef0123456789abcdef"}
			res, err := c.Claim(ctx, args)
			if err != nil || res.Payload == nil {
				t.Fatalf("claim: %+v %v", res, err)
			}
			outcomes := []rdb.Outcome{
				{Kind: rdb.OutcomeRetry, Push: payload, Attempt: 1},
				{Kind: rdb.OutcomeReschedule, Push: payload, Attempt: 2},
				{Kind: rdb.OutcomeOK, Attempt: 2, Duration: 1500 * time.Millisecond},
			}
			for i, o := range outcomes {
				o.Seq, o.Class, o.JobID, o.Now, o.Tags, o.Token = res.Seq, "Mail", "j1", time.Now(), []string{"t1"}, args.Token
				if i < len(outcomes)-1 {
					ferr, next, err := c.FinishAndClaim(ctx, "h:1:q", "h", src, o, args)
					if err != nil || ferr != nil || next.Payload == nil {
						t.Fatalf("finish %s and claim: %v %v %+v", o.Kind, ferr, err, next)
					}
					res = next
				} else if err := c.Finish(ctx, "h:1:q", "h", src, o); err != nil {
					t.Fatalf("finish: %v", err)
				}
			}
			evs, err := c.JobEvents(ctx, "j1")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range evs {
				names = append(names, e.Fields["event"]+"/"+e.Fields["attempt"])
				if e.Fields["class"] != "Mail" || e.Fields["queue"] != "q" {
					t.Errorf("event %v: class and queue", e.Fields)
				}
			}
			want := []string{"enqueued/0", "started/1", "retried/1", "started/1", "rescheduled/2", "started/1", "succeeded/2"}
			if !slices.Equal(names, want) {
				t.Errorf("events %v, want %v", names, want)
			}
			if last := evs[len(evs)-1].Fields; last["duration_ms"] != "1500" || last["worker"] != "h:1:q" {
				t.Errorf("the end's fields: %v", last)
			}
			// the job ended: its tag's index is empty
			jobs, total, err := c.TagJobs(ctx, "t1", 0, 0)
			if err != nil || total != 0 || len(jobs) != 0 {
				t.Errorf("tag t1 after the job's end: %v %d %v", jobs, total, err)
			}
		})
	}
}

// Off, the job's path writes no stream, and a tagged job is listed until it ends.
func TestEventsOffWritesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := eventsClient(t, false, false)
	payload := []byte(`{"class":"A","args":[],"id":"x1","tags":["a","b"]}`)
	if err := c.EnqueueTracked(ctx, rdb.TrackedJob{Queue: "q", Class: "A", ID: "x1", Payload: payload, Tags: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Enqueue(ctx, "q", []byte(`{"class":"B","args":[]}`)); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"a", "b"} {
		jobs, total, err := c.TagJobs(ctx, tag, 0, 10)
		if err != nil || total != 1 || len(jobs) != 1 || jobs[0].ID != "x1" {
			t.Fatalf("tag %s: %v %d %v", tag, jobs, total, err)
		}
	}
	args := rdb.ClaimArgs{WorkerID: "h:1:q", Host: "h", Queues: []string{"q"}, Now: time.Now()}
	res, err := c.Claim(ctx, args)
	if err != nil || res.Payload == nil {
		t.Fatal(res, err)
	}
	o := rdb.Outcome{Seq: res.Seq, Kind: rdb.OutcomeFail, Class: "A", JobID: "x1", Tags: []string{"a", "b"}, Now: time.Now(), Entry: []byte(`{}`)}
	ferr, res, err := c.FinishAndClaim(ctx, "h:1:q", "h", protocol.QueueSource("q"), o, args)
	if err != nil || ferr != nil || res.Payload == nil {
		t.Fatal(ferr, err)
	}
	if err := c.Finish(ctx, "h:1:q", "h", protocol.QueueSource("q"), rdb.Outcome{Seq: res.Seq, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"a", "b"} {
		if _, total, _ := c.TagJobs(ctx, tag, 0, 10); total != 0 {
			t.Errorf("tag %s still lists the failed job", tag)
		}
	}
	if evs, err := c.LatestEvents(ctx, 10); err != nil || len(evs) != 0 {
		t.Errorf("events off: %v %v", evs, err)
	}
}

// Slots finishing and claiming together (the batch script) write one
// started and one succeeded event a job.
func TestEventsFromConcurrentSlots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := eventsClient(t, true, false)
	const jobs, slots = 400, 8
	for i := range jobs {
		id := "j" + strconv.Itoa(i)
		if err := c.Enqueue(ctx, "q", []byte(`{"class":"A","args":[],"id":"`+id+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for s := range slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wid := "h:" + strconv.Itoa(s) + ":q"
			args := rdb.ClaimArgs{WorkerID: wid, Host: "h", Queues: []string{"q"}, Now: time.Now()}
			res, err := c.Claim(ctx, args)
			for err == nil && res.Payload != nil {
				p, _ := protocol.DecodePayload(res.Payload)
				o := rdb.Outcome{Seq: res.Seq, Class: "A", JobID: p.ID, Now: time.Now(), Attempt: 1}
				var ferr error
				ferr, res, err = c.FinishAndClaim(ctx, wid, "h", protocol.QueueSource("q"), o, args)
				if ferr != nil {
					err = ferr
				}
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	evs, err := c.Events(ctx, "", 10*jobs)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string][]string{}
	for _, e := range evs {
		seen[e.Fields["id"]] = append(seen[e.Fields["id"]], e.Fields["event"])
	}
	for i := range jobs {
		id := "j" + strconv.Itoa(i)
		if got := seen[id]; !slices.Equal(got, []string{"started", "succeeded"}) {
			t.Errorf("%s: %v", id, got)
		}
	}
	if len(evs) != 2*jobs {
		t.Errorf("%d events for %d jobs", len(evs), jobs)
	}
}
