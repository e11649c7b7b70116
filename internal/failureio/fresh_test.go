package failureio_test

import (
	"context"
	"testing"

	"github.com/resque-go/resque-go/internal/failureio"
	"github.com/resque-go/resque-go/internal/protocol"
)

// TestRetryStartsFreshBudget: a job that used its attempts and is retried by
// an operator gets a full budget again: failCount is gone from the payload
// pushed, and the attempt counter of its class and args is cleared.
func TestRetryStartsFreshBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)
	k := c.Keys()
	payload := `{"class":"Task","args":{"k":"v"},"queue":"q","failCount":2,"id":"abc"}`
	entry := protocol.Failure{Payload: []byte(payload), Exception: "E", Error: "boom", Worker: "h:1:q", Queue: "q"}.Encode()
	push(t, c, k.Failed(), string(entry))
	p, err := protocol.DecodePayload([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	digest := protocol.AttemptsDigest(p)
	if _, err := c.Do(ctx, "SET", k.Attempts(digest), "3"); err != nil {
		t.Fatal(err)
	}
	s := failureio.New(c, nil)
	e, err := s.Get(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Retry(ctx, e); err != nil {
		t.Fatal(err)
	}
	if got := strs(t, c, k.Queue("q")); len(got) != 1 || got[0] != `{"class":"Task","args":{"k":"v"},"queue":"q","id":"abc"}` {
		t.Errorf("queue = %q, want the payload without failCount", got)
	}
	if n, err := c.Do(ctx, "EXISTS", k.Attempts(digest)); err != nil || n.(int64) != 0 {
		t.Errorf("attempt counter still there (%v, %v)", n, err)
	}
}

// TestRetryInvalidUTF8Payload: a payload that was not valid UTF-8 is kept in
// the entry as base64 and goes back to its queue byte for byte.
func TestRetryInvalidUTF8Payload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)
	k := c.Keys()
	raw := "{\"class\":\"A\",\"args\":[\"caf\xe9\"]}"
	push(t, c, k.Failed(), string(protocol.Failure{Payload: []byte(raw), Exception: protocol.ExcBadPayload, Queue: "q"}.Encode()))
	s := failureio.New(c, nil)
	e, err := s.Get(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Retry(ctx, e); err != nil {
		t.Fatal(err)
	}
	if got := strs(t, c, k.Queue("q")); len(got) != 1 || got[0] != raw {
		t.Errorf("queue = %q, want %q", got, raw)
	}
}
