package schedule_test

import (
	"fmt"
	"log"
	"time"

	"github.com/resque-go/resque-go/schedule"
)

// Parse reads a resque-scheduler schedule file; each entry says when it
// runs and its next slot. client.Schedules reads the ones in Redis.
func ExampleParse() {
	entries, err := schedule.Parse([]byte(`
cleanup:
  cron: "0 3 * * * UTC"
  class: Cleanup
  queue: low
  args: [7]
heartbeat:
  every: 5m
  class: Ping
  queue: high
`))
	if err != nil {
		log.Fatal(err) // names every bad entry
	}
	now := time.Date(2026, 5, 1, 10, 2, 0, 0, time.UTC)
	for _, e := range entries {
		fmt.Println(e.Name, e.Class, e.Queue, string(e.Args), e.When(), e.Next(now).Format(time.TimeOnly))
	}
	// Output:
	// cleanup Cleanup low [7] cron 0 3 * * * UTC 03:00:00
	// heartbeat Ping high [] every 5m 10:05:00
}
