package web_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/web"
)

func urlEncode(s string) string { return url.QueryEscape(s) }

// odd payloads no page may fail on, each shown escaped.
var oddPayloads = []string{
	`this is <b>not</b> json <script>alert(1)</script>`,
	`{"class":"Huge","args":["` + strings.Repeat("x", 2<<20) + `"]}`,
	`{"class":"Ünïcødé","args":["日本語 🎉", {"ключ":"значение"}]}`,
	`{"class":"<script>alert(2)</script>","args":["<img src=x onerror=alert(3)>","</pre><script>alert(4)</script>"],"id":"<i>id</i>"}`,
	"{\"class\":\"Bad\xff\",\"args\":[\"\xfe\xff\"]}",
}

// dangerous are texts that must never reach a page unescaped.
var dangerous = []string{"<script>alert", "<img src=x", "<b>not", "<i>id", "<b>err", "<script>bt"}

// seed fills the namespace as Ruby, PHP, Node and resque-go leave it, plus
// odd payloads in a queue, in the failed list and in a worker record.
func seed(e *env) {
	e.t.Helper()
	for _, f := range [][2]string{
		{"ruby-resque-3.0.0", "failure"}, {"ruby-resque-3.0.0", "worker-running"}, {"ruby-resque-3.0.0", "enqueue"},
		{"php-resque-resque-master", "failure"}, {"php-resque-resque-master", "worker-running"},
		{"node-resque-9.7.1", "failure"}, {"node-resque-9.7.1", "worker-running"}, {"php-resque-chrisboulton", "enqueue"},
	} {
		e.load(fixtures.MustLoad(f[0], f[1]))
	}
	if _, err := e.c.Enqueue(ctx(), "go", "GoJob", 1, "two"); err != nil {
		e.t.Fatal(err)
	}
	e.do("SADD", e.key("queues"), "odd", "")
	for _, p := range oddPayloads {
		e.do("RPUSH", e.key("queue:odd"), p)
		entry := `{"failed_at":"2026/11/21 10:00:00 UTC","payload":` + p + `,"exception":"<script>bt</script>Odd","error":"<b>err</b>","backtrace":["<script>bt</script>"],"worker":"w:1:odd","queue":"odd"}`
		e.do("RPUSH", e.key("failed"), entry)
	}
	e.do("RPUSH", e.key("failed"), "not json <script>alert(5)</script>")
	e.do("RPUSH", e.key("failed"), "\xff\xfe not utf-8")
	e.do("SADD", e.key("workers"), "odd-host:77:<script>alert(6)</script>")
	e.do("SET", e.key("worker:odd-host:77:<script>alert(6)</script>"), `{"queue":"odd","run_at":"2026-11-21T10:00:00Z","payload":`+oddPayloads[3]+`}`)
	e.do("SADD", e.key("workers"), "odd-host:78:odd")
	e.do("SET", e.key("worker:odd-host:78:odd"), "not a record <script>alert(7)</script>")
}

// checkPage asserts an HTML answer is whole and safe.
func checkPage(t *testing.T, what string, r response) {
	t.Helper()
	if r.code != http.StatusOK {
		t.Errorf("%s: %d %.400s", what, r.code, r.body)
		return
	}
	if !strings.HasPrefix(r.head.Get("Content-Type"), "text/html") || !strings.HasSuffix(strings.TrimSpace(r.body), "</html>") {
		t.Errorf("%s: not a whole page: %s", what, r.head.Get("Content-Type"))
	}
	for _, d := range dangerous {
		if strings.Contains(r.body, d) {
			t.Errorf("%s: %q unescaped", what, d)
		}
	}
	if n, m := strings.Count(r.body, "<script"), strings.Count(r.body, `<script src="`); n != m {
		t.Errorf("%s: an inline script", what)
	}
	if strings.Contains(r.body, " style=") || strings.Contains(r.body, "<style") {
		t.Errorf("%s: an inline style", what)
	}
	if csp := r.head.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("%s: Content-Security-Policy %q", what, csp)
	}
}

