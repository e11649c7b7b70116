package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/resque-go/resque-go/client"
)

// The job events page (docs/events.md, docs/dashboard.md): the newest
// entries of the events stream `work --events` writes, filtered by class,
// queue or job id over a bounded read of the newest entries (as `events
// tail`), and new ones as they come, by server-sent events fed by one
// shared reader per dashboard (evHub): one XREAD BLOCK loop whatever the
// number of open pages. With a job id it is that job's view: its events
// the stream still keeps and its state from the last of them, as
// `resque-go job show` says it.

const (
	// defaultJobEvents is how many events the page shows; maxJobEvents
	// the most a request may ask for.
	defaultJobEvents = 100
	maxJobEvents     = 1000
	// catchUpEvents bounds what a page that (re)connects reads of what it
	// missed.
	catchUpEvents = 1000
)

// jobEventView is one event as the page and the API show it.
type jobEventView struct {
	StreamID   string     `json:"stream_id"`
	Time       *time.Time `json:"time"`
	Event      string     `json:"event"`
	State      string     `json:"state"`
	ID         string     `json:"id"`
	Class      string     `json:"class"`
	Queue      string     `json:"queue"`
	Worker     string     `json:"worker"`
	Attempt    int        `json:"attempt"`
	DurationMS int64      `json:"duration_ms"`
	Duration   string     `json:"-"`
}

func newJobEventView(e client.Event) jobEventView {
	v := jobEventView{StreamID: clean(e.StreamID), Time: timePtr(e.Time), Event: clean(e.Event), State: clean(e.State()),
		ID: clean(e.JobID), Class: clean(e.Class), Queue: clean(e.Queue), Worker: clean(e.Worker), Attempt: e.Attempt,
		DurationMS: e.Duration.Milliseconds()}
	if e.Duration > 0 {
		v.Duration = e.Duration.String()
	}
	return v
}

// jobEventsData is the page, and GET /api/job-events.
type jobEventsData struct {
	Class string `json:"class"`
	Queue string `json:"queue"`
	ID    string `json:"id"`
	Count int    `json:"count"`
	// Key is the stream's key; Exists whether it exists; Problem says why
	// it cannot be read (a key of another type).
	Key     string `json:"key"`
	Exists  bool   `json:"exists"`
	Problem string `json:"problem,omitempty"`
	// State is the job's state from its last event (a job's view only;
	// "" when the stream keeps none of its events).
	State string `json:"state,omitempty"`
	// Events are newest first.
	Events []jobEventView `json:"events"`
	// Last is the id of the stream's newest entry when the page was
	// read: where the live stream goes on from.
	Last string `json:"last"`
	// Window is how many of the newest entries the filter looked at (0 for
	// a job's view, which reads the whole stream).
	Window int `json:"window"`
	// Query is the filter as a URL query, for the live stream.
	Query string `json:"-"`
}

// streamID is a stream entry id, "<ms>-<seq>".
var streamID = regexp.MustCompile(`^[0-9]{1,20}-[0-9]{1,20}$`)

// eventQuery reads the filter of a request: class, queue, id, count.
func eventQuery(r *http.Request) (client.EventFilter, int, error) {
	q := r.URL.Query()
	f := client.EventFilter{Class: strings.TrimSpace(q.Get("class")), Queue: strings.TrimSpace(q.Get("queue")),
		JobID: strings.TrimSpace(q.Get("id"))}
	n := defaultJobEvents
	if v := q.Get("count"); v != "" {
		c, err := strconv.Atoi(v)
		if err != nil || c < 1 || c > maxJobEvents {
			return f, 0, statusErr(http.StatusBadRequest, "count %q: want 1 to %d", clip(v, 40), maxJobEvents)
		}
		n = c
	}
	return f, n, nil
}

func (s *server) jobEventsOf(r *http.Request) (jobEventsData, error) {
	f, n, err := eventQuery(r)
	if err != nil {
		return jobEventsData{}, err
	}
	d := jobEventsData{Class: clean(f.Class), Queue: clean(f.Queue), ID: clean(f.JobID), Count: n, Events: []jobEventView{}}
	q := url.Values{}
	for k, v := range map[string]string{"class": f.Class, "queue": f.Queue, "id": f.JobID} {
		if v != "" {
			q.Set(k, v)
		}
	}
	d.Query = q.Encode()
	want := n
	if f.JobID != "" {
		want = 0 // a job's view reads the job's events below
	}
	res, err := s.c.RecentEvents(r.Context(), f, want, 0)
	if err != nil {
		return jobEventsData{}, err
	}
	d.Key, d.Exists = clean(res.Key), res.Type != "none"
	switch {
	case res.Type == "none":
		return d, nil
	case res.Type != "stream":
		d.Problem = fmt.Sprintf("the key %s holds a %s, not a stream: no events can be read from it", clip(res.Key, 200), clip(res.Type, 40))
		return d, nil
	}
	evs := res.Events
	if f.JobID != "" {
		// a job's view: every event of the job the stream keeps, as job
		// show reads them (the whole stream, a page at a time)
		all, err := s.c.JobEvents(r.Context(), f.JobID)
		if err != nil {
			return jobEventsData{}, err
		}
		evs = evs[:0]
		for _, e := range all {
			if f.Keep(e) {
				evs = append(evs, e)
			}
		}
		if len(all) > 0 {
			d.State = clean(all[len(all)-1].State())
		}
		if len(evs) > n {
			evs = evs[len(evs)-n:]
		}
	} else {
		d.Window = client.DefaultEventsWindow
	}
	for i := len(evs) - 1; i >= 0; i-- {
		d.Events = append(d.Events, newJobEventView(evs[i]))
	}
	d.Last = res.Newest
	return d, nil
}

