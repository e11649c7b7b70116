package web_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/internal/redistest"
)

// xaddEvent appends an event to the events stream in the layout workers
// write (internal/rdb/scripts: event, id, class, queue, worker, attempt,
// duration_ms) and returns its stream id.
func (e *env) xaddEvent(event, id, class, queue, worker string, attempt, durMS int) string {
	e.t.Helper()
	v := e.do("XADD", e.raw.Keys().Events(), "*", "event", event, "id", id, "class", class, "queue", queue,
		"worker", worker, "attempt", attempt, "duration_ms", durMS)
	return string(v.([]byte))
}

type jobEventsJSON struct {
	Key     string `json:"key"`
	Exists  bool   `json:"exists"`
	Problem string `json:"problem"`
	State   string `json:"state"`
	Last    string `json:"last"`
	Events  []struct {
		StreamID   string `json:"stream_id"`
		Event      string `json:"event"`
		State      string `json:"state"`
		ID         string `json:"id"`
		Class      string `json:"class"`
		Queue      string `json:"queue"`
		Worker     string `json:"worker"`
		Attempt    int    `json:"attempt"`
		DurationMS int64  `json:"duration_ms"`
	} `json:"events"`
}

func (e *env) jobEvents(query string) jobEventsJSON {
	e.t.Helper()
	var d jobEventsJSON
	r := e.get("api/job-events?"+query, viewerSecret)
	if r.code != http.StatusOK {
		e.t.Fatalf("api/job-events?%s: %d %s", query, r.code, r.body)
	}
	r.decode(e.t, &d)
	return d
}

func TestJobEventsPageAndFilters(t *testing.T) {
	e := newEnv(t)
	// a real enqueue with its event, and a job's life written as workers do
	if _, err := e.c.EnqueueRaw(ctx(), "mail", "Mailer", []byte(`[1]`), client.WithEvent()); err != nil {
		t.Fatal(err)
	}
	e.xaddEvent("enqueued", "job-1", "<b>Bold</b>", "q<script>alert(1)</script>", "", 0, 0)
	e.xaddEvent("started", "job-1", "<b>Bold</b>", "q<script>alert(1)</script>", "host:1-0:q", 1, 0)
	e.xaddEvent("failed", "job-1", "<b>Bold</b>", "q<script>alert(1)</script>", "host:1-0:q", 1, 1500)
	e.xaddEvent("retried", "job-1", "<b>Bold</b>", "q<script>alert(1)</script>", "host:1-0:q", 1, 0)
	e.xaddEvent("enqueued", "jöb-ü", "Ünïcode", "mail", "", 0, 0)
	e.xaddEvent("succeeded", "jöb-ü", "Ünïcode", "mail", "host:2-0:mail", 1, 42)

	page := e.get("job-events", viewerSecret)
	checkPage(t, "events page", page)
	for _, want := range []string{`id="job-events"`, "&lt;b&gt;Bold&lt;/b&gt;", "Ünïcode", "Mailer", "host:2-0:mail", "1.5s",
		`href="/job-events?id=j%C3%B6b-%C3%BC"`, `data-follow="1"`} {
		if !strings.Contains(page.body, want) {
			t.Errorf("events page lacks %s", want)
		}
	}
	if strings.Contains(page.body, "<script>alert") || strings.Contains(page.body, "<b>Bold") {
		t.Error("events page shows unescaped payload text")
	}
	if !strings.Contains(page.body, `aria-current="page">Events</a>`) {
		t.Error("Events is not the current page in the navigation")
	}

	before := e.commands()
	all := e.jobEvents("")
	if used := e.commands() - before - 1; used != 2 {
		t.Errorf("GET /api/job-events: %d Redis commands, want 2 (TYPE, XREVRANGE)", used)
	}
	if !all.Exists || len(all.Events) != 7 || all.Events[0].Event != "succeeded" || all.Events[6].Class != "Mailer" {
		t.Fatalf("all events (newest first) = %+v", all)
	}
	if all.Last != all.Events[0].StreamID || all.Events[0].DurationMS != 42 || all.Events[0].Worker != "host:2-0:mail" {
		t.Errorf("newest = %+v, last %s", all.Events[0], all.Last)
	}
	if d := e.jobEvents("class=" + url.QueryEscape("<b>Bold</b>")); len(d.Events) != 4 || d.Events[1].Event != "failed" {
		t.Errorf("class filter: %+v", d.Events)
	}
	if d := e.jobEvents("queue=mail"); len(d.Events) != 3 {
		t.Errorf("queue filter: %+v", d.Events)
	}
	if d := e.jobEvents("queue=mail&count=1"); len(d.Events) != 1 || d.Events[0].Event != "succeeded" {
		t.Errorf("count=1: %+v", d.Events)
	}
	if d := e.jobEvents("class=Nope"); len(d.Events) != 0 || d.Last != all.Last {
		t.Errorf("nothing passes: %+v (last %s, want %s)", d.Events, d.Last, all.Last)
	}

	// a job's view: its events and its state from the last of them (as
	// job show: retried -> delayed)
	job := e.jobEvents("id=job-1")
	if job.State != "delayed" || len(job.Events) != 4 || job.Events[0].Event != "retried" || job.Events[0].State != "delayed" {
		t.Errorf("job-1: %+v", job)
	}
	if d := e.jobEvents("id=" + url.QueryEscape("jöb-ü")); d.State != "succeeded" || len(d.Events) != 2 {
		t.Errorf("jöb-ü: %+v", d)
	}
	jp := e.get("job-events?id=job-1", viewerSecret)
	checkPage(t, "a job's events", jp)
	if !strings.Contains(jp.body, `id="job-state" data-state="delayed">delayed<`) || !strings.Contains(jp.body, "Events of job job-1") {
		t.Errorf("job page: %.2000s", jp.body)
	}
	if de := e.request("GET", "job-events?id=job-1", viewerSecret, "", "", "Accept-Language", "de"); !strings.Contains(de.body, "Ereignisse des Jobs job-1") ||
		!strings.Contains(de.body, ">verzögert<") {
		t.Errorf("job page in German: %.2000s", de.body)
	}
	if d := e.jobEvents("id=nobody"); d.State != "" || len(d.Events) != 0 {
		t.Errorf("unknown job: %+v", d)
	}

	// no credential, a bad count
	if r := e.get("job-events", ""); r.code != http.StatusUnauthorized {
		t.Errorf("no credential: %d", r.code)
	}
	if r := e.get("api/job-events", ""); r.code != http.StatusUnauthorized {
		t.Errorf("API, no credential: %d", r.code)
	}
	if r := e.get("api/job-events?count=0", viewerSecret); r.code != http.StatusBadRequest {
		t.Errorf("count=0: %d %s", r.code, r.body)
	}
	if r := e.get("api/job-events?follow=1&after=x", viewerSecret); r.code != http.StatusBadRequest {
		t.Errorf("after=x: %d %s", r.code, r.body)
	}
}

