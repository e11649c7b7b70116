package worker_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

// work runs a node on queue until it is empty (Drain, Ruby's
// INTERVAL=0) with the handlers of reg.
func work(reg *worker.Registry, queue string) {
	n, err := node.New(node.Config{Redis: node.Redis{URL: os.Getenv("REDIS_URL")}, Queues: queue,
		Drain: true, FailRetries: 1}, reg)
	if err != nil {
		log.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
	<-n.Done()
}

// Register a handler for a class and a middleware around every handler;
// a node runs the jobs that a Ruby, PHP, Node or Go producer queued.
func ExampleRegistry_Register() {
	reg := worker.NewRegistry()
	reg.Register("Greet", func(ctx context.Context, job *worker.Job) error {
		var args []string
		if err := job.DecodeArgs(&args); err != nil {
			return err // recorded in the failed list
		}
		fmt.Printf("hello, %s (queue %s)\n", args[0], job.Queue)
		return nil
	})
	reg.Use(func(next worker.HandlerFunc) worker.HandlerFunc {
		return func(ctx context.Context, job *worker.Job) error {
			fmt.Println("start", job.Class)
			return next(ctx, job)
		}
	})

	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Enqueue(context.Background(), "greetings", "Greet", "world"); err != nil {
		log.Fatal(err)
	}
	work(reg, "greetings")
	// Output:
	// start Greet
	// hello, world (queue greetings)
}

// A handler that returns Discard drops its job: it is not retried and not
// recorded in the failed list.
func ExampleDiscard() {
	reg := worker.NewRegistry()
	reg.Register("Sync", func(ctx context.Context, job *worker.Job) error {
		return worker.Discard("the account was deleted")
	})

	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Enqueue(ctx, "sync", "Sync", 42); err != nil {
		log.Fatal(err)
	}
	work(reg, "sync")

	failed, err := c.FailedWhere(ctx, client.FailedFilter{Queue: "sync"}, 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	left, err := c.QueueSize(ctx, "sync")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("failed:", len(failed), "queued:", left)
	// Output:
	// failed: 0 queued: 0
}

// A handler whose upstream answered "too many requests" returns
// RateLimited: the job waits in the delayed queue for that long and runs
// again, without a failed attempt.
func ExampleRateLimited() {
	reg := worker.NewRegistry()
	reg.Register("Fetch", func(ctx context.Context, job *worker.Job) error {
		return worker.RateLimited(90 * time.Second) // say, from the API's Retry-After
	})

	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Enqueue(ctx, "fetch", "Fetch", "https://api.example/items"); err != nil {
		log.Fatal(err)
	}
	work(reg, "fetch")

	failed, err := c.FailedWhere(ctx, client.FailedFilter{Queue: "fetch"}, 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	waiting, err := c.DelayedJobs(ctx, delayed.Filter{Queue: "fetch"}, 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("failed:", len(failed), "waiting in the delayed queue:", len(waiting))
	// Output:
	// failed: 0 waiting in the delayed queue: 1
}

// DecodeArgs reads the args a producer wrote: an array (Ruby, Node, Go)
// or an object (resque-v3's PHP producers).
func ExampleJob_DecodeArgs() {
	job := &worker.Job{Class: "Invoice", Args: []byte(`[{"customer":7,"lines":[12.5,3]}]`)}
	var args []struct {
		Customer int       `json:"customer"`
		Lines    []float64 `json:"lines"`
	}
	if err := job.DecodeArgs(&args); err != nil {
		log.Fatal(err)
	}
	fmt.Println(args[0].Customer, args[0].Lines)
	// Output:
	// 7 [12.5 3]
}
