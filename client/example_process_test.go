package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strconv"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

// Quiet a resque-go process, on whatever host, then stop it: the signals
// USR2 and QUIT, sent through Redis. A process is named host:pid (or by
// any of its worker ids).
func ExampleClient_StopProcess() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	n, err := node.New(node.Config{Redis: node.Redis{URL: os.Getenv("REDIS_URL")}, Queues: "chores",
		Hostname: "example-host"}, worker.NewRegistry())
	if err != nil {
		log.Fatal(err)
	}
	if err := n.Start(ctx); err != nil {
		log.Fatal(err)
	}
	process := "example-host:" + strconv.Itoa(os.Getpid())

	// no new job from now on; running ones finish
	if err := c.QuietProcess(ctx, process); err != nil {
		log.Fatal(err)
	}
	// running jobs finish, then the process stops (a work command exits 0)
	if err := c.StopProcess(ctx, process); err != nil {
		log.Fatal(err)
	}
	<-n.Done()
	fmt.Println("stopped")

	err = c.QuietProcess(ctx, process)
	fmt.Println(errors.Is(err, client.ErrNoProcess))
	// Output:
	// stopped
	// true
}