func TestJobEventsStreamMissingOrOfAnotherType(t *testing.T) {
	e := newEnv(t)
	key := e.raw.Keys().Events()
	d := e.jobEvents("")
	if d.Exists || d.Key != key || len(d.Events) != 0 || d.Problem != "" {
		t.Errorf("no stream: %+v", d)
	}
	page := e.get("job-events", viewerSecret)
	checkPage(t, "events page, no stream", page)
	if !strings.Contains(page.body, `id="job-events-off"`) || !strings.Contains(page.body, key) || !strings.Contains(page.body, "resque-go work --events") {
		t.Errorf("no stream: the page does not say how to turn events on: %.3000s", page.body)
	}
	if strings.Contains(page.body, `data-follow="1"`) {
		t.Error("no stream: the page follows")
	}

	e.do("SET", key, "<i>not a stream</i>")
	d = e.jobEvents("")
	if !d.Exists || !strings.Contains(d.Problem, key) || !strings.Contains(d.Problem, "string") {
		t.Errorf("a string at the key: %+v", d)
	}
	if d = e.jobEvents("id=x"); !strings.Contains(d.Problem, key) {
		t.Errorf("a job's view, a string at the key: %+v", d)
	}
	page = e.get("job-events", viewerSecret)
	checkPage(t, "events page, a string at the key", page)
	if !strings.Contains(page.body, `id="job-events-problem"`) || !strings.Contains(page.body, key) {
		t.Errorf("a string at the key: %.3000s", page.body)
	}
}

// followJobEvents opens GET /api/job-events?follow=1&query and sends each
// event's data on the channel; close ends the stream.
func (e *env) followJobEvents(query string) (<-chan string, func()) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.base+"api/job-events?follow=1&"+query, nil)
	req.Header.Set("Authorization", "Bearer "+viewerSecret)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		e.t.Fatalf("job events stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var once sync.Once
	closeIt := func() { once.Do(func() { resp.Body.Close() }) }
	e.t.Cleanup(closeIt)
	out := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- d
			}
		}
	}()
	return out, closeIt
}

