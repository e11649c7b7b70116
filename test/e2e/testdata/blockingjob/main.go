// Command blockingjob is a resque-go binary whose Go handler Blocks runs
// until its context is cancelled: the job a cancel test stops.
package main

import (
	"context"
	"os"

	"github.com/resque-go/resque-go/app"
	"github.com/resque-go/resque-go/worker"
)

func main() {
	reg := worker.NewRegistry()
	reg.Register("Blocks", func(ctx context.Context, j *worker.Job) error {
		<-ctx.Done()
		return context.Cause(ctx)
	})
	os.Exit(app.Main(reg))
}
