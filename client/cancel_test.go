package client_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/client"
)

// CancelJob and CancelJobByID store and publish a request naming the
// running claim; an idle slot, an unknown id and a Ruby worker's job are
// refused with their errors and nothing stored.
func TestCancelJobRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	rec := `{"queue":"mail","run_at":"2026-01-01T00:00:00Z","payload":{"class":"C","args":[],"id":"j1"}}`
	e.do("SET", e.key("worker:h:1:mail"), rec)
	e.do("HSET", e.key("resque-go:claim_seq"), "h:1:mail", "7")
	if err := e.c.CancelJob(ctx(), "h:1:mail", client.CancelOptions{}); err != nil {
		t.Fatal(err)
	}
	if v, _ := e.do("GET", e.key("resque-go:cancel:h:1:mail")).([]byte); string(v) != "7 0" {
		t.Errorf("stored request = %q, want \"7 0\"", v)
	}
	e.do("SADD", e.key("workers"), "h:1:mail")
	if wid, err := e.c.CancelJobByID(ctx(), "j1", client.CancelOptions{Retry: true}); err != nil || wid != "h:1:mail" {
		t.Errorf("CancelJobByID = %q, %v", wid, err)
	}
	if v, _ := e.do("GET", e.key("resque-go:cancel:h:1:mail")).([]byte); string(v) != "7 1" {
		t.Errorf("stored request = %q, want \"7 1\"", v)
	}
	if err := e.c.CancelJob(ctx(), "h:2:mail", client.CancelOptions{}); !errors.Is(err, client.ErrNoRunningJob) {
		t.Errorf("idle slot: %v, want ErrNoRunningJob", err)
	}
	if _, err := e.c.CancelJobByID(ctx(), "j2", client.CancelOptions{}); !errors.Is(err, client.ErrNoRunningJob) || !strings.HasPrefix(err.Error(), "client: ") {
		t.Errorf("unknown id: %v, want ErrNoRunningJob", err)
	}
	e.do("SET", e.key("worker:ruby:9:mail"), rec)
	if err := e.c.CancelJob(ctx(), "ruby:9:mail", client.CancelOptions{}); !errors.Is(err, client.ErrNotCancellable) {
		t.Errorf("Ruby worker: %v, want ErrNotCancellable", err)
	}
	if err := e.c.CancelJob(ctx(), "", client.CancelOptions{}); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("empty id: %v, want ErrInvalid", err)
	}
}
