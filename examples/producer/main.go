// Command producer enqueues a job from a Go program with package client,
// and prints its id. It pairs with examples/custom, whose worker runs Greet:
//
//	REDIS_URL=redis://127.0.0.1:6379/0 go run ./examples/producer world
//	go run ./examples/custom work -q default
//
// REDIS_URL (default redis://127.0.0.1:6379/0) and RESQUE_NAMESPACE
// (default resque) say where to enqueue.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/resque-go/resque-go/client"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	name := "world"
	if len(args) > 0 {
		name = args[0]
	}
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL"), Namespace: os.Getenv("RESQUE_NAMESPACE")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "producer:", err)
		return 2
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	job, err := c.Enqueue(ctx, "default", "Greet", name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "producer:", err)
		return 1
	}
	fmt.Println(job.ID)
	return 0
}