type failedList struct {
	Total   int64 `json:"total"`
	Entries []struct {
		Index     int64  `json:"index"`
		Digest    string `json:"digest"`
		Queue     string `json:"queue"`
		Class     string `json:"class"`
		Exception string `json:"exception"`
		Retried   bool   `json:"retried"`
	} `json:"entries"`
}

func (e *env) failed(query string) failedList {
	e.t.Helper()
	var l failedList
	r := e.get("api/failed?limit=1000&"+query, viewerSecret)
	if r.code != http.StatusOK {
		e.t.Fatalf("api/failed: %d %s", r.code, r.body)
	}
	r.decode(e.t, &l)
	return l
}

func TestEveryPageAndReadRoute(t *testing.T) {
	e := newEnv(t)
	seed(e)
	fl := e.failed("")
	if len(fl.Entries) < 10 {
		t.Fatalf("%d failed entries", len(fl.Entries))
	}
	pages := []string{"", "queues", "queues/odd", "queues/odd?page=2", "queues/go", "queues/" + url.PathEscape("a/b"),
		"queues/odd/clear", "failed", "failed?queue=odd", "failed?class=Huge&exception=Odd", "failed?page=2",
		"failed/bulk?action=retry", "failed/bulk?action=remove&queue=odd", "workers", "audit"}
	for _, f := range fl.Entries {
		pages = append(pages, fmt.Sprintf("failed/%d?digest=%s", f.Index, f.Digest), fmt.Sprintf("failed/%d", f.Index))
	}
	for _, p := range pages {
		checkPage(t, "GET /"+p, e.get(p, viewerSecret))
	}
	api := []string{"api/whoami", "api/overview", "api/queues", "api/queues/odd", "api/queues/odd?offset=1&limit=2", "api/queues/go",
		"api/failed", "api/failed?queue=odd&offset=2&limit=3", "api/failed/count", "api/failed/count?class=Huge",
		"api/workers", "api/audit"}
	for _, f := range fl.Entries {
		api = append(api, fmt.Sprintf("api/failed/%d", f.Index), fmt.Sprintf("api/failed/%d?digest=%s", f.Index, f.Digest))
	}
	for _, p := range api {
		r := e.get(p, viewerSecret)
		var v any
		r.decode(t, &v)
		if r.code != http.StatusOK || !strings.HasPrefix(r.head.Get("Content-Type"), "application/json") {
			t.Errorf("GET /%s: %d %s %.300s", p, r.code, r.head.Get("Content-Type"), r.body)
		}
	}
	// what the pages must show
	ov := e.get("", viewerSecret).body
	all := ov + e.get("workers", viewerSecret).body + e.get("queues/odd", viewerSecret).body + e.get("queues/go", viewerSecret).body + e.get("queues/mail", viewerSecret).body
	for _, want := range []string{"odd", "go", "GoJob", "&lt;script&gt;alert(6)&lt;/script&gt;", "Ünïcødé", "Mail_Job"} {
		if !strings.Contains(all, want) {
			t.Errorf("pages lack %q", want)
		}
	}
	var overview struct {
		Stats   struct{ Workers, Pending int64 } `json:"stats"`
		Workers []struct {
			ID  string `json:"id"`
			Job *struct {
				Class string `json:"class"`
			} `json:"job"`
		} `json:"workers"`
		Queues []struct {
			Name       string `json:"name"`
			AgeSeconds *int64 `json:"age_seconds"`
		} `json:"queues"`
		Redis struct{ Version string } `json:"redis"`
	}
	e.get("api/overview", viewerSecret).decode(t, &overview)
	if overview.Redis.Version == "" || overview.Stats.Workers < 4 || len(overview.Workers) < 4 {
		t.Errorf("overview: %+v", overview)
	}
	for _, q := range overview.Queues {
		if q.Name == "go" && q.AgeSeconds == nil {
			t.Error("queue go: no age, though resque-go writes queue_time")
		}
	}
	if r := e.get("nope", viewerSecret); r.code != http.StatusNotFound {
		t.Errorf("GET /nope: %d", r.code)
	}
	if r := e.get("api/failed?limit=0", viewerSecret); r.code != http.StatusBadRequest || !strings.Contains(r.body, "limit") {
		t.Errorf("limit=0: %d %s", r.code, r.body)
	}
}

