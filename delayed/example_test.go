package delayed_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/internal/redistest"
)

// The example reads a real server's URL from REDIS_URL.
func TestMain(m *testing.M) { os.Exit(redistest.Main(m, "REDIS_URL")) }

// A Filter selects delayed items by due time, queue, class and args; the
// client lists, counts and removes what it selects.
func ExampleFilter() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	monday := time.Date(2030, 1, 7, 9, 0, 0, 0, time.UTC)
	for day := range 5 {
		if _, err := c.EnqueueAt(ctx, monday.AddDate(0, 0, day), "reports", "Daily", day); err != nil {
			log.Fatal(err)
		}
	}
	midweek := delayed.Filter{From: monday.AddDate(0, 0, 1), To: monday.AddDate(0, 0, 3), Class: "Daily"}
	items, err := c.DelayedJobs(ctx, midweek, 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range items {
		fmt.Println(it.At.UTC().Weekday(), it.Queue, it.Class, string(it.Args))
	}
	// args are looked up in the index by queue, class and args
	n, err := c.DelayedCount(ctx, delayed.Filter{Queue: "reports", Class: "Daily", Args: []byte(`[4]`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("friday's:", n.Items)

	if _, err := c.ClearDelayed(ctx, nil); err != nil {
		log.Fatal(err)
	}
	// Output:
	// Tuesday reports Daily [1]
	// Wednesday reports Daily [2]
	// Thursday reports Daily [3]
	// friday's: 1
}
