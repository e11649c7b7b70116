package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// runLoop is the reference: a minimal Resque worker loop as Ruby Resque
// runs it (LPOP; SET worker:<id>; INCR stat:processed; INCR
// stat:processed:<id>; DEL worker:<id>) on conns connections, with a job's
// four writes sent in one pipeline together with the next LPOP: one round
// trip and five commands per job. It returns when the queue is empty.
func runLoop(ctx context.Context, url string, keys protocol.Keys, queue string, conns int) error {
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := 1; i <= conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := protocol.WorkerID{Host: "bench-loop", PID: os.Getpid(), Queues: queue, Slot: i}.String()
			if err := loopOne(ctx, url, keys, queue, id); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func loopOne(ctx context.Context, url string, keys protocol.Keys, queue, id string) error {
	c, err := dial(ctx, url)
	if err != nil {
		return err
	}
	defer c.close()
	qkey, wkey := keys.Queue(queue), keys.Worker(id)
	processed, processedMine := keys.StatProcessed(), keys.StatProcessedWorker(id)
	payload, err := str(c.do("LPOP", qkey))
	for {
		if errors.Is(err, errNil) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("loop: %w", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.send("SET", wkey, string(protocol.EncodeWorkerRecord(queue, time.Now(), []byte(payload))))
		// The no-op job runs here.
		c.send("INCR", processed)
		c.send("INCR", processedMine)
		c.send("DEL", wkey)
		c.send("LPOP", qkey)
		if err := c.flush(); err != nil {
			return fmt.Errorf("loop: %w", err)
		}
		for range 4 {
			if _, err := c.receive(); err != nil {
				return fmt.Errorf("loop: %w", err)
			}
		}
		payload, err = str(c.receive())
	}
}
