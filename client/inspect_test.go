package client_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/fixtures"
)

// Peek shows what Ruby, php-resque and node-resque enqueued, bytes
// untouched, and explains a payload no worker would run.
func TestClientPeekReadsEveryProducer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	e.load(fixtures.MustLoad("ruby-resque-3.0.0", "enqueue"))
	php := fixtures.MustLoad("php-resque-resque-master", "enqueue")
	e.load(php)
	e.load(fixtures.MustLoad("node-resque-9.7.1", "enqueue"))
	e.do("RPUSH", e.key("queue:mail"), "not json")
	want := e.strs("LRANGE", e.key("queue:mail"), 0, -1)

	jobs, err := e.c.Peek(ctx(), "mail", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != len(want) {
		t.Fatalf("%d jobs, the queue holds %d", len(jobs), len(want))
	}
	for i, j := range jobs {
		if string(j.Payload) != want[i] || j.Queue != "mail" {
			t.Errorf("job %d: payload %s, want %s", i, j.Payload, want[i])
		}
	}
	ruby, phpJob, node, bad := jobs[0], jobs[2], jobs[len(jobs)-2], jobs[len(jobs)-1]
	if ruby.Class != "MailJob" || ruby.ID != "" || !ruby.EnqueuedAt.IsZero() || ruby.Invalid != "" {
		t.Errorf("Ruby job %+v", ruby)
	}
	var args []any
	if err := ruby.DecodeArgs(&args); err != nil || len(args) != 8 || fmt.Sprint(args[6]) != "12345678901234567890" {
		t.Errorf("Ruby args %v (%v): want the big integer exact", args, err)
	}
	if phpJob.Class != "Mail_Job" || phpJob.ID != "621d9f6e8550364dbd85fcf85d7ca215" ||
		!phpJob.EnqueuedAt.Equal(time.UnixMicro(1795296447247114)) {
		t.Errorf("php job %+v", phpJob)
	}
	if node.Class != "NoArgsJob" || string(node.Args) != "[]" {
		t.Errorf("node job %+v", node)
	}
	if bad.Class != "" || bad.Invalid == "" || string(bad.Payload) != "not json" {
		t.Errorf("bad payload %+v", bad)
	}
	if err := bad.DecodeArgs(&args); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("DecodeArgs of a job without args: %v", err)
	}

	window, err := e.c.Peek(ctx(), "mail", 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(window) != 2 || string(window[0].Payload) != want[1] || string(window[1].Payload) != want[2] {
		t.Errorf("Peek(1, 2) = %d jobs", len(window))
	}
	if past, err := e.c.Peek(ctx(), "mail", 100, 5); err != nil || len(past) != 0 {
		t.Errorf("Peek past the end: %d jobs, %v", len(past), err)
	}
	if _, err := e.c.Peek(ctx(), "mail", -1, 0); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("negative offset: %v", err)
	}
}

// Queues lists the queues set sorted, with sizes; names may hold ":".
func TestClientQueues(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	for _, q := range []string{"b", "a:colon", "b"} {
		if _, err := e.c.Enqueue(ctx(), q, "C"); err != nil {
			t.Fatal(err)
		}
	}
	e.do("SADD", e.key("queues"), "empty")
	qs, err := e.c.Queues(ctx())
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(qs); got != "[{a:colon 1 } {b 2 } {empty 0 }]" {
		t.Errorf("Queues = %s", got)
	}
	for q, want := range map[string]int64{"b": 2, "a:colon": 1, "nope": 0} {
		if n, err := e.c.QueueSize(ctx(), q); err != nil || n != want {
			t.Errorf("QueueSize(%q) = %d, %v; want %d", q, n, err, want)
		}
	}
	empty := newEnv(t, client.Options{})
	if qs, err := empty.c.Queues(ctx()); err != nil || len(qs) != 0 {
		t.Errorf("no queues: %v, %v", qs, err)
	}
}
