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

// Push a delayed job to its queue ahead of its time ("Queue now"), found
// by its due time and its bytes; a second try finds it gone.
func ExampleClient_QueueDelayedNow() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	at := time.Date(2041, 6, 1, 8, 0, 0, 0, time.UTC)
	if _, err := c.EnqueueAt(ctx, at, "early", "Report", 7); err != nil {
		log.Fatal(err)
	}
	items, err := c.DelayedAt(ctx, at)
	if err != nil {
		log.Fatal(err)
	}
	r, err := c.QueueDelayedNow(ctx, items[0].At, items[0].Raw)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Queue, string(r.Payload), r.Left)
	_, err = c.QueueDelayedNow(ctx, items[0].At, items[0].Raw)
	fmt.Println(errors.Is(err, client.ErrNoSuchDelayedItem))
	if _, err := c.ClearQueue(ctx, "early"); err != nil {
		log.Fatal(err)
	}
	// Output:
	// early {"class":"Report","args":[7]} 0
	// true
}
