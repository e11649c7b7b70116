package client_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
)

// SerialLocks lists the held locks of known queues with the worker running
// a job of each, a key of another type with its problem; ReleaseSerialLock
// deletes a lock only while the token read still holds it.
func TestSerialLocksListAndRelease(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	e.do("SADD", e.key("queues"), "ser", "stale", "odd", "plain", "forever")
	tok := "0123456789abcdef0123456789abcdef"
	e.do("SET", e.key("queuedata:ser:lock"), tok, "PX", 30000)
	e.do("SET", e.key("queuedata:stale:lock"), "feedfacefeedfacefeedfacefeedface", "PX", 30000)
	e.do("SET", e.key("queuedata:forever:lock"), "cafe")
	e.do("HSET", e.key("queuedata:odd:lock"), "a", "b")
	// a lock of a queue outside the queues set is not looked at
	e.do("SET", e.key("queuedata:unknown:lock"), "x")
	id := "host1:4242-0:ser,plain"
	e.do("SADD", e.key("workers"), id)
	e.do("SET", e.key("worker:"+id), `{"queue":"ser","run_at":"2026-11-28T10:00:00Z","payload":{"class":"Serial","args":[1]}}`)

	locks, err := e.c.SerialLocks(ctx())
	if err != nil {
		t.Fatal(err)
	}
	var qs []string
	byQ := map[string]client.SerialLock{}
	for _, l := range locks {
		qs = append(qs, l.Queue)
		byQ[l.Queue] = l
	}
	if !slices.Equal(qs, []string{"forever", "odd", "ser", "stale"}) {
		t.Fatalf("locked queues %v", qs)
	}
	ser := byQ["ser"]
	if ser.Token != tok || ser.TTL <= 0 || ser.TTL > 30*time.Second || len(ser.Holders) != 1 ||
		ser.Holders[0].Worker != id || ser.Holders[0].Class != "Serial" || ser.Holders[0].Since.IsZero() {
		t.Errorf("ser: %+v", ser)
	}
	if l := byQ["stale"]; len(l.Holders) != 0 || l.Problem != "" {
		t.Errorf("stale: %+v", l)
	}
	if l := byQ["forever"]; l.TTL >= 0 {
		t.Errorf("forever: TTL %v, want negative", l.TTL)
	}
	if l := byQ["odd"]; l.Problem == "" || l.Token != "" {
		t.Errorf("odd: %+v", l)
	}

	// a token that no longer holds the lock releases nothing
	if err := e.c.ReleaseSerialLock(ctx(), "stale", "another"); !errors.Is(err, client.ErrLockChanged) {
		t.Errorf("release with another token: %v", err)
	}
	if err := e.c.ReleaseSerialLock(ctx(), "stale", byQ["stale"].Token); err != nil {
		t.Fatal(err)
	}
	if n := e.do("EXISTS", e.key("queuedata:stale:lock")).(int64); n != 0 {
		t.Error("stale lock still there")
	}
	if err := e.c.ReleaseSerialLock(ctx(), "stale", byQ["stale"].Token); !errors.Is(err, client.ErrLockChanged) {
		t.Errorf("release again: %v", err)
	}
	if err := e.c.ReleaseSerialLock(ctx(), "odd", "x"); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("release a key of another type: %v", err)
	}
	if n := e.do("EXISTS", e.key("queuedata:odd:lock")).(int64); n != 1 {
		t.Error("the key of another type was deleted")
	}
	if err := e.c.ReleaseSerialLock(ctx(), "", "x"); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("no queue: %v", err)
	}

	// no locks: an empty list
	e2 := newEnv(t, client.Options{})
	e2.do("SADD", e2.key("queues"), "a")
	if l, err := e2.c.SerialLocks(ctx()); err != nil || len(l) != 0 || l == nil {
		t.Errorf("no locks: %v %v", l, err)
	}
}

func TestQueuesPaused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	if err := e.c.PauseQueue(ctx(), "b"); err != nil {
		t.Fatal(err)
	}
	e.do("HSET", e.key("pause:queue:c"), "x", "y") // any type counts, as for the Ruby plugins
	got, err := e.c.QueuesPaused(ctx(), []string{"a", "b", "c"})
	if err != nil || !slices.Equal(got, []bool{false, true, true}) {
		t.Errorf("QueuesPaused = %v, %v", got, err)
	}
	if got, err := e.c.QueuesPaused(ctx(), nil); err != nil || len(got) != 0 {
		t.Errorf("QueuesPaused(nil) = %v, %v", got, err)
	}
}
