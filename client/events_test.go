package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/internal/protocol"
)

// A tagged job with its enqueued event: JobsByTag lists it, JobEvents and
// a subscription from the stream's start see the event; a subscription
// from now sees only what comes after.
func TestClientTagsAndEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	c := e.c
	job, err := c.EnqueueRaw(ctx(), "mail", "Mail", []byte(`[1]`), client.Tags("a", "b"), client.WithEvent())
	if err != nil {
		t.Fatal(err)
	}
	p, err := protocol.DecodePayload(job.Payload)
	if err != nil || p.Class != "Mail" || len(p.Tags()) != 2 {
		t.Fatalf("the payload a Resque worker reads: %v %v", p, err)
	}
	jobs, total, err := c.JobsByTag(ctx(), "b", 0, 10)
	if err != nil || total != 1 || len(jobs) != 1 || jobs[0].ID != job.ID {
		t.Fatalf("JobsByTag: %v %d %v", jobs, total, err)
	}
	evs, err := c.JobEvents(ctx(), job.ID)
	if err != nil || len(evs) != 1 || evs[0].Event != "enqueued" || evs[0].Queue != "mail" || evs[0].Class != "Mail" {
		t.Fatalf("JobEvents: %+v %v", evs, err)
	}
	sub, cancel := context.WithTimeout(ctx(), 30*time.Second)
	defer cancel()
	all, err := c.Events(sub, client.EventFilter{From: "0", Class: "Mail"})
	if err != nil {
		t.Fatal(err)
	}
	if got := <-all; got.JobID != job.ID {
		t.Errorf("from the start: %+v", got)
	}
	fresh, err := c.Events(sub, client.EventFilter{Queue: "other"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.EnqueueRaw(ctx(), "other", "Other", nil, client.WithEvent())
	if err != nil {
		t.Fatal(err)
	}
	if got := <-fresh; got.JobID != second.ID || got.Event != "enqueued" {
		t.Errorf("from now: %+v", got)
	}
	for _, opts := range [][]client.Option{{client.Tags("a b")}, {client.Tags("a"), client.Plain()}, {client.WithEvent(), client.In(time.Minute)}} {
		if _, err := c.EnqueueRaw(ctx(), "mail", "Mail", nil, opts...); !errors.Is(err, client.ErrInvalid) {
			t.Errorf("%d options: %v, want ErrInvalid", len(opts), err)
		}
	}
}

// TagsPage walks the tags of the namespace a bounded page at a time: by
// following next, every tag, with its count; none of another namespace.
func TestClientTagsPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	other := newEnv(t, client.Options{})
	want := map[string]int64{}
	for i := 0; i < 7; i++ {
		tag := string(rune('a'+i)) + "-ü<b>"
		for j := 0; j <= i; j++ {
			if _, err := e.c.EnqueueRaw(ctx(), "mail", "Mail", []byte(`[]`), client.Tags(tag)); err != nil {
				t.Fatal(err)
			}
		}
		want[tag] = int64(i + 1)
	}
	if _, err := other.c.EnqueueRaw(ctx(), "mail", "Mail", []byte(`[]`), client.Tags("elsewhere")); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	cursor := ""
	for range 10_000 {
		page, next, err := e.c.TagsPage(ctx(), cursor, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range page {
			got[tc.Tag] = tc.Jobs // SCAN may name a key twice while Redis resizes its table
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if len(got) != len(want) {
		t.Fatalf("tags %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("tag %q: %d jobs, want %d", k, got[k], v)
		}
	}
}

// WithEvent goes with After: a held job's enqueued event is written with
// it (its released event comes with its parent's end); so do Tags.
func TestClientHeldJobEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	c := e.c
	job, err := c.EnqueueRaw(ctx(), "mail", "Mail", []byte(`[1]`), client.After("parent-1"), client.WithEvent())
	if err != nil {
		t.Fatal(err)
	}
	if job.DepState != "held" {
		t.Fatalf("state %q, want held", job.DepState)
	}
	evs, err := c.JobEvents(ctx(), job.ID)
	if err != nil || len(evs) != 1 || evs[0].Event != "enqueued" || evs[0].Queue != "mail" || evs[0].Class != "Mail" {
		t.Fatalf("JobEvents: %+v %v", evs, err)
	}
	held, err := c.EnqueueRaw(ctx(), "mail", "Mail", nil, client.After("parent-1"), client.Tags("a"))
	if err != nil || held.DepState != "held" {
		t.Fatalf("Tags with After: %+v %v", held, err)
	}
	if jobs, n, err := c.JobsByTag(ctx(), "a", 0, 0); err != nil || n != 1 || jobs[0].ID != held.ID {
		t.Errorf("JobsByTag(a): %+v %d %v, want the held job", jobs, n, err)
	}
}

// RecentEvents: the newest that pass a filter, oldest first, and what the
// stream's key is when there is none or it holds another type; Event.State
// as job show says it; AfterEvents goes on from a stream id.
func TestClientRecentEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	c := e.c
	res, err := c.RecentEvents(ctx(), client.EventFilter{}, 10, 0)
	if err != nil || res.Type != "none" || res.Key != e.key("resque-go:events") || len(res.Events) != 0 || res.Newest != "" {
		t.Fatalf("no stream: %+v %v", res, err)
	}
	for i, ev := range []string{"enqueued", "started", "retried", "started", "succeeded"} {
		q := "a"
		if i%2 == 1 {
			q = "b"
		}
		e.do("XADD", res.Key, "*", "event", ev, "id", "j1", "class", "C", "queue", q, "worker", "", "attempt", "1", "duration_ms", "0")
	}
	res, err = c.RecentEvents(ctx(), client.EventFilter{Queue: "a"}, 2, 0)
	if err != nil || res.Type != "stream" || len(res.Events) != 2 || res.Events[0].Event != "retried" || res.Events[1].Event != "succeeded" {
		t.Fatalf("queue a, newest 2: %+v %v", res, err)
	}
	if res.Events[0].State() != "delayed" || res.Events[1].State() != "succeeded" {
		t.Errorf("states: %s %s", res.Events[0].State(), res.Events[1].State())
	}
	if res.Newest != res.Events[1].StreamID {
		t.Errorf("newest %s, want %s", res.Newest, res.Events[1].StreamID)
	}
	// a window of the newest 2 entries: one of them is of queue a
	if w, err := c.RecentEvents(ctx(), client.EventFilter{Queue: "a"}, 2, 2); err != nil || len(w.Events) != 1 {
		t.Errorf("window 2: %+v %v", w, err)
	}
	all, _ := c.RecentEvents(ctx(), client.EventFilter{}, 10, 0)
	after, err := c.AfterEvents(ctx(), all.Events[2].StreamID, 10)
	if err != nil || len(after) != 2 || after[0].StreamID != all.Events[3].StreamID {
		t.Errorf("AfterEvents: %+v %v", after, err)
	}
	e.do("DEL", res.Key)
	e.do("HSET", res.Key, "a", "b")
	if res, err = c.RecentEvents(ctx(), client.EventFilter{}, 10, 0); err != nil || res.Type != "hash" || len(res.Events) != 0 {
		t.Errorf("a hash at the key: %+v %v", res, err)
	}
}
