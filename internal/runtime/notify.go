package runtime

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"
)

// maxWatchedQueues bounds the blocked connections one process keeps; a
// longer queue list falls back to polling.
const maxWatchedQueues = 32

// blockTimeout bounds each blocking wait. A waker that is no longer wanted
// is stopped through its context (the blocked call is abandoned at once),
// so this only bounds how long a broken connection goes unnoticed; each
// renewal is a Redis command per watched queue.
const blockTimeout = 15 * time.Second

// notifier wakes idle slots when a watched queue gets a job. One waker
// goroutine per queue blocks on that queue without consuming it (see
// rdb.WaitQueue), and only while some slot is waiting: a busy process does
// not poll Redis at all. A job wakes one slot, not all of them: the woken
// slot claims it and, while jobs keep coming, goes on claiming with each
// finish; the waker wakes the next slot as long as the queue still has
// jobs, so a burst brings every slot in one by one and a single job costs
// one claim, not one per idle slot.
type notifier struct {
	client *rdb.Client
	log    zerolog.Logger

	mu      sync.Mutex
	token   chan struct{} // one token wakes one waiting slot
	want    chan struct{} // closed while some slot is waiting
	waiting int
	wakers  map[string]*service.Runner
	held    map[string]time.Time // queue -> its waker waits until then
}

func newNotifier(c *rdb.Client, log zerolog.Logger) *notifier {
	return &notifier{client: c, log: log, token: make(chan struct{}, 1), want: make(chan struct{}), wakers: map[string]*service.Runner{}}
}

// watch makes the waker set match queues. It returns false when there are
// too many queues to watch, and the caller should poll.
func (n *notifier) watch(ctx context.Context, queues []string) bool {
	if len(queues) > maxWatchedQueues {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	keep := make(map[string]bool, len(queues))
	for _, q := range queues {
		keep[q] = true
		if _, ok := n.wakers[q]; !ok {
			r := &service.Runner{}
			n.wakers[q] = r
			q := q
			r.Start(context.Background(), func(ctx context.Context) { n.wakerLoop(ctx, q) })
		}
	}
	for q, r := range n.wakers {
		if !keep[q] {
			delete(n.wakers, q)
			go r.Stop()
		}
	}
	return true
}

// wait blocks until a watched queue has a job, kick is closed, max passes
// or ctx is done; it reports whether a queue or kick woke it.
func (n *notifier) wait(ctx context.Context, max time.Duration, kick <-chan struct{}) bool {
	n.mu.Lock()
	n.waiting++
	if n.waiting == 1 {
		close(n.want)
	}
	n.mu.Unlock()
	t := time.NewTimer(max)
	defer t.Stop()
	woke := false
	select {
	case <-n.token:
		woke = true
	case <-kick:
		woke = true
	case <-ctx.Done():
	case <-t.C:
	}
	n.mu.Lock()
	n.waiting--
	if n.waiting == 0 {
		n.want = make(chan struct{})
	}
	n.mu.Unlock()
	return woke
}

// hold makes the wakers of queues wait d before their next blocking wait
// (a serial queue another slot holds: it has jobs, but none to claim yet).
func (n *notifier) hold(d time.Duration, queues map[string]bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.held == nil {
		n.held = map[string]time.Time{}
	}
	until := time.Now().Add(d)
	for q := range queues {
		n.held[q] = until
	}
}

// wakeOne wakes one waiting slot (a token left unclaimed wakes the next
// slot that waits, which then finds out for itself).
func (n *notifier) wakeOne() {
	select {
	case n.token <- struct{}{}:
	default:
	}
}

func (n *notifier) wakerLoop(ctx context.Context, q string) {
	var b backoff
	for {
		n.mu.Lock()
		want := n.want
		n.mu.Unlock()
		select {
		case <-want:
		case <-ctx.Done():
			return
		}
		n.mu.Lock()
		until := n.held[q]
		n.mu.Unlock()
		if d := time.Until(until); d > 0 && !service.Sleep(ctx, d) {
			return
		}
		has, err := n.client.WaitQueue(ctx, q, blockTimeout)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			d := b.next()
			n.log.Debug().Err(err).Str("queue", q).Dur("retry_in", d).Msg("blocking wait failed")
			service.Sleep(ctx, d)
			// Let a waiting slot re-claim: it reports Redis errors itself.
			n.wakeOne()
			continue
		}
		b.reset()
		if has {
			n.wakeOne()
		}
	}
}

func (n *notifier) stopAll() {
	n.mu.Lock()
	runners := make([]*service.Runner, 0, len(n.wakers))
	for q, r := range n.wakers {
		runners = append(runners, r)
		delete(n.wakers, q)
	}
	n.mu.Unlock()
	for _, r := range runners {
		r.Stop()
	}
}
