package runtime

import (
	"context"
	"sync"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// queueList resolves the worker's queue spec; a glob spec is re-expanded
// against the queues set at most every refresh.
type queueList struct {
	spec    protocol.QueueSpec
	client  *rdb.Client
	refresh time.Duration
	now     func() time.Time
	static  []string // the list when spec has no glob

	mu      sync.Mutex
	list    []string
	fetched time.Time
}

func (l *queueList) current(ctx context.Context) ([]string, error) {
	if !l.spec.Dynamic() {
		return l.static, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.list != nil && l.now().Sub(l.fetched) < l.refresh {
		return l.list, nil
	}
	callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	known, err := l.client.KnownQueues(callCtx)
	if err != nil {
		return l.list, err
	}
	l.list, l.fetched = l.spec.Expand(known), l.now()
	return l.list, nil
}