func TestAuthAndRoles(t *testing.T) {
	e := newEnv(t)
	seed(e)
	for _, p := range []string{"", "failed", "api/overview", "events"} {
		if r := e.get(p, ""); r.code != http.StatusUnauthorized || !strings.Contains(r.head.Get("WWW-Authenticate"), "Basic") {
			t.Errorf("GET /%s without credentials: %d", p, r.code)
		}
		if r := e.get(p, "wrong-secret-0000"); r.code != http.StatusUnauthorized {
			t.Errorf("GET /%s with a wrong token: %d", p, r.code)
		}
	}
	// basic auth with name and secret; a right secret under a wrong name
	req, _ := http.NewRequest("GET", e.base+"api/whoami", nil)
	req.SetBasicAuth("opal", operatorSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("basic auth: %v %v", resp, err)
	}
	resp.Body.Close()
	req.SetBasicAuth("ada", operatorSecret)
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("basic auth under another name: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()

	fl := e.failed("")
	first := fl.Entries[0]
	one := func(op string) string { return fmt.Sprintf("api/failed/%d/%s", first.Index, op) }
	unsafe := []struct {
		path string
		body any
		need web.Role
	}{
		{one("retry"), map[string]string{"digest": first.Digest}, web.RoleOperator},
		{one("remove"), map[string]string{"digest": first.Digest}, web.RoleOperator},
		{"api/failed/retry", map[string]string{"queue": "nothing-here"}, web.RoleOperator},
		{"api/failed/remove", map[string]string{"queue": "nothing-here"}, web.RoleAdmin},
		{"api/queues/go/remove", map[string]string{"class": "Nothing"}, web.RoleOperator},
		{"api/queues/empty/clear", nil, web.RoleAdmin},
	}
	before := e.do("LRANGE", e.key("failed"), 0, -1)
	for _, u := range unsafe {
		for _, who := range []struct {
			secret string
			role   web.Role
		}{{viewerSecret, web.RoleViewer}, {operatorSecret, web.RoleOperator}} {
			if who.role >= u.need {
				continue
			}
			if r := e.postJSON(u.path, who.secret, u.body); r.code != http.StatusForbidden {
				t.Errorf("POST /%s as %s: %d %s", u.path, who.role, r.code, r.body)
			}
		}
	}
	form := []struct{ path, fields string }{
		{fmt.Sprintf("failed/%d/retry", first.Index), "digest=" + first.Digest},
		{"failed/bulk", "action=retry"},
		{"queues/go/remove", "class=GoJob"},
		{"queues/go/clear", "confirm=go"},
	}
	for _, f := range form {
		fields := strings.Split(strings.ReplaceAll(f.fields, "=", "&"), "&")
		if r := e.postForm(f.path, viewerSecret, fields...); r.code != http.StatusForbidden {
			t.Errorf("form POST /%s as viewer: %d", f.path, r.code)
		}
	}
	if r := e.postForm("queues/go/clear", operatorSecret, "confirm", "go"); r.code != http.StatusForbidden {
		t.Errorf("clear as operator: %d", r.code)
	}
	after := e.do("LRANGE", e.key("failed"), 0, -1)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Error("a refused request changed the failed list")
	}
	if n := e.do("LLEN", e.key("queue:go")); n != int64(1) {
		t.Errorf("queue go has %v jobs after refused changes", n)
	}
	if r := e.get("api/audit", viewerSecret); strings.Contains(r.body, "\"action\": \"") {
		t.Errorf("refused requests were audited: %s", r.body)
	}
	// the pages offer no action to a viewer
	if r := e.get("failed", viewerSecret); strings.Contains(r.body, "Retry all") {
		t.Error("the failed page offers Retry all to a viewer")
	}
	if r := e.get("failed", operatorSecret); !strings.Contains(r.body, "Retry all") || strings.Contains(r.body, "Remove all") {
		t.Error("the failed page's actions for an operator")
	}
}

