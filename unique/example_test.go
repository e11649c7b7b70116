package unique_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/unique"
)

// The example reads a real server's URL from REDIS_URL.
func TestMain(m *testing.M) { os.Exit(redistest.Main(m, "REDIS_URL")) }

// At most one job per uid is queued or running: a second one is refused
// until the uid is free again (its job ends, or an operator clears it).
func ExampleInfo() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	if _, err := c.EnqueueRaw(ctx, "reports", "Rebuild", []byte(`[42]`), client.Unique("report-42")); err != nil {
		log.Fatal(err)
	}
	_, err = c.EnqueueRaw(ctx, "reports", "Rebuild", []byte(`[42]`), client.Unique("report-42"))
	fmt.Println("second:", errors.Is(err, unique.ErrDuplicate))

	info, err := c.UniqueID(ctx, "report-42")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.UID, info.State)

	res, err := c.ClearUnique(ctx, "report-42", "example")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res == unique.ClearCleared)

	if _, err := c.ClearQueue(ctx, "reports"); err != nil {
		log.Fatal(err)
	}
	// Output:
	// second: true
	// report-42 queued
	// true
}