func nextEvent(t *testing.T, ch <-chan string) map[string]any {
	t.Helper()
	select {
	case d := <-ch:
		var v map[string]any
		if err := json.Unmarshal([]byte(d), &v); err != nil {
			t.Fatalf("event %q: %v", d, err)
		}
		return v
	case <-time.After(20 * time.Second):
		t.Fatal("no event came")
	}
	return nil
}

func TestJobEventsLive(t *testing.T) {
	e := newEnv(t)
	e.xaddEvent("enqueued", "a", "Old", "q", "", 0, 0)
	last := e.jobEvents("").Last
	// appended after the page was read, before its stream connects: the
	// stream catches up from the page's last id
	missed := e.xaddEvent("enqueued", "b", "Missed", "q", "", 0, 0)
	s, _ := e.followJobEvents("class=Missed&after=" + last)
	if v := nextEvent(t, s); v["stream_id"] != missed || v["class"] != "Missed" {
		t.Errorf("caught up: %v", v)
	}
	// appended after the stream connected; the filter holds back others
	f, _ := e.followJobEvents("queue=" + url.QueryEscape("<q>"))
	e.xaddEvent("started", "c", "Other", "elsewhere", "w", 1, 0)
	id := e.xaddEvent("succeeded", "c", "Live", "<q>", "w:1", 2, 250)
	v := nextEvent(t, f)
	if v["stream_id"] != id || v["class"] != "Live" || v["queue"] != "<q>" || v["state"] != "succeeded" || v["attempt"] != float64(2) || v["duration_ms"] != float64(250) {
		t.Errorf("live: %v", v)
	}
	// a real enqueue with its event
	if _, err := e.c.EnqueueRaw(ctx(), "<q>", "Real", []byte(`[]`), client.WithEvent()); err != nil {
		t.Fatal(err)
	}
	if v := nextEvent(t, f); v["class"] != "Real" || v["event"] != "enqueued" || v["state"] != "queued" {
		t.Errorf("real enqueue: %v", v)
	}
}

// blockedClients is INFO's blocked_clients.
func (e *env) blockedClients() int64 {
	info := string(e.do("INFO", "clients").([]byte))
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "blocked_clients:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

// One reader of the events stream serves every open page: the Redis
// commands for the same events are about the same with 1 page and with 20.
func TestJobEventsShareOneReader(t *testing.T) {
	e := newEnv(t)
	e.xaddEvent("enqueued", "seed", "Seed", "q", "", 0, 0)
	const events = 20
	measure := func(tabs int) (used int64, took time.Duration, idle float64) {
		streams := make([]<-chan string, tabs)
		closers := make([]func(), tabs)
		for i := range streams {
			streams[i], closers[i] = e.followJobEvents("queue=q")
		}
		before, start := e.commands(), time.Now()
		for i := range events {
			e.xaddEvent("started", "j"+strconv.Itoa(i), "Job", "q", "w", 1, 0)
			for _, s := range streams {
				if v := nextEvent(t, s); v["id"] != "j"+strconv.Itoa(i) {
					t.Fatalf("event %d: %v", i, v)
				}
			}
		}
		used, took = e.commands()-before-1-events, time.Since(start) // less the INFO and the XADDs
		// and with no event: the reader blocks (XREAD BLOCK 5s), so a
		// second of open pages costs a command or none
		before, start = e.commands(), time.Now()
		<-time.After(time.Second) // a window to count in, not a wait for progress
		idle = float64(e.commands()-before-1) / time.Since(start).Seconds()
		for _, c := range closers {
			c()
		}
		// nobody listens: the reader stops (its blocked XREAD ends)
		redistest.Eventually(t, 0, func() bool { return e.blockedClients() == 0 }, "the events reader stops when no page listens")
		return used, took, idle
	}
	one, tookOne, idleOne := measure(1)
	twenty, tookTwenty, idleTwenty := measure(20)
	t.Logf("job events, %d events appended one by one: 1 page %d Redis commands (%.0f/s over %v), 20 pages %d commands (%.0f/s over %v); "+
		"no events: 1 page %.1f commands/s, 20 pages %.1f commands/s",
		events, one, float64(one)/tookOne.Seconds(), tookOne.Round(time.Millisecond),
		twenty, float64(twenty)/tookTwenty.Seconds(), tookTwenty.Round(time.Millisecond), idleOne, idleTwenty)
	// one XREAD per event or per few (more when a read ends between two
	// XADDs); a reader per page would be 20 times as many
	if one > 2*events+5 || twenty > 2*events+5 {
		t.Errorf("%d events cost %d commands with 1 page, %d with 20: the reader is not shared", events, one, twenty)
	}
	if idleTwenty > 5 {
		t.Errorf("20 idle pages cost %.1f commands/s: the reader is not shared", idleTwenty)
	}
}
