package web

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/resque-go/resque-go/client"
)

// hub reads the overview from Redis for every page of one dashboard: one
// reading per interval at most, whatever the number of pages open. While
// at least one event stream listens it reads every interval and sends the
// reading to each; with none it reads only when a page asks.
type hub struct {
	c        *client.Client
	interval time.Duration
	now      func() time.Time

	mu      sync.Mutex
	last    overviewView
	lastAt  time.Time
	lastMsg []byte
	subs    map[chan []byte]struct{}
	stop    context.CancelFunc
	reading chan struct{} // closed when the reading under way ends; nil when none
	sched   schedulerCache
	pools   poolCache
	hist    historyCache
}

func newHub(c *client.Client, interval time.Duration, now func() time.Time) *hub {
	return &hub{c: c, interval: interval, now: now, subs: map[chan []byte]struct{}{}}
}

// overview is a reading at most one interval old: the last one, or a new
// one (a request that comes while another reads waits for that reading).
func (h *hub) overview(ctx context.Context) overviewView { return h.read(ctx, h.interval) }

// read returns the last reading if it is younger than maxAge, else a new
// one.
func (h *hub) read(ctx context.Context, maxAge time.Duration) overviewView {
	for {
		h.mu.Lock()
		if !h.lastAt.IsZero() && h.now().Sub(h.lastAt) < maxAge {
			v := h.last
			h.mu.Unlock()
			return v
		}
		if h.reading != nil {
			wait := h.reading
			h.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return overviewView{Time: h.now(), Error: ctx.Err().Error()}
			}
		}
		done := make(chan struct{})
		h.reading = done
		h.mu.Unlock()
		v := h.readOverview(ctx)
		msg, _ := json.Marshal(v)
		h.mu.Lock()
		h.last, h.lastAt, h.lastMsg, h.reading = v, h.now(), msg, nil
		h.mu.Unlock()
		close(done)
		return v
	}
}

// subscribe adds an event stream; the channel gets each reading (the
// latest one when the stream falls behind). cancel removes it.
func (h *hub) subscribe() (ch chan []byte, cancel func()) {
	ch = make(chan []byte, 1)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	if h.stop == nil {
		ctx, stop := context.WithCancel(context.Background())
		h.stop = stop
		go h.poll(ctx)
	}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		if len(h.subs) == 0 && h.stop != nil {
			h.stop()
			h.stop = nil
		}
		h.mu.Unlock()
	}
}

// poll reads every interval while streams listen and sends each reading.
func (h *hub) poll(ctx context.Context) {
	t := time.NewTicker(h.interval)
	defer t.Stop()
	for {
		v := h.read(ctx, h.interval/2)
		h.sampleHistory(ctx, v.Time)
		h.mu.Lock()
		msg := h.lastMsg
		for ch := range h.subs {
			select {
			case <-ch: // drop the reading it has not taken: send the newest
			default:
			}
			ch <- msg
		}
		h.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// readOverview reads what the overview shows in five round trips
// (client.Overview, INFO, the process records), whatever the number of
// queues and workers: two commands per queue and per worker.
func (h *hub) readOverview(ctx context.Context) overviewView {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, ws := readOverview(ctx, h.c, h.now)
	h.readHosts(ctx, &v, ws)
	return v
}

func readOverview(ctx context.Context, c *client.Client, now func() time.Time) (overviewView, []client.WorkerInfo) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v := overviewView{Time: now().UTC()}
	o, err := c.Overview(ctx)
	if err != nil && len(o.Queues) == 0 && o.Stats.Time.IsZero() {
		return overviewView{Time: v.Time, Error: clean(err.Error()), Queues: []queueView{}, Workers: []workerView{}, SetAside: []setAsideView{}}, nil
	}
	st, qs, ws := o.Stats, o.Queues, o.Workers
	v.Stats = statsView{Processed: st.Processed, Failed: st.Failed, FailedEntries: st.FailedEntries, Pending: st.Pending,
		Queues: st.Queues, Workers: st.Workers, Working: st.Working}
	v.Queues = make([]queueView, len(qs))
	for i, q := range qs {
		v.Queues[i] = newQueueView(v.Time, q)
	}
	v.SetAside = make([]setAsideView, len(st.SetAside))
	for i, a := range st.SetAside {
		v.SetAside[i] = setAsideView{Key: clean(a.Key), What: clean(a.What), At: timePtr(a.At), AgeSeconds: agePtr(v.Time, a.At)}
	}
	v.Workers = make([]workerView, len(ws))
	for i, w := range ws {
		v.Workers[i] = newWorkerView(v.Time, w)
	}
	info, ierr := c.ServerInfo(ctx)
	v.Redis = redisView{Version: info.Version, Mode: info.Mode, Role: info.Role, UptimeSeconds: int64(info.Uptime / time.Second),
		ConnectedClients: info.ConnectedClients, UsedMemory: info.UsedMemory, PeakMemory: info.PeakMemory,
		MaxMemory: info.MaxMemory, MaxMemoryPolicy: info.MaxMemoryPolicy, OpsPerSec: info.OpsPerSec}
	for _, e := range []error{err, ierr} {
		if e != nil && v.Error == "" {
			v.Error = clean(e.Error())
		}
	}
	return v, ws
}
