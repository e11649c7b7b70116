package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/resque-go/resque-go/client"
)

// Enqueue a job now, one in ten minutes, and one in Ruby's exact form.
func ExampleClient_Enqueue() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err) // errors.Is(err, client.ErrBadURL)
	}
	defer c.Close()
	ctx := context.Background()

	job, err := c.Enqueue(ctx, "archive", "Archive", 42, "master")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("enqueued", job.ID)

	if _, err := c.EnqueueIn(ctx, 10*time.Minute, "mail", "Reminder", "user-7"); err != nil {
		log.Fatal(err)
	}
	if _, err := c.EnqueueRaw(ctx, "archive", "Archive", []byte(`[42,"master"]`), client.Plain()); err != nil {
		log.Fatal(err)
	}
}

// Retry every failed job of one queue, each as it was read.
func ExampleClient_RetryFailedJob() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	failed, err := c.FailedWhere(ctx, client.FailedFilter{Queue: "mail"}, 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range failed {
		err := c.RetryFailedJob(ctx, f)
		switch {
		case errors.Is(err, client.ErrNoSuchEntry):
			// someone else retried or removed it meanwhile
		case err != nil:
			log.Fatal(err)
		default:
			fmt.Println("retried", f.Job.Class, f.Job.ID)
		}
	}
}
