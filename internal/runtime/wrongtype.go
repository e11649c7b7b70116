package runtime

import (
	"slices"
	"sync"
	"time"
)

// Queues whose key holds another type (a key written by hand, e.g.
// `SET resque:queue:b x`): every claim skips them and serves the queues
// after them (rdb.ClaimResult.WrongType). The worker names each in its log
// once every wrongTypeLogEvery while claims keep meeting it, and lists the
// ones met in the last wrongTypeRecent in its runtime record (WrongTypeQueues:
// `resque-go stats`). A claim that meets none costs one length check.

const (
	wrongTypeLogEvery = time.Minute
	wrongTypeRecent   = 2 * time.Minute
)

// wrongTypes remembers when claims last met each such queue, and when it
// was last logged.
type wrongTypes struct {
	mu     sync.Mutex
	seen   map[string]time.Time
	logged map[string]time.Time
}

// noteWrongType records queues a claim skipped at now and logs those not
// logged in the last minute.
func (w *Worker) noteWrongType(queues []string) {
	now := w.cfg.Now()
	t := &w.wrongType
	t.mu.Lock()
	if t.seen == nil {
		t.seen, t.logged = map[string]time.Time{}, map[string]time.Time{}
	}
	var log []string
	for _, q := range queues {
		t.seen[q] = now
		if last, ok := t.logged[q]; !ok || now.Sub(last) >= wrongTypeLogEvery || now.Before(last) {
			t.logged[q] = now
			log = append(log, q)
		}
	}
	t.mu.Unlock()
	for _, q := range log {
		w.log.Error().Str("queue", q).Str("key", w.client.Keys().Queue(q)).
			Msg("queue key holds another type (written by hand?): the queue is skipped, the queues after it are served; fix or delete the key")
	}
}

// WrongTypeQueues lists, sorted, the queues this worker's claims skipped
// in the last two minutes because their key holds another type.
func (w *Worker) WrongTypeQueues() []string {
	t := &w.wrongType
	now := w.cfg.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for q, at := range t.seen {
		if now.Sub(at) <= wrongTypeRecent {
			out = append(out, q)
		} else {
			delete(t.seen, q)
			delete(t.logged, q)
		}
	}
	slices.Sort(out)
	return out
}
