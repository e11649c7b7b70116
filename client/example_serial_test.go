package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/resque-go/resque-go/client"
)

// Release the serial-queue locks no registered worker holds (their holder
// died; each would otherwise last until it expires).
func ExampleClient_ReleaseSerialLock() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	locks, err := c.SerialLocks(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range locks {
		if len(l.Holders) > 0 || l.Problem != "" {
			continue
		}
		err := c.ReleaseSerialLock(ctx, l.Queue, l.Token)
		if errors.Is(err, client.ErrLockChanged) {
			continue // released, expired or taken again meanwhile
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("released", l.Queue)
	}
}
