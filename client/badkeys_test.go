package client_test

import (
	"strings"
	"testing"

	"github.com/resque-go/resque-go/client"
)

// A queue key of another type (written by hand) is named; the other
// queues and the counters are still read.
func TestReadsGoOnAroundAQueueOfAnotherType(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	for _, q := range []string{"a", "c"} {
		if _, err := e.c.Enqueue(ctx(), q, "C"); err != nil {
			t.Fatal(err)
		}
	}
	e.do("SADD", e.ns+":queues", "b")
	e.do("SET", e.ns+":queue:b", "garbage")
	e.do("SET", e.ns+":stat:processed", "7")

	qs, err := e.c.Queues(ctx())
	if err != nil {
		t.Fatalf("Queues: %v", err)
	}
	if len(qs) != 3 || qs[0].Size != 1 || qs[2].Size != 1 || qs[1].Size != 0 ||
		!strings.Contains(qs[1].Problem, "string") || qs[0].Problem != "" {
		t.Errorf("Queues = %+v", qs)
	}
	detail, err := e.c.QueuesDetail(ctx())
	if err != nil || len(detail) != 3 || detail[1].Problem == "" || detail[0].Oldest.IsZero() {
		t.Errorf("QueuesDetail = %+v, %v", detail, err)
	}
	s, err := e.c.Stats(ctx())
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	if s.Processed != 7 || s.Pending != 2 || s.Queues != 3 || len(s.Problems) != 1 || s.Problems[0].Key != e.ns+":queue:b" {
		t.Errorf("Stats = %+v", s)
	}
	e.do("SET", e.ns+":stat:failed", "not a number")
	if s, err := e.c.Stats(ctx()); err != nil || s.Processed != 7 || len(s.Problems) != 2 {
		t.Errorf("with a garbage counter: %+v, %v", s, err)
	}
}