func TestAnonymousAndTrustedHeader(t *testing.T) {
	e := newEnv(t, func(o *web.Options) {
		o.Anonymous = web.RoleViewer
		o.Authenticate = func(r *http.Request) (string, web.Role, bool) {
			if u := r.Header.Get("X-Test-User"); u != "" {
				return u, web.RoleOperator, true
			}
			return "", 0, false
		}
	})
	var w struct{ Name, Role string }
	e.get("api/whoami", "").decode(t, &w)
	if w.Name != "anonymous" || w.Role != "viewer" {
		t.Errorf("anonymous = %+v", w)
	}
	e.request("GET", "api/whoami", "", "", "", "X-Test-User", "zoe").decode(t, &w)
	if w.Name != "zoe" || w.Role != "operator" {
		t.Errorf("trusted header = %+v", w)
	}
	if r := e.get("api/whoami", "wrong-secret-0000"); r.code != http.StatusUnauthorized {
		t.Errorf("a wrong token with anonymous allowed: %d", r.code)
	}
}

func TestCrossOriginRefused(t *testing.T) {
	e := newEnv(t)
	if _, err := e.c.Enqueue(ctx(), "go", "GoJob", 1); err != nil {
		t.Fatal(err)
	}
	for _, h := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
		{"Origin", "http://evil.example"},
	} {
		r := e.request("POST", "queues/go/clear", adminSecret, "application/x-www-form-urlencoded", "confirm=go", h...)
		if r.code != http.StatusForbidden || !strings.Contains(r.body, "cross-origin") {
			t.Errorf("POST with %v: %d %.200s", h, r.code, r.body)
		}
	}
	if n := e.do("LLEN", e.key("queue:go")); n != int64(1) {
		t.Fatalf("a cross-origin request cleared the queue")
	}
	// curl: a token and no browser headers
	if r := e.postJSON("api/queues/go/clear", adminSecret, nil); r.code != http.StatusOK || !strings.Contains(r.body, `"cleared": 1`) {
		t.Errorf("curl-like clear: %d %s", r.code, r.body)
	}
	// a same-origin form
	if r := e.postForm("queues/go/clear", adminSecret, "confirm", "go"); r.code != http.StatusOK {
		t.Errorf("same-origin form: %d %.300s", r.code, r.body)
	}
}

