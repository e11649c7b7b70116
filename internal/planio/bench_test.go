package planio_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/planio"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/plan"
)

// BenchmarkPlannerPass measures one planner firing b.N plans due in the
// same slot (every 5m plans, a fire is one LRANGE/MGET share and one
// script call): go test -run '^$' -bench PlannerPass -benchtime 20000x ./internal/planio/
func BenchmarkPlannerPass(b *testing.B) {
	c, err := rdb.New(rdb.Options{URL: os.Getenv(redisEnv), Namespace: redistest.Namespace(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for range b.N {
		if _, err := planio.AddAt(ctx, c, plan.Plan{Queue: "bench", Class: "Tick", Args: []byte(`[1]`), Every: 5 * time.Minute}, t0); err != nil {
			b.Fatal(err)
		}
	}
	now := t0.Add(5 * time.Minute)
	p, err := planio.NewPlanner(planio.PlannerConfig{Client: c, Now: func() time.Time { return now }})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	n, err := p.Pass(ctx)
	b.StopTimer()
	if err != nil || n != b.N {
		b.Fatalf("fired %d of %d: %v", n, b.N, err)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "plans/s")
}
