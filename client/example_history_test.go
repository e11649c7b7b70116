package client_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/resque-go/resque-go/client"
)

// Read the jobs processed and failed per hour over the last 90 days. The
// history is written by resque-go processes; a program running next to
// Ruby or PHP workers alone can sample it itself every few seconds.
func ExampleClient_History() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL"), Namespace: "example-history"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	now := time.Now()
	if err := c.SampleHistory(ctx, now, 5*time.Second); err != nil {
		log.Fatal(err)
	}
	h, err := c.History(ctx, "hour", now)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(h.Points), "buckets of", h.Step, "processed", h.Processed)
	for _, r := range client.HistoryResolutions() {
		fmt.Println(r.Name, r.Slots, r.Span)
	}
	// Output:
	// 2160 buckets of 1h0m0s processed 0
	// minute 4320 72h0m0s
	// hour 2160 2160h0m0s
	// day 730 17520h0m0s
}
