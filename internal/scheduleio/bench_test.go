package scheduleio_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/scheduleio"
	"github.com/resque-go/resque-go/schedule"
)

// BenchmarkFire measures one master's passes over 1,000 schedules that are
// all due at every pass (every 1s, the clock one second on per pass):
// ns/op is one pass, fires/s the enqueue rate.
func BenchmarkFire(b *testing.B) {
	e := newEnv(b)
	var yaml strings.Builder
	const n = 1000
	for i := range n {
		fmt.Fprintf(&yaml, "s%d: {every: 1s, class: Job, queue: q%d, args: [%d]}\n", i, i%10, i)
	}
	es, err := schedule.Parse([]byte(yaml.String()))
	if err != nil {
		b.Fatal(err)
	}
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s, err := scheduleio.New(scheduleio.Config{Client: e.c, Entries: es, Hostname: "bench", Pid: 1, Now: clk.Now})
	if err != nil {
		b.Fatal(err)
	}
	fired := 0
	b.ResetTimer()
	for range b.N {
		clk.Add(time.Second)
		r, err := s.Pass(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		fired += r.Fired
	}
	b.ReportMetric(float64(fired)/b.Elapsed().Seconds(), "fires/s")
	b.StopTimer()
	for i := range 10 {
		e.c.Do(context.Background(), "DEL", e.c.Keys().Queue(fmt.Sprint("q", i)))
	}
}
