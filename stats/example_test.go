package stats_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/internal/redistest"
)

// The example reads a real server's URL from REDIS_URL.
func TestMain(m *testing.M) { os.Exit(redistest.Main(m, "REDIS_URL")) }

// A Snapshot is what `resque-go stats` shows; the client reads one and
// stats.Render or stats.WriteJSON print it.
func ExampleSnapshot() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for _, q := range []string{"mail", "mail", "images"} {
		if _, err := c.Enqueue(ctx, q, "Job"); err != nil {
			log.Fatal(err)
		}
	}

	s, err := c.Snapshot(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("pending", s.Totals.Pending, "in", s.Totals.Queues, "queues")
	for _, q := range s.Queues {
		fmt.Println(q.Name, q.Pending)
	}

	for _, q := range []string{"mail", "images"} {
		if _, err := c.ClearQueue(ctx, q); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// pending 3 in 2 queues
	// images 1
	// mail 2
}