func TestFailedOneByContent(t *testing.T) {
	e := newEnv(t)
	e.load(fixtures.MustLoad("ruby-resque-3.0.0", "failure"))
	e.load(fixtures.MustLoad("php-resque-resque-master", "failure"))
	e.load(fixtures.MustLoad("node-resque-9.7.1", "failure"))
	fl := e.failed("")
	if len(fl.Entries) < 3 {
		t.Fatalf("%d entries", len(fl.Entries))
	}
	last := fl.Entries[len(fl.Entries)-1]
	// an index alone is not enough
	if r := e.postJSON(fmt.Sprintf("api/failed/%d/retry", last.Index), operatorSecret, map[string]string{}); r.code != http.StatusBadRequest {
		t.Errorf("retry without digest: %d %s", r.code, r.body)
	}
	// someone removes the first entry: the last one moves up, and is still
	// the one retried
	e.do("LPOP", e.key("failed"))
	r := e.postJSON(fmt.Sprintf("api/failed/%d/retry", last.Index), operatorSecret, map[string]string{"digest": last.Digest})
	if r.code != http.StatusOK {
		t.Fatalf("retry of a moved entry: %d %s", r.code, r.body)
	}
	now := e.failed("")
	if !now.Entries[len(now.Entries)-1].Retried {
		t.Error("the moved entry is not marked retried")
	}
	for _, x := range now.Entries[:len(now.Entries)-1] {
		if x.Retried {
			t.Errorf("entry %d (%s) retried instead", x.Index, x.Class)
		}
	}
	if n := e.do("LLEN", e.key("queue:"+last.Queue)); n != int64(1) {
		t.Errorf("queue %s: %v jobs, want the retried one", last.Queue, n)
	}
	// the entry changed (retried_at): its old digest names nothing now
	r = e.postJSON(fmt.Sprintf("api/failed/%d/remove", last.Index-1), operatorSecret, map[string]string{"digest": last.Digest})
	if r.code != http.StatusConflict {
		t.Errorf("remove by a stale digest: %d %s", r.code, r.body)
	}
	// remove by the form, as the entry page does
	cur := now.Entries[0]
	page := e.get(fmt.Sprintf("failed/%d?digest=%s", cur.Index, cur.Digest), operatorSecret)
	if !strings.Contains(page.body, `name="digest" value="`+cur.Digest+`"`) {
		t.Fatalf("the entry page has no form with the digest")
	}
	if r := e.postForm(fmt.Sprintf("failed/%d/remove", cur.Index), operatorSecret, "digest", cur.Digest); r.code != http.StatusOK {
		t.Fatalf("remove form: %d %.300s", r.code, r.body)
	}
	if got := e.failed(""); len(got.Entries) != len(now.Entries)-1 || got.Entries[0].Digest == cur.Digest {
		t.Errorf("after remove: %d entries", len(got.Entries))
	}
	var audit struct {
		Entries []struct {
			Who, Role, Action, Target string
			Count                     int64
		} `json:"entries"`
	}
	e.get("api/audit", viewerSecret).decode(t, &audit)
	if len(audit.Entries) != 2 || audit.Entries[0].Action != "failed.remove" || audit.Entries[1].Action != "failed.retry" ||
		audit.Entries[0].Who != "opal" || audit.Entries[0].Role != "operator" || audit.Entries[0].Count != 1 {
		t.Errorf("audit = %+v", audit.Entries)
	}
	if page := e.get("audit", viewerSecret); !strings.Contains(page.body, "failed.remove") {
		t.Error("the audit page does not show the removal")
	}
}

func TestFailedBulkPreviewThenRetry(t *testing.T) {
	e := newEnv(t)
	seed(e)
	n := 0
	for _, x := range e.failed("").Entries {
		if x.Queue == "odd" {
			n++
		}
	}
	if page := e.get("failed?queue=odd", operatorSecret); !strings.Contains(page.body, `failed/bulk?action=retry&amp;queue=odd"`) {
		t.Errorf("the failed page's links lose the filter")
	}
	preview := e.get("failed/bulk?action=retry&queue=odd", operatorSecret)
	checkPage(t, "preview", preview)
	if !strings.Contains(preview.body, fmt.Sprintf(`<p class="warn" id="preview-count">%d entries match`, n)) ||
		!strings.Contains(preview.body, fmt.Sprintf(`name="previewed" value="%d"`, n)) {
		t.Fatalf("the preview does not state %d: %.2000s", n, preview.body)
	}
	var cnt struct{ Count int64 }
	e.get("api/failed/count?queue=odd", viewerSecret).decode(t, &cnt)
	if cnt.Count != int64(n) {
		t.Errorf("api count = %d, want %d", cnt.Count, n)
	}
	r := e.postForm("failed/bulk", operatorSecret, "action", "retry", "queue", "odd", "previewed", strconv.Itoa(n))
	if r.code != http.StatusOK || !strings.Contains(r.body, fmt.Sprintf("Retried %d entries", n)) {
		t.Fatalf("bulk retry: %d %.600s", r.code, r.body)
	}
	if got := e.do("LLEN", e.key("queue:odd")); got != int64(len(oddPayloads)+n) {
		t.Errorf("queue odd: %v jobs, want %d", got, len(oddPayloads)+n)
	}
	// the API refuses when the count moved since the preview
	r = e.postJSON("api/failed/remove", adminSecret, map[string]any{"queue": "odd", "expect": n + 1})
	if r.code != http.StatusConflict {
		t.Errorf("remove with a stale expect: %d %s", r.code, r.body)
	}
	r = e.postJSON("api/failed/remove", adminSecret, map[string]any{"queue": "odd", "expect": n})
	var res struct{ Done, Gone, Skipped int }
	r.decode(t, &res)
	if r.code != http.StatusOK || res.Done != n {
		t.Errorf("remove all of odd: %d %s", r.code, r.body)
	}
	if left := e.failed("queue=odd"); len(left.Entries) != 0 {
		t.Errorf("%d odd entries left", len(left.Entries))
	}
	page := e.get("audit", viewerSecret).body
	for _, want := range []string{"failed.retry_all", "failed.remove_all", "opal", "ada", `queue=&#34;odd&#34;`} {
		if !strings.Contains(page, want) {
			t.Errorf("audit page lacks %q", want)
		}
	}
}

