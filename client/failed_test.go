package client_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/fixtures"
)

// Failed reads the entries Ruby, php-resque and node-resque wrote, each in
// its own time form; a time whose zone Go cannot place reads as zero, and
// garbage as Unreadable.
func TestClientFailedReadsEveryProducer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	for _, src := range []string{"ruby-resque-3.0.0", "php-resque-chrisboulton", "php-resque-resque-master", "node-resque-9.7.1"} {
		for _, v := range fixtures.MustLoad(src, "failure").List("resque:failed") {
			e.do("RPUSH", e.key("failed"), v)
		}
	}
	for _, v := range fixtures.MustLoad("ruby-resque-2.7.0", "failure-requeue-tz-new-york").List("resque:failed") {
		e.do("RPUSH", e.key("failed"), v)
	}
	e.do("RPUSH", e.key("failed"), "not json")

	all, err := e.c.Failed(ctx(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 6 {
		t.Fatalf("%d entries", len(all))
	}
	utc := func(s string) time.Time {
		tm, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	wantAt := []time.Time{utc("2026-11-21 21:23:48"), utc("2026-11-21 21:26:55"), utc("2026-11-21 21:27:33"),
		utc("2026-11-21 21:29:37"), {}}
	wantClass := []string{"FailJob", "Fail_Job", "Fail_Job", "FailJob", "FailJob"}
	for i, f := range all[:5] {
		if f.Index != int64(i) || !f.FailedAt.Equal(wantAt[i]) || f.Job.Class != wantClass[i] || f.Job.Queue != "mail" ||
			f.Error != "boom <1>" || f.Exception == "" || len(f.Backtrace) == 0 || f.Worker == "" || f.Unreadable {
			t.Errorf("entry %d: %+v", i, f)
		}
	}
	if all[1].Job.ID != "71dfd9307a74a2a4cbcb33fed79b457a" || all[0].Retried {
		t.Errorf("php entry %+v", all[1])
	}
	// Ruby 2 writes retried_at in local time without a zone: retried, time unknown.
	if !all[4].Retried || !all[4].RetriedAt.IsZero() {
		t.Errorf("Ruby 2 retried entry: Retried %v, RetriedAt %v", all[4].Retried, all[4].RetriedAt)
	}
	if !all[5].Unreadable || string(all[5].Raw) != "not json" {
		t.Errorf("garbage entry %+v", all[5])
	}

	if n, err := e.c.FailedCount(ctx()); err != nil || n != 6 {
		t.Errorf("FailedCount = %d, %v", n, err)
	}
	page, err := e.c.Failed(ctx(), 2, 2)
	if err != nil || len(page) != 2 || page[0].Index != 2 || page[1].Index != 3 {
		t.Errorf("Failed(2, 2) = %+v, %v", page, err)
	}
	php, err := e.c.FailedWhere(ctx(), client.FailedFilter{Class: "Fail_Job"}, 1, 0)
	if err != nil || len(php) != 1 || php[0].Index != 2 {
		t.Errorf("FailedWhere(class Fail_Job, offset 1) = %+v, %v", php, err)
	}
	if one, err := e.c.FailedEntry(ctx(), 3); err != nil || one.Job.Class != "FailJob" || one.Exception != "Error" {
		t.Errorf("FailedEntry(3) = %+v, %v", one, err)
	}
	if _, err := e.c.Failed(ctx(), 0, -1); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("negative limit: %v", err)
	}
}

// RetryFailed does what Ruby's requeue did in the fixture: the entry gets
// retried_at, the payload goes back to its queue, byte for byte.
func TestClientRetryFailedMatchesRuby(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{Now: fixedClock(time.Date(2026, 11, 21, 21, 23, 50, 0, time.UTC))})
	e.load(fixtures.MustLoad("ruby-resque-3.0.0", "failure"))
	f, err := e.c.RetryFailed(ctx(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Index != 0 || f.Job.Class != "FailJob" || f.Retried {
		t.Errorf("RetryFailed returned %+v, want the entry as read", f)
	}
	ruby := fixtures.MustLoad("ruby-resque-3.0.0", "failure-requeue")
	for _, name := range []string{"failed", "queue:mail"} {
		if got, want := e.strs("LRANGE", e.key(name), 0, -1), ruby.List("resque:"+name); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s after retry\n%q\nRuby has\n%q", name, got, want)
		}
	}
	after, err := e.c.FailedEntry(ctx(), 0)
	if err != nil || !after.Retried || !after.RetriedAt.Equal(time.Date(2026, 11, 21, 21, 23, 50, 0, time.UTC)) {
		t.Errorf("entry after retry %+v, %v", after, err)
	}
}

// Index errors name the list's length; an entry with no queue cannot be
// retried; nothing changes either way.
func TestClientFailedIndexErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	noQueue := `{"failed_at":"2026/11/21 21:23:48 UTC","payload":{"class":"X","args":[]},"exception":"E","error":"e","backtrace":[]}`
	e.do("RPUSH", e.key("failed"), noQueue)
	for _, op := range []struct {
		name string
		fn   func(int64) (client.FailedJob, error)
	}{{"retry", func(i int64) (client.FailedJob, error) { return e.c.RetryFailed(ctx(), i) }},
		{"remove", func(i int64) (client.FailedJob, error) { return e.c.RemoveFailed(ctx(), i) }},
		{"entry", func(i int64) (client.FailedJob, error) { return e.c.FailedEntry(ctx(), i) }}} {
		_, err := op.fn(3)
		if !errors.Is(err, client.ErrNoSuchEntry) || !strings.Contains(err.Error(), "index 3 (the failed list has 1 entry)") {
			t.Errorf("%s 3: %v", op.name, err)
		}
		if _, err := op.fn(-1); !errors.Is(err, client.ErrNoSuchEntry) {
			t.Errorf("%s -1: %v", op.name, err)
		}
	}
	if _, err := e.c.RetryFailed(ctx(), 0); !errors.Is(err, client.ErrNotRetryable) {
		t.Errorf("retry of an entry without a queue: %v", err)
	}
	if got := e.strs("LRANGE", e.key("failed"), 0, -1); len(got) != 1 || got[0] != noQueue {
		t.Errorf("failed list changed: %q", got)
	}
	if keys := e.strs("KEYS", e.ns+":queue:*"); len(keys) != 0 {
		t.Errorf("pushed %q", keys)
	}
}