func (s *server) jobEventsPage(w http.ResponseWriter, r *http.Request) {
	d, err := s.jobEventsOf(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	title := "Events"
	if d.ID != "" {
		title = titled("Events of job %s", d.ID)
	}
	s.render(w, r, http.StatusOK, "jobevents", title, "job-events", d)
}

func (s *server) apiJobEvents(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("follow") == "1" {
		s.followJobEvents(w, r)
		return
	}
	d, err := s.jobEventsOf(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// followJobEvents streams the events that pass the request's filter as
// server-sent events ("job-event", data one jobEventView, id its stream
// id), from after the id the page last showed (after=, or the browser's
// Last-Event-ID on a reconnect): first what the page missed (one bounded
// read), then what the shared reader brings.
func (s *server) followJobEvents(w http.ResponseWriter, r *http.Request) {
	f, _, err := eventQuery(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	after := r.Header.Get("Last-Event-ID")
	if after == "" {
		after = r.URL.Query().Get("after")
	}
	if after != "" && !streamID.MatchString(after) {
		s.fail(w, r, http.StatusBadRequest, fmt.Sprintf("after %q: want a stream id such as 1700000000000-0", clip(after, 40)))
		return
	}
	ch, cancel := s.evLive.subscribe()
	defer cancel()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil || rc.Flush() != nil {
		return
	}
	last := after
	send := func(e client.Event) error {
		if last != "" && !streamAfter(e.StreamID, last) {
			return nil // the catch-up read sent it already
		}
		last = e.StreamID
		if !f.Keep(e) {
			return nil
		}
		b, _ := json.Marshal(newJobEventView(e))
		_, err := fmt.Fprintf(w, "id: %s\nevent: job-event\ndata: %s\n\n", e.StreamID, b)
		return err
	}
	if after != "" {
		missed, err := s.c.AfterEvents(r.Context(), after, catchUpEvents)
		if err == nil { // a stream of another type: nothing to catch up, the page says why
			for _, e := range missed {
				if send(e) != nil {
					return
				}
			}
		}
		if rc.Flush() != nil {
			return
		}
	}
	keepAlive := time.NewTicker(30 * time.Second)
	defer keepAlive.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case e := <-ch:
			err = send(e)
		case <-keepAlive.C:
			_, err = fmt.Fprint(w, ": keep-alive\n\n")
		}
		if err != nil || rc.Flush() != nil {
			return
		}
	}
}

// streamAfter reports whether stream id a comes after b.
func streamAfter(a, b string) bool {
	ams, aseq := splitStreamID(a)
	bms, bseq := splitStreamID(b)
	return ams > bms || ams == bms && aseq > bseq
}

func splitStreamID(id string) (ms, seq uint64) {
	m, s, _ := strings.Cut(id, "-")
	ms, _ = strconv.ParseUint(m, 10, 64)
	seq, _ = strconv.ParseUint(s, 10, 64)
	return ms, seq
}

// evHub reads the events stream for every page of one dashboard: while
// at least one page listens, one client.Events subscription (one XREAD
// BLOCK loop) sends every new entry to each; with none it reads nothing.
type evHub struct {
	c *client.Client

	mu   sync.Mutex
	subs map[chan client.Event]struct{}
	stop context.CancelFunc
}

func newEvHub(c *client.Client) *evHub {
	return &evHub{c: c, subs: map[chan client.Event]struct{}{}}
}

// subscribe adds a page; its channel gets every new event (a page that
// falls more than its buffer behind loses events: it shows the newest).
// The reader has taken its starting point when subscribe returns, so a
// read of what came before (AfterEvents) leaves no gap. cancel removes
// the page, and stops the reader after the last one.
func (h *evHub) subscribe() (ch chan client.Event, cancel func()) {
	ch = make(chan client.Event, 256)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs[ch] = struct{}{}
	if h.stop == nil {
		ctx, stop := context.WithCancel(context.Background())
		h.stop = stop
		h.start(ctx)
	}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, ch)
		if len(h.subs) == 0 && h.stop != nil {
			h.stop()
			h.stop = nil
		}
	}
}

// start subscribes to the stream from its newest entry (called with mu
// held) and fans what comes out to the pages until ctx ends. A failed
// start (Redis down) is tried again each second in the background.
func (h *evHub) start(ctx context.Context) {
	src, err := h.c.Events(ctx, client.EventFilter{})
	go func() {
		for err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			src, err = h.c.Events(ctx, client.EventFilter{})
		}
		for e := range src {
			h.mu.Lock()
			for ch := range h.subs {
				select {
				case ch <- e:
				default: // a page that does not keep up loses this one
				}
			}
			h.mu.Unlock()
		}
	}()
}