func TestQueueRemoveAndClear(t *testing.T) {
	e := newEnv(t)
	for i := range 5 {
		if _, err := e.c.Enqueue(ctx(), "outbox", "Mailer", i%2, "x"); err != nil {
			t.Fatal(err)
		}
	}
	e.load(fixtures.MustLoad("php-resque-chrisboulton", "enqueue"))
	r := e.postForm("queues/outbox/remove", operatorSecret, "class", "Mailer", "args", `[1,"x"]`)
	if r.code != http.StatusOK || !strings.Contains(r.body, "Removed 2 jobs") {
		t.Fatalf("remove: %d %.400s", r.code, r.body)
	}
	if r := e.postJSON("api/queues/outbox/remove", operatorSecret, map[string]any{"class": "Mailer", "args": "not json"}); r.code != http.StatusBadRequest {
		t.Errorf("remove with bad args: %d %s", r.code, r.body)
	}
	if r := e.postJSON("api/queues/outbox/remove", operatorSecret, map[string]any{"class": "Mailer", "args": []any{0, "x"}}); !strings.Contains(r.body, `"removed": 3`) {
		t.Errorf("api remove: %d %s", r.code, r.body)
	}
	if n := e.do("LLEN", e.key("queue:outbox")); n != int64(0) {
		t.Errorf("outbox: %v left", n)
	}
	confirm := e.get("queues/mail/clear", adminSecret)
	checkPage(t, "clear confirmation", confirm)
	if !strings.Contains(confirm.body, `name="confirm"`) {
		t.Error("no confirmation field")
	}
	size := e.do("LLEN", e.key("queue:mail")).(int64)
	if size == 0 {
		t.Fatal("the php fixture queued nothing in mail")
	}
	if r := e.postForm("queues/mail/clear", adminSecret, "confirm", "wrong"); r.code != http.StatusBadRequest {
		t.Errorf("clear without the name: %d", r.code)
	}
	if r := e.postForm("queues/mail/clear", adminSecret, "confirm", "mail"); r.code != http.StatusOK {
		t.Errorf("clear: %d %.300s", r.code, r.body)
	}
	if n := e.do("LLEN", e.key("queue:mail")); n != int64(0) {
		t.Errorf("mail: %v left", n)
	}
	var audit struct {
		Entries []struct {
			Action string
			Count  int64
		} `json:"entries"`
	}
	e.get("api/audit", viewerSecret).decode(t, &audit)
	if len(audit.Entries) != 3 || audit.Entries[0].Action != "queue.clear" || audit.Entries[0].Count != size {
		t.Errorf("audit = %+v", audit.Entries)
	}
}

