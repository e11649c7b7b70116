package client_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/resque-go/resque-go/client"
)

// PauseQueue writes the key as resque-pause and resque-queue-control do
// ("true", no expiry; their paused? is a GET that is not nil), and
// PausedQueues lists a queue paused by them.
func TestQueuePauseKeyIsTheRubyPlugins(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	if err := e.c.PauseQueue(ctx(), "mail"); err != nil {
		t.Fatal(err)
	}
	if v, _ := e.do("GET", e.key("pause:queue:mail")).([]byte); string(v) != "true" {
		t.Errorf("pause key holds %q, want \"true\"", v)
	}
	if ttl, _ := e.do("TTL", e.key("pause:queue:mail")).(int64); ttl != -1 {
		t.Errorf("pause key TTL = %d, want -1 (no expiry)", ttl)
	}
	if err := e.c.PauseQueue(ctx(), "mail"); err != nil { // pausing twice changes nothing
		t.Fatal(err)
	}
	// ResqueQueueControlHelper.pause("reports") from Ruby
	e.do("SET", e.key("pause:queue:reports"), "true")
	if got, err := e.c.PausedQueues(ctx()); err != nil || !slices.Equal(got, []string{"mail", "reports"}) {
		t.Errorf("PausedQueues = %v, %v; want [mail reports]", got, err)
	}
	if was, err := e.c.ResumeQueue(ctx(), "reports"); err != nil || !was {
		t.Errorf("ResumeQueue(reports) = %v, %v; want true", was, err)
	}
	if was, err := e.c.ResumeQueue(ctx(), "reports"); err != nil || was {
		t.Errorf("ResumeQueue(reports) again = %v, %v; want false", was, err)
	}
	if n, _ := e.do("EXISTS", e.key("pause:queue:reports")).(int64); n != 0 {
		t.Errorf("the pause key of a resumed queue is still there")
	}
	if got, err := e.c.PausedQueues(ctx()); err != nil || !slices.Equal(got, []string{"mail"}) {
		t.Errorf("PausedQueues after resume = %v, %v; want [mail]", got, err)
	}
	if err := e.c.PauseQueue(ctx(), ""); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("PauseQueue(\"\") = %v, want ErrInvalid", err)
	}
	if _, err := e.c.ResumeQueue(ctx(), ""); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("ResumeQueue(\"\") = %v, want ErrInvalid", err)
	}
}
