package runtime

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest/rdbtest"
)

// A rate's starts taken in blocks by two processes of 16 slots, whose
// slots claim every 10 ms of a test clock and whose jobs all count: 200/1m
// gives 200 starts (within 5%) in any minute of it, each process's blocks
// used within 1% of the period, and a job that does not count gives its
// start back.
func TestLimitGateRateBlocks(t *testing.T) {
	r := rdbtest.New(t, rdb.Options{})
	rate, err := protocol.ParseRate("Rated=200/1m")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_900_000_000, 0)
	var procs []*Worker
	for p := range 2 {
		w := &Worker{client: r.Client, log: zerolog.Nop(), cfg: Config{Now: func() time.Time { return now }}}
		w.limits = rdb.NewClaimLimits([]protocol.Limit{rate}, 15*time.Second)
		for i := range 16 {
			w.slots = append(w.slots, &slot{w: w, id: fmt.Sprintf("h:%d-%d:q", p, i)})
		}
		w.gate = newLimitGate(w.limits, len(w.slots), w.cfg)
		procs = append(procs, w)
	}
	job := rdb.ClaimResult{Queue: "q", Payload: []byte(`{"class":"Rated","args":[]}`)}
	other := rdb.ClaimResult{Queue: "q", Payload: []byte(`{"class":"Other","args":[]}`)}
	var starts []time.Time
	ctx := context.Background()
	end := now.Add(3 * time.Minute)
	for ; now.Before(end); now = now.Add(10 * time.Millisecond) {
		for _, w := range procs {
			for i, s := range w.slots {
				if sent := w.gate.reserve(ctx, w, s, []string{"q"}); sent != nil {
					// left to the claim script: not this test's
					w.gate.unreserve(s)
					continue
				}
				if i%4 == 0 {
					// a job the rate does not count gives its start back
					w.gate.claimed(s, other, "Other")
					continue
				}
				w.gate.claimed(s, job, "Rated")
				starts = append(starts, now)
			}
		}
	}
	if len(starts) == 0 {
		t.Fatal("no start")
	}
	// every minute's window from each start on
	least, most := len(starts), 0
	for i, s := range starts {
		if s.Add(time.Minute).After(end) {
			break
		}
		n := 0
		for _, u := range starts[i:] {
			if u.Before(s.Add(time.Minute)) {
				n++
			}
		}
		least, most = min(least, n), max(most, n)
	}
	t.Logf("%d starts in 3 minutes; in a minute from a start: %d to %d", len(starts), least, most)
	if most > 210 || least < 190 {
		t.Errorf("starts in a minute: %d to %d, want 200 within 5%%", least, most)
	}
}
