package node_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

// A worker inside a Go program: a handler per job class, a node working
// the queue, a job enqueued with package client (or by Ruby, PHP or Node
// Resque), and a soft stop once it ran. REDIS_URL says where Redis is.
func Example() {
	ctx := context.Background()
	redis := node.Redis{URL: os.Getenv("REDIS_URL"), Namespace: "example"}

	done := make(chan struct{})
	reg := worker.NewRegistry()
	reg.Register("Greet", func(ctx context.Context, job *worker.Job) error {
		var args []string
		if err := job.DecodeArgs(&args); err != nil {
			return err // recorded in the failed list
		}
		fmt.Println("hello,", args[0])
		close(done)
		return nil
	})
	n, err := node.New(node.Config{Redis: redis, Queues: "greetings", Concurrency: 2}, reg,
		node.WithSlog(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	if err != nil {
		log.Fatal(err) // errors.Is(err, node.ErrConfig): a bad Config field
	}
	if err := n.Start(ctx); err != nil { // returns once the slots are registered
		log.Fatal(err)
	}

	c, err := client.New(client.Options{URL: redis.URL, Namespace: redis.Namespace})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Enqueue(ctx, "greetings", "Greet", "world"); err != nil {
		log.Fatal(err)
	}

	<-done
	n.Stop()   // soft stop: running jobs finish (Shutdown cancels them)
	<-n.Done() // every slot unregistered
	fmt.Println("stopped")
	// Output:
	// hello, world
	// stopped
}

// A bad setting is refused before anything runs; the error names the
// Config field and matches ErrConfig.
func ExampleConfig_Validate() {
	for _, cfg := range []node.Config{
		{},
		{Queues: "mail", Concurrency: 5000},
		{Queues: "mail", Serial: []string{"reports"}},
	} {
		fmt.Println(cfg.Validate())
	}
	// Output:
	// node: Config.Queues: none given: name the queues to work, in priority order ("high,low")
	// node: Config.Concurrency 5000: want 1 to 4096
	// node: Config.Serial "reports": not one of the queues named in Config.Queues "mail" (a serial queue is named, not matched by a glob)
}

// The node logs through a *slog.Logger: each line's fields (queue, class,
// job_id, worker_id, ...) become attributes.
func ExampleWithSlog() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	n, err := node.New(node.Config{Redis: node.Redis{URL: os.Getenv("REDIS_URL")}, Queues: "default"}, nil,
		node.WithSlog(logger))
	if err != nil {
		log.Fatal(err)
	}
	_ = n // n.Start(ctx) ...
}
