package runtime_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// The worker tells its title (ps) what it does, in Ruby's procline words.
func TestProcline(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	release := make(chan struct{})
	e.reg.Register("Slow", func(ctx context.Context, j *worker.Job) error {
		<-release
		return nil
	})
	var mu sync.Mutex
	var titles []string
	last := func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(titles) == 0 {
			return ""
		}
		return titles[len(titles)-1]
	}
	var rec recorder
	e.start(runtime.Config{Queues: "q,low", OnFinish: rec.add, Title: func(s string) {
		mu.Lock()
		titles = append(titles, s)
		mu.Unlock()
	}})
	redistest.Eventually(t, 0, func() bool { return last() == "Waiting for q,low" }, "waiting title")
	e.push("q", `{"class":"Slow","args":[]}`)
	redistest.Eventually(t, 0, func() bool {
		return strings.HasPrefix(last(), "Processing q since ") && strings.HasSuffix(last(), " [Slow]")
	}, "processing title")
	close(release)
	rec.waitN(t, 1)
	redistest.Eventually(t, 0, func() bool { return last() == "Waiting for q,low" }, "waiting again")
}
