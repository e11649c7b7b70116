package uniqueio_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/uniqueio"
	"github.com/resque-go/resque-go/unique"
)

// A uid whose state (or parked job) key holds another type, written by
// hand, is reported as such, naming the key, not as a duplicate; nothing
// is written.
func TestEnqueueOverKeyOfAnotherType(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	do(t, c, "HSET", k.UniqueState("h"), "a", "b")
	do(t, c, "SET", k.UniqueState("r"), "running")
	do(t, c, "SADD", k.UniqueDeferred("r"), "x")
	for _, tc := range []struct {
		uid        string
		deferrable bool
		key        string
	}{
		{"h", false, k.UniqueState("h") + " is a hash"},
		{"h", true, k.UniqueState("h") + " is a hash"},
		{"r", true, k.UniqueDeferred("r") + " is a set"},
	} {
		_, err := uniqueio.Enqueue(context.Background(), c, unique.Job{Queue: "q", Payload: payload(t, tc.uid, 1, tc.deferrable)})
		if !errors.Is(err, rdb.ErrUniqueKeyType) || errors.Is(err, unique.ErrDuplicate) || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("uid %s (deferrable %v): %v; want the key named: %q", tc.uid, tc.deferrable, err, tc.key)
		}
	}
	if n := do(t, c, "LLEN", k.Queue("q")).(int64); n != 0 {
		t.Errorf("queue holds %d jobs, want none", n)
	}
}

// A listing reports a uid whose state key holds another type, naming the
// key, and lists the others all the same.
func TestListReportsKeyOfAnotherType(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	do(t, c, "HSET", k.UniqueState("h"), "a", "b")
	do(t, c, "SET", k.UniqueState("q"), "queued")
	infos, err := uniqueio.List(context.Background(), c)
	if err != nil || len(infos) != 2 {
		t.Fatalf("List = %+v, %v", infos, err)
	}
	if infos[0].UID != "h" || !strings.Contains(infos[0].Problem, k.UniqueState("h")) || infos[0].State != "" {
		t.Errorf("h: %+v", infos[0])
	}
	if infos[1].UID != "q" || infos[1].State != "queued" || infos[1].Problem != "" {
		t.Errorf("q: %+v", infos[1])
	}
}
