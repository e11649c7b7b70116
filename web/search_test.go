package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/web"
)

// searchLine is one JSON line of api/search: a hit, or the end.
type searchLine struct {
	Place  string `json:"place"`
	Failed *struct {
		Index     int64  `json:"index"`
		Digest    string `json:"digest"`
		Class     string `json:"class"`
		Queue     string `json:"queue"`
		Exception string `json:"exception"`
	} `json:"failed"`
	Delayed *struct {
		AtUnix int64  `json:"at_unix"`
		Digest string `json:"digest"`
		Class  string `json:"class"`
		Queue  string `json:"queue"`
	} `json:"delayed"`
	Job *struct {
		Class string `json:"class"`
		Queue string `json:"queue"`
		ID    string `json:"id"`
	} `json:"job"`
	Done     bool   `json:"done"`
	Hits     int    `json:"hits"`
	Complete bool   `json:"complete"`
	More     bool   `json:"more"`
	Error    string `json:"error"`
}

func (l searchLine) class() string {
	switch {
	case l.Failed != nil:
		return l.Failed.Class
	case l.Delayed != nil:
		return l.Delayed.Class
	case l.Job != nil:
		return l.Job.Class
	}
	return ""
}

// search asks api/search and returns its hits and its last line.
func (e *env) search(query string) ([]searchLine, searchLine) {
	e.t.Helper()
	r := e.get("api/search?"+query, viewerSecret)
	if r.code != http.StatusOK || !strings.HasPrefix(r.head.Get("Content-Type"), "application/x-ndjson") {
		e.t.Fatalf("api/search?%s: %d %s %.300s", query, r.code, r.head.Get("Content-Type"), r.body)
	}
	var hits []searchLine
	var end searchLine
	for _, l := range strings.Split(strings.TrimSpace(r.body), "\n") {
		var v searchLine
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			e.t.Fatalf("api/search?%s: a line that is not JSON (%v): %.200s", query, err, l)
		}
		if v.Done {
			end = v
			continue
		}
		hits = append(hits, v)
	}
	if !end.Done {
		e.t.Fatalf("api/search?%s: no last line", query)
	}
	return hits, end
}

// places counts hits by place.
func places(hits []searchLine) map[string]int {
	n := map[string]int{}
	for _, h := range hits {
		n[h.Place]++
	}
	return n
}

// seedSearch writes what the search tests look for: jobs enqueued and
// delayed by resque-go, a failure as resque-go records one, the captured
// Ruby, PHP and Node data and the odd payloads in every place.
func seedSearch(e *env) {
	e.t.Helper()
	seed(e)
	seedScheduled(e)
	if _, err := e.c.Enqueue(ctx(), "mail", "Mailer", "ann@example.com", map[string]any{"order": "A-1001"}); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.c.EnqueueIn(ctx(), time.Hour, "mail", "Mailer", "bob@example.com", map[string]any{"order": "A-1002"}); err != nil {
		e.t.Fatal(err)
	}
	f := protocol.Failure{FailedAt: time.Unix(1795300000, 0), Payload: []byte(`{"class":"Mailer","args":["cy@example.com",{"order":"A-1003"}],"id":"job-1003","queue":"mail"}`),
		Exception: "Net::ReadTimeout", Error: "timed out", Backtrace: []string{"mailer.rb:1"}, Worker: "host:1:mail", Queue: "mail"}
	e.do("RPUSH", e.key("failed"), f.Encode())
}