func TestBasePathAndHealth(t *testing.T) {
	e := newEnv(t, func(o *web.Options) { o.BasePath = "/ops/resque" })
	mux := http.NewServeMux()
	h := e.srv.Config.Handler
	mux.Handle("/ops/resque/", h)
	mux.Handle("/ops/resque", h)
	srv := e.srv
	srv.Config.Handler = mux
	e.base = srv.URL + "/ops/resque/"
	if _, err := e.c.Enqueue(ctx(), "a/b", "Slash", 1); err != nil {
		t.Fatal(err)
	}
	page := e.get("", viewerSecret)
	checkPage(t, "overview under a prefix", page)
	for _, want := range []string{`href="/ops/resque/static/app.css"`, `href="/ops/resque/queues/a%2fb"`, `data-base="/ops/resque/"`} {
		if !strings.Contains(strings.ToLower(page.body), strings.ToLower(want)) {
			t.Errorf("overview lacks %s", want)
		}
	}
	checkPage(t, "a queue with a slash", e.get("queues/a%2Fb", viewerSecret))
	if r := e.get("queues/a%2Fb", viewerSecret); !strings.Contains(r.body, "Slash") {
		t.Error("the queue a/b does not show its job")
	}
	resp, err := srv.Client().Get(srv.URL + "/ops/resque/static/app.js")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("static: %v %v", resp, err)
	}
	resp.Body.Close()
	noFollow := *srv.Client()
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if resp, err = noFollow.Get(srv.URL + "/ops/resque"); err != nil || resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/ops/resque/" {
		t.Errorf("/ops/resque: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	if r := e.get("healthz", ""); r.code != http.StatusOK || r.body != "ok\n" {
		t.Errorf("healthz: %d %q", r.code, r.body)
	}
}

func TestHandlerOptions(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		opt  web.Options
		want string
	}{
		{web.Options{}, "Client"},
		{web.Options{Client: e.c, BasePath: "relative"}, "BasePath"},
		{web.Options{Client: e.c, Users: []web.User{{Name: "a", Role: web.RoleAdmin, Secret: "short"}}}, "at least"},
		{web.Options{Client: e.c, Users: []web.User{{Name: "a", Secret: "long-enough-secret"}}}, "role"},
		{web.Options{Client: e.c, Users: []web.User{{Name: "a", Role: web.RoleAdmin, Secret: "long-enough-secret"}, {Name: "b", Role: web.RoleViewer, Secret: "long-enough-secret"}}}, "unique"},
		{web.Options{Client: e.c, Users: []web.User{{Name: "a:b", Role: web.RoleAdmin, Secret: "long-enough-secret"}}}, "name"},
	} {
		if _, err := web.Handler(tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "long-enough") {
			t.Errorf("Handler(%+v) = %v; want an error about %s", tc.opt.BasePath, err, tc.want)
		}
	}
}

func TestParseUsers(t *testing.T) {
	us, err := web.ParseUsers(strings.NewReader("# users\n\nann viewer ann-secret-123456\nbob\tadmin sha256:" + strings.Repeat("ab", 32) + "\n"))
	if err != nil || len(us) != 2 || us[0].Role != web.RoleViewer || us[1].Role != web.RoleAdmin || us[1].Name != "bob" {
		t.Fatalf("ParseUsers = %+v, %v", us, err)
	}
	if _, err := web.Handler(web.Options{Client: newEnv(t).c, Users: us}); err != nil {
		t.Errorf("Handler with a sha256 secret: %v", err)
	}
	for _, bad := range []string{"ann viewer", "ann king secret-secret-1", "a b c d"} {
		if _, err := web.ParseUsers(strings.NewReader(bad)); err == nil || strings.Contains(err.Error(), "secret-secret") {
			t.Errorf("ParseUsers(%q) = %v", bad, err)
		}
	}
}

// events opens the event stream and sends each event's data on the
// channel until the test ends.
func (e *env) events(token string) <-chan string {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.base+"events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		e.t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	e.t.Cleanup(func() { resp.Body.Close() })
	out := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- d
			}
		}
	}()
	return out
}

// commands is the number of commands the test Redis has served (every
// namespace; the tests of this package run one at a time).
func (e *env) commands() int64 {
	info := string(e.do("INFO", "stats").([]byte))
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "total_commands_processed:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	e.t.Fatal("no total_commands_processed")
	return 0
}

