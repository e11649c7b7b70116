package poolrun

import (
	"context"
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/pool"
)

// The manager's observer recovers a child killed -9 with the file's
// settings, as the child's own recovery would: the job's slot of a cap
// (its lease an hour away) is freed at once, which moves the parked job of
// that class back to its queue, and the job's requeued event is written.
func TestSupervisorObserverFreesCapsAndWritesEvents(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "events: true\nlimits:\n  Job: 1\nworkers:\n  q: 1\n", func(p *Params) { p.BackoffMin = 5 * time.Second })
	h.sup.Start(context.Background())
	evs := h.waitFor("child", func(evs []pool.Event) bool { return count(evs, pool.EventStarted, "") == 1 })
	pid := pidsOf(evs, pool.EventStarted, "q")[0]
	k := h.client.Keys()
	capJob, err := protocol.ParseLimit("Job=1")
	if err != nil {
		t.Fatal(err)
	}
	holders, parked := k.LimitBase(capJob.Name())+protocol.LimitHoldersSuffix, k.LimitBase(capJob.Name())+protocol.LimitParkedSuffix
	id := protocol.WorkerID{Host: "pool-test", PID: pid, Queues: "q"}.String()
	job, other := `{"class":"Job","args":[1],"id":"j1"}`, `{"class":"Job","args":[2],"id":"j2"}`
	ctx := context.Background()
	for _, cmd := range [][]any{
		{"SADD", k.Workers(), id},
		{"SET", k.Worker(id), `{"queue":"q","run_at":"2024-01-01T00:00:00Z","payload":` + job + `}`},
		{"HSET", k.Heartbeats(), id, time.Now().UTC().Format("2006-01-02T15:04:05+00:00")},
		{"HSET", k.ClaimSeqs(), id, "5"},
		{"ZADD", holders, time.Now().Add(time.Hour).UnixMilli(), id + ":5"},
		{"RPUSH", parked, `{"queue":"q","payload":` + quoteJSON(other) + `}`},
	} {
		if _, err := h.client.Do(ctx, cmd[0].(string), cmd[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool {
		v, err := h.client.Do(ctx, "LRANGE", k.Queue("q"), 0, -1)
		return err == nil && len(v.([]any)) == 2
	}, "the job requeued and the parked one moved back")
	if n, err := h.client.Do(ctx, "ZCARD", holders); err != nil || n.(int64) != 0 {
		t.Errorf("cap's holders: %v %v, want none", n, err)
	}
	if n, err := h.client.Do(ctx, "LLEN", parked); err != nil || n.(int64) != 0 {
		t.Errorf("parked: %v %v, want none", n, err)
	}
	got, err := h.client.JobEvents(ctx, "j1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Fields["event"] != protocol.EventRequeued || got[0].Fields["class"] != "Job" ||
		got[0].Fields["queue"] != "q" || got[0].Fields["worker"] != id {
		t.Errorf("events of j1: %+v, want one requeued", got)
	}
}

// quoteJSON is s as a JSON string.
func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
