// Command custom is a resque-go binary with Go handlers of its own. It has
// the full resque-go CLI; run for example:
//
//	go run ./examples/custom work -q default
//	go run ./examples/custom enqueue --queue default --class Greet --args '["world"]'
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/resque-go/resque-go/app"
	"github.com/resque-go/resque-go/worker"
)

func main() {
	reg := worker.NewRegistry()
	reg.Register("Greet", func(ctx context.Context, j *worker.Job) error {
		var args []string
		if err := j.DecodeArgs(&args); err != nil {
			return err
		}
		if len(args) != 1 {
			return &worker.Error{Exception: "ArgumentError", Message: fmt.Sprintf("want 1 name, got %d", len(args))}
		}
		fmt.Printf("hello, %s (job %s from queue %s)\n", args[0], j.ID, j.Queue)
		return nil
	})
	os.Exit(app.Main(reg))
}