func TestSearchEveryPlace(t *testing.T) {
	e := newEnv(t)
	seedSearch(e)

	hits, end := e.search("q=A-100")
	if n := places(hits); n["failed"] != 1 || n["delayed"] != 1 || n["queued"] != 1 || !end.Complete || end.Hits != 3 {
		t.Errorf("q=A-100: %v, end %+v", n, end)
	}
	hits, _ = e.search("q=job-1003")
	if len(hits) != 1 || hits[0].Failed == nil || hits[0].Failed.Exception != "Net::ReadTimeout" {
		t.Errorf("by id: %+v", hits)
	}
	hits, _ = e.search("exception=ReadTimeout&queue=mail")
	if len(hits) != 1 || hits[0].Place != "failed" {
		t.Errorf("by exception and queue: %+v", hits)
	}
	hits, _ = e.search("class=Mailer&in=queued,delayed")
	if n := places(hits); n["failed"] != 0 || n["delayed"] != 1 || n["queued"] != 1 {
		t.Errorf("class=Mailer in queued and delayed: %v", n)
	}
	// the odd payloads: each place holds the huge one
	hits, end = e.search("class=Huge")
	if n := places(hits); n["failed"] != 1 || n["delayed"] != 1 || n["queued"] != 1 || end.Error != "" {
		t.Errorf("class=Huge: %v %+v", n, end)
	}
	// unicode as it is stored, and HTML Go's encoder wrote as \u003c
	for _, q := range []string{"日本語 🎉", "значение", "<b>not bold</b>", "<img src=x"} {
		hits, end = e.search("q=" + urlEncode(q))
		if len(hits) == 0 || end.Error != "" {
			t.Errorf("q=%q: %d hits, %+v", q, len(hits), end)
		}
	}
	// an entry that is not JSON is found by its bytes
	hits, _ = e.search("q=" + urlEncode("alert(5)") + "&in=failed")
	if len(hits) != 1 {
		t.Errorf("q=alert(5): %d hits", len(hits))
	}
	// a search that matches everything reads every place to its end, past
	// every odd entry (not JSON, invalid UTF-8, another type)
	hits, end = e.search("q=" + urlEncode("") + "&class=&queue=odd&limit=1000")
	if !end.Complete || end.Error != "" || len(hits) == 0 {
		t.Errorf("queue=odd: %d hits, %+v", len(hits), end)
	}
	// the limit
	hits, end = e.search("queue=odd&limit=2")
	if len(hits) != 2 || !end.More || end.Complete {
		t.Errorf("limit=2: %d hits, %+v", len(hits), end)
	}

	// the page: every hit escaped, links by content, no inline script
	for _, q := range []string{"search", "search?q=a&limit=1000", "search?queue=odd", "search?class=Huge", "search?q=" + urlEncode("<script>")} {
		r := e.get(q, adminSecret)
		checkPage(t, q, r)
	}
	r := e.get("search?q=A-1003", adminSecret)
	checkPage(t, "search?q=A-1003", r)
	if !strings.Contains(r.body, `/retry" class="inline"`) || !strings.Contains(r.body, "?digest=") || !strings.Contains(r.body, "1 found") {
		t.Errorf("the page of a failed hit offers no retry, link by digest or summary: %.2000s", r.body)
	}
	for _, bad := range []string{"api/search", "api/search?q=a&limit=0", "api/search?q=a&in=nowhere", "search?q=a&limit=x"} {
		if r := e.get(bad, viewerSecret); r.code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, r.code)
		}
	}
}

func TestSearchHitLinksAndActions(t *testing.T) {
	e := newEnv(t)
	seedSearch(e)
	hits, _ := e.search("q=job-1003")
	if len(hits) != 1 || hits[0].Failed == nil {
		t.Fatalf("hits %+v", hits)
	}
	h := hits[0].Failed
	// entries before it go away: the link and the action find it by its
	// bytes
	e.do("LPOP", e.key("failed"))
	if r := e.get(fmt.Sprintf("failed/%d?digest=%s", h.Index, h.Digest), viewerSecret); r.code != http.StatusOK || !strings.Contains(r.body, "job-1003") {
		t.Errorf("the hit's link: %d", r.code)
	}
	size, _ := e.c.QueueSize(ctx(), "mail")
	if r := e.postForm(fmt.Sprintf("failed/%d/retry", h.Index), operatorSecret, "digest", h.Digest); r.code != http.StatusOK {
		t.Errorf("retry from the hit: %d %.300s", r.code, r.body)
	}
	if n, _ := e.c.QueueSize(ctx(), "mail"); n != size+1 {
		t.Errorf("mail holds %d jobs after the retry, want %d", n, size+1)
	}
	hits, _ = e.search("q=bob@example.com&in=delayed")
	if len(hits) != 1 || hits[0].Delayed == nil {
		t.Fatalf("delayed hits %+v", hits)
	}
	if r := e.postForm("delayed/remove", operatorSecret, "at", fmt.Sprint(hits[0].Delayed.AtUnix), "digest", hits[0].Delayed.Digest); r.code != http.StatusOK {
		t.Errorf("remove the delayed hit: %d %.300s", r.code, r.body)
	}
	if hits, _ = e.search("q=bob@example.com&in=delayed"); len(hits) != 0 {
		t.Errorf("the delayed hit is still there")
	}
}