func TestLiveStreamsShareOnePoller(t *testing.T) {
	e := newEnv(t, func(o *web.Options) { o.PollInterval = 100 * time.Millisecond })
	seed(e)
	// one reading of the overview, counted at the server (INFO itself
	// and the INFO of this count are two commands)
	// The count is the server's, so a command of another test's leftover
	// goroutine adds to it: the least of a few readings is the reading's.
	perReading := int64(-1)
	for range 5 {
		before := e.commands()
		e.get("api/overview", viewerSecret)
		if n := e.commands() - before - 1; perReading < 0 || n < perReading {
			perReading = n
		}
		<-time.After(2 * 100 * time.Millisecond) // the next get reads again
	}
	// pipelined: about ten round trips, and per queue and per worker a
	// few commands in them
	var ov struct {
		Queues  []any `json:"queues"`
		Workers []any `json:"workers"`
	}
	e.get("api/overview", viewerSecret).decode(t, &ov)
	budget := int64(20 + 3*len(ov.Queues) + 3*len(ov.Workers))
	t.Logf("Redis commands per overview reading: %d (%d queues, %d workers)", perReading, len(ov.Queues), len(ov.Workers))
	if perReading > budget {
		t.Errorf("an overview reading costs %d Redis commands, more than %d", perReading, budget)
	}
	// a page asked within the interval is served from that reading
	before := e.commands()
	e.get("", viewerSecret)
	e.get("api/overview", viewerSecret)
	if extra := e.commands() - before - 1; extra > perReading {
		t.Errorf("two views within one interval cost %d commands, one reading is %d", extra, perReading)
	}

	const tabs = 20
	streams := make([]<-chan string, tabs)
	for i := range streams {
		streams[i] = e.events(viewerSecret)
	}
	// every stream gets the same readings; count Redis commands over the
	// time every tab gets 5 events
	before = e.commands()
	var wg sync.WaitGroup
	seen := make([]int, tabs)
	for i, s := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.After(30 * time.Second)
			for seen[i] < 5 {
				select {
				case d := <-s:
					if !strings.Contains(d, `"stats"`) {
						t.Errorf("event: %.200s", d)
						return
					}
					seen[i]++
				case <-deadline:
					return
				}
			}
		}()
	}
	wg.Wait()
	used := e.commands() - before - 1
	for i, n := range seen {
		if n < 5 {
			t.Fatalf("stream %d got %d events", i, n)
		}
	}
	// 20 tabs, each 5 events: with a poller per tab that is 100 readings;
	// shared, about 5 (a few more while the streams were read)
	readings := float64(used) / float64(perReading)
	t.Logf("%d tabs x 5 events: %d Redis commands, %.1f readings", tabs, used, readings)
	if readings > 12 {
		t.Errorf("%d tabs cost %.1f readings for 5 events each: the poller is not shared", tabs, readings)
	}
}

func TestLiveOverviewEventShowsChanges(t *testing.T) {
	e := newEnv(t, func(o *web.Options) { o.PollInterval = 50 * time.Millisecond })
	s := e.events(viewerSecret)
	if _, err := e.c.Enqueue(ctx(), "later", "LateJob", 1); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(20 * time.Second)
	for {
		select {
		case d := <-s:
			if strings.Contains(d, `"name":"later"`) {
				return
			}
		case <-deadline:
			t.Fatal("no event shows the new queue")
		}
	}
}

func TestRedisDownAndNoPassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c, err := client.New(client.Options{URL: "redis://user:hunter2-pw@" + addr + "/0", DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h, err := web.Handler(web.Options{Client: c, Anonymous: web.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, tc := range []struct {
		path string
		code int
	}{
		{"/", http.StatusOK}, {"/queues", http.StatusBadGateway}, {"/failed", http.StatusBadGateway},
		{"/workers", http.StatusBadGateway}, {"/api/overview", http.StatusBadGateway}, {"/api/failed", http.StatusBadGateway},
		{"/healthz", http.StatusServiceUnavailable},
	} {
		resp, err := srv.Client().Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("GET %s with Redis down: %d, want %d: %.300s", tc.path, resp.StatusCode, tc.code, b)
		}
		if strings.Contains(string(b), "hunter2") {
			t.Errorf("GET %s shows the Redis password: %.300s", tc.path, b)
		}
	}
}