// RemoveFailed removes the entry read, and only it.
func TestClientRemoveFailed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	entries := fixtures.MustLoad("ruby-resque-3.0.0", "failure").List("resque:failed")
	entries = append(entries, fixtures.MustLoad("php-resque-resque-master", "failure").List("resque:failed")...)
	for _, v := range entries {
		e.do("RPUSH", e.key("failed"), v)
	}
	f, err := e.c.RemoveFailed(ctx(), 0)
	if err != nil || f.Job.Class != "FailJob" {
		t.Fatalf("RemoveFailed(0) = %+v, %v", f, err)
	}
	if got := e.strs("LRANGE", e.key("failed"), 0, -1); len(got) != 1 || got[0] != entries[1] {
		t.Errorf("failed list after removal %q", got)
	}
	if _, err := e.c.RemoveFailed(ctx(), 1); !errors.Is(err, client.ErrNoSuchEntry) {
		t.Errorf("RemoveFailed past the end: %v", err)
	}
}

// Entries read first and then acted on one by one are found by their bytes
// wherever the list moved them; one already gone is ErrNoSuchEntry.
func TestClientFailedJobsActedOnAsRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	var entries []string
	for _, src := range []string{"ruby-resque-3.0.0", "php-resque-resque-master", "node-resque-9.7.1"} {
		entries = append(entries, fixtures.MustLoad(src, "failure").List("resque:failed")...)
	}
	for _, v := range entries {
		e.do("RPUSH", e.key("failed"), v)
	}
	read, err := e.c.Failed(ctx(), 0, 0)
	if err != nil || len(read) != 3 {
		t.Fatalf("Failed = %d entries, %v", len(read), err)
	}
	// Removing 0 and then 2 by index would hit the wrong entry; as read, it cannot.
	if err := e.c.RemoveFailedJob(ctx(), read[0]); err != nil {
		t.Fatal(err)
	}
	if err := e.c.RemoveFailedJob(ctx(), read[2]); err != nil {
		t.Fatal(err)
	}
	if got := e.strs("LRANGE", e.key("failed"), 0, -1); len(got) != 1 || got[0] != entries[1] {
		t.Errorf("after removing entries 0 and 2 as read: %q", got)
	}
	if err := e.c.RetryFailedJob(ctx(), read[1]); err != nil {
		t.Fatal(err)
	}
	if got := e.strs("LRANGE", e.key("queue:mail"), 0, -1); len(got) != 1 || !strings.Contains(got[0], `"id":"2938f43a4a3b2c4b419279b56b68beb6"`) {
		t.Errorf("retried job %q", got)
	}
	for _, f := range []client.FailedJob{read[0], read[1]} { // gone, and changed by the retry
		if err := e.c.RemoveFailedJob(ctx(), f); !errors.Is(err, client.ErrNoSuchEntry) || !strings.Contains(err.Error(), "removed or changed meanwhile") {
			t.Errorf("entry %d: %v", f.Index, err)
		}
	}
	if err := e.c.RemoveFailedJob(ctx(), client.FailedJob{}); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("zero FailedJob: %v", err)
	}
	if got := e.strs("LRANGE", e.key("failed"), 0, -1); len(got) != 1 {
		t.Errorf("failed list %q", got)
	}
}