func TestSearchRoles(t *testing.T) {
	e := newEnv(t)
	seedSearch(e)
	for _, p := range []string{"search?q=A-1003", "api/search?q=A-1003"} {
		if r := e.get(p, ""); r.code != http.StatusUnauthorized {
			t.Errorf("%s without credentials: %d", p, r.code)
		}
		if r := e.get(p, viewerSecret); r.code != http.StatusOK || !strings.Contains(r.body, "job-1003") {
			t.Errorf("%s as viewer: %d", p, r.code)
		}
	}
	// a viewer is offered no action
	if r := e.get("search?q=A-100", viewerSecret); strings.Contains(r.body, `method="post"`) {
		t.Errorf("a viewer's search page offers actions")
	}
	if r := e.get("search?q=A-100", operatorSecret); strings.Count(r.body, `method="post"`) < 3 {
		t.Errorf("an operator's search page offers no action on each hit")
	}
}

// TestSearchStopsWhenClientLeaves: a search over a long list that the
// client leaves after its first hit issues no Redis call once its handler
// returned, and far fewer than reading the whole list takes.
func TestSearchStopsWhenClientLeaves(t *testing.T) {
	e := newEnv(t)
	const entries, per = 200_000, 10_000
	filler := make([]any, 0, per+1)
	filler = append(filler, e.key("failed"))
	for i := 0; i < per; i++ {
		filler = append(filler, fmt.Sprintf(`{"failed_at":"2026/11/21 10:00:00 UTC","payload":{"class":"Filler","args":[%d]},"exception":"E","error":"e","backtrace":[],"worker":"w:1:q","queue":"q"}`, i))
	}
	for i := 0; i < entries/per; i++ {
		e.do("RPUSH", filler...)
	}
	// the newest entry matches: the search finds it first and reads on
	e.do("RPUSH", e.key("failed"), `{"failed_at":"2026/11/21 10:00:00 UTC","payload":{"class":"Needle","args":["needle"]},"exception":"E","error":"e","backtrace":[],"worker":"w:1:q","queue":"q"}`)

	h, err := web.Handler(web.Options{Client: e.c, Users: []web.User{{Name: "vic", Role: web.RoleViewer, Secret: viewerSecret}}})
	if err != nil {
		t.Fatal(err)
	}
	returned := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(returned)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()

	before := e.commands()
	rctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(rctx, "GET", srv.URL+"/api/search?q=needle&in=failed", nil)
	req.Header.Set("Authorization", "Bearer "+viewerSecret)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, "Needle") {
		t.Fatalf("first line %q, %v", line, err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-returned:
	case <-time.After(30 * time.Second):
		t.Fatal("the search went on after the client left")
	}
	after := e.commands()
	// reading it all takes entries/500 calls at least
	if used := after - before - 1; used >= entries/500 {
		t.Errorf("the search made %d Redis calls after the client left; reading the whole list takes %d", used, entries/500)
	} else {
		t.Logf("Redis calls before the search stopped: %d (the whole list: %d or more)", used, entries/500)
	}
	if again := e.commands(); again != after+1 {
		t.Errorf("Redis calls went on after the handler returned: %d", again-after-1)
	}
}
