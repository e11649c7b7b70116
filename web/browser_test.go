package web_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

// requireBrowserEnv set to 1 makes a missing Chromium a failure (CI).
const requireBrowserEnv = "RESQUE_GO_REQUIRE_BROWSER"

// screenshotsEnv names a directory for the screenshots the browser test
// takes (default: a temporary one).
const screenshotsEnv = "RESQUE_GO_SCREENSHOTS"

func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(requireBrowserEnv) == "1" {
		t.Fatalf("no chromium found and %s=1 (make deps installs it)", requireBrowserEnv)
	}
	t.Skip("no chromium: the browser test is skipped (make deps installs it)")
	return ""
}

// browser starts a headless Chromium with a fresh profile and returns its
// first tab's context; more tabs are opened with tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	// the first context starts the browser; tabs are opened from it
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return bctx
}

// tab opens a tab that sends basic auth for user and secret with every
// request (none when user is "").
func tab(t *testing.T, browser context.Context, user, secret string) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if user != "" {
		auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+secret))
		if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": auth}}); err != nil {
			t.Fatal(err)
		}
	}
	return ctx
}

// run runs actions, failing the test on an error.
func run(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// waitFor waits until the JavaScript expression is true, asking again
// while a navigation replaces the page.
func waitFor(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	var last error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		last = err
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	body, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
	t.Fatalf("%s: not so after 30 s (%v); page: %.1500s", what, last, body)
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf("(document.querySelector(%q)||{innerText:''}).innerText", sel)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// seedDemo writes what an operator sees on a working day: queues with
// jobs of every producer, Ruby, PHP and Node workers at work, and failed
// jobs of a flaky class among others.
func seedDemo(e *env) {
	e.t.Helper()
	for _, f := range [][2]string{
		{"ruby-resque-3.0.0", "worker-running"}, {"php-resque-resque-master", "worker-running"},
		{"node-resque-9.7.1", "worker-running"}, {"php-resque-chrisboulton", "enqueue"},
		{"ruby-resque-3.0.0", "failure"}, {"node-resque-9.7.1", "failure"},
	} {
		e.load(fixtures.MustLoad(f[0], f[1]))
	}
	now := time.Now()
	for i := range 12 {
		if _, err := e.c.Enqueue(ctx(), "reports", "MonthlyReport", 2026, i+1); err != nil {
			e.t.Fatal(err)
		}
	}
	e.do("SET", e.key("stat:processed"), 184302)
	e.do("SET", e.key("stat:failed"), 271)
	for i := range 3 {
		payload := fmt.Sprintf(`{"class":"FetchFeed","args":["https://example.org/feed/%d"],"id":"feed%d","queue_time":%d}`, i, i, now.Add(-time.Hour).Unix())
		entry := fmt.Sprintf(`{"failed_at":%q,"payload":%s,"exception":"Net::ReadTimeout","error":"Net::ReadTimeout with #<TCPSocket:(closed)>","backtrace":["/app/lib/feed.rb:42:in 'fetch'","/app/lib/feed.rb:12:in 'perform'"],"worker":"web-1:4242:feeds","queue":"feeds"}`,
			now.Add(-time.Duration(30-i)*time.Minute).UTC().Format("2006/01/02 15:04:05 UTC"), payload)
		e.do("RPUSH", e.key("failed"), entry)
	}
	e.do("SADD", e.key("queues"), "feeds")
	seedHistoryDemo(e)
	seedProcessDemo(e)
}

func TestBrowser(t *testing.T) {
	b := browser(t)
	e := newEnv(t)
	seedDemo(e)
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	// refused without a credential
	// (headless Chromium cannot answer the basic auth prompt: it ends a
	// navigation with ERR_INVALID_AUTH_CREDENTIALS; the health page needs
	// no credentials, and from it the overview is fetched)
	anon := tab(t, b, "", "")
	run(t, anon, "health page", chromedp.Navigate(e.base+"healthz"))
	status, err := chromedp.Run(anon, chromedp.Evaluate[int](`fetch("./").then(r => r.status)`, chromedp.EvalAwaitPromise))
	if err != nil || status != http.StatusUnauthorized {
		t.Errorf("overview without credentials: %d, %v; want 401", status, err)
	}
	if _, err := chromedp.RunResponse(anon, chromedp.Navigate(e.base)); err == nil {
		t.Error("the overview opened without credentials")
	}

	// the overview shows the queues and the workers, and goes live
	op := tab(t, b, "opal", operatorSecret)
	run(t, op, "overview", chromedp.Navigate(e.base), chromedp.WaitVisible("#queues"))
	waitFor(t, op, "the overview goes live", `document.getElementById("live-state").textContent.startsWith("live")`)
	if q := text(t, op, "#queues tbody"); !strings.Contains(q, "reports") || !strings.Contains(q, "12") || !strings.Contains(q, "mail") {
		t.Errorf("overview queues: %q", q)
	}
	if w := text(t, op, "#workers tbody"); strings.Count(w, "vm:") < 5 || !strings.Contains(w, "SleepJob") || !strings.Contains(w, "Sleep_Job") {
		t.Errorf("overview workers: %q", w)
	}
	// a job queued now shows without a reload
	if _, err := e.c.Enqueue(ctx(), "urgent", "Page", "on-call"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, op, "the new queue shows live", `document.querySelector("#queues tbody").innerText.includes("urgent")`)
	screenshot(t, op, dir, "overview")
	// dark, as a system in dark mode asks, and on a phone's width
	dark := &emulation.MediaFeature{Name: "prefers-color-scheme", Value: "dark"}
	if _, err := chromedp.Call(op, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{dark}}); err != nil {
		t.Fatal(err)
	}
	bg, _ := chromedp.Run(op, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
	if bg != "rgb(21, 23, 24)" {
		t.Errorf("dark mode: body background %q", bg)
	}
	screenshot(t, op, dir, "overview-dark")
	run(t, op, "phone width", chromedp.EmulateViewport(390, 844))
	if w, _ := chromedp.Run(op, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 390 {
		t.Errorf("on a phone the overview is %d px wide, wider than the screen", w)
	}
	screenshot(t, op, dir, "overview-phone")
	if _, err := chromedp.Call(op, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{}); err != nil {
		t.Fatal(err)
	}
	run(t, op, "desktop width", chromedp.EmulateViewport(1280, 860))
	run(t, op, "workers page", chromedp.Navigate(e.base+"workers"), chromedp.WaitVisible("#workers"))
	screenshot(t, op, dir, "workers")
	run(t, op, "queue page", chromedp.Navigate(e.base+"queues/reports"), chromedp.WaitVisible(".job"))
	screenshot(t, op, dir, "queue")

	// a resque-go worker runs the feeds jobs once they are retried (it
	// prunes the fixtures' workers, whose host is this one's name and
	// whose processes are gone, so it starts after their pages)
	ran := make(chan string, 10)
	reg := worker.NewRegistry()
	reg.Register("FetchFeed", func(_ context.Context, j *worker.Job) error {
		ran <- j.ID
		return nil
	})
	n, err := node.New(node.Config{Redis: node.Redis{URL: os.Getenv(redisEnv), Namespace: e.ns}, Queues: "feeds", NoMover: true}, reg,
		node.WithTitle(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)

	// Failed: filter, retry all matching after the preview
	run(t, op, "failed page", chromedp.Navigate(e.base), chromedp.Click(`nav a[href$="/failed"]`), chromedp.WaitVisible("#failed"))
	run(t, op, "filter", chromedp.SendKeys(`input[name="exception"]`, "ReadTimeout"), chromedp.Submit(`input[name="exception"]`))
	waitFor(t, op, "the filter applies", `location.search.includes("exception=ReadTimeout") && document.querySelectorAll("#failed tbody tr").length === 3`)
	screenshot(t, op, dir, "failed")
	run(t, op, "preview", chromedp.Click("#retry-all"), chromedp.WaitVisible("#preview-count"))
	if p := text(t, op, "#preview-count"); !strings.HasPrefix(p, "3 entries match") {
		t.Errorf("preview: %q", p)
	}
	screenshot(t, op, dir, "failed-preview")
	run(t, op, "retry", chromedp.Click("#confirm-bulk"), chromedp.WaitVisible("#done-message"))
	if d := text(t, op, "#done-message"); !strings.HasPrefix(d, "Retried 3 entries") {
		t.Errorf("done: %q", d)
	}
	// the jobs are back in their queue, and the resque-go worker runs them
	for i := range 3 {
		select {
		case <-ran:
		case <-time.After(30 * time.Second):
			t.Fatalf("%d of the 3 retried jobs ran", i)
		}
	}
	run(t, op, "overview again", chromedp.Navigate(e.base), chromedp.WaitVisible("#queues"))
	waitFor(t, op, "the overview counts the 3 jobs run", `document.querySelector('[data-stat="processed"]').textContent === "184305"`)
	waitFor(t, op, "feeds is empty", `[...document.querySelectorAll("#queues tbody tr")].some(r => r.innerText.startsWith("feeds") && r.cells[1].innerText === "0")`)
	run(t, op, "audit", chromedp.Navigate(e.base+"audit"), chromedp.WaitVisible("#audit"))
	if a := text(t, op, "#audit tbody"); !strings.Contains(a, "failed.retry_all") || !strings.Contains(a, "opal") {
		t.Errorf("audit: %q", a)
	}
	screenshot(t, op, dir, "audit")

	// Delayed: what resque-scheduler and resque-go delayed, oldest first;
	// an operator removes one item
	e.load(fixtures.MustLoad("resque-scheduler-5.0.0", "delayed-enqueue"))
	for i := range 3 {
		if _, err := e.c.EnqueueIn(ctx(), time.Duration(i+1)*time.Hour, "reports", "MonthlyReport", 2027, i+1); err != nil {
			t.Fatal(err)
		}
	}
	run(t, op, "delayed page", chromedp.Click(`nav a[href$="/delayed"]`), chromedp.WaitVisible("#delayed-count"))
	if c := text(t, op, "#delayed-count"); !strings.HasPrefix(c, "7 delayed items") {
		t.Errorf("delayed: %q", c)
	}
	if first := text(t, op, ".job header"); !strings.Contains(first, "MailJob") {
		t.Errorf("the oldest delayed item: %q", first)
	}
	screenshot(t, op, dir, "delayed")
	run(t, op, "remove one delayed item", chromedp.Click(`.job form[action$="/delayed/remove"] button`), chromedp.WaitVisible("#done-message"))
	if d := text(t, op, "#done-message"); !strings.HasPrefix(d, "Removed the delayed MailJob job of queue mail") {
		t.Errorf("done: %q", d)
	}
	if n, err := e.c.DelayedCount(ctx(), delayed.Filter{}); err != nil || n.Items != 6 {
		t.Errorf("delayed items after removing one: %+v %v", n, err)
	}

	// a viewer is offered no retry, and the server refuses one
	viewer := tab(t, b, "vic", viewerSecret)
	run(t, viewer, "viewer preview", chromedp.Navigate(e.base+"failed/bulk?action=retry&exception=ReadTimeout"), chromedp.WaitVisible("#preview-count"))
	if n, _ := chromedp.Run(viewer, chromedp.Evaluate[int](`document.querySelectorAll("#confirm-bulk").length`)); n != 0 {
		t.Error("a viewer is offered the retry")
	}
	status, err = chromedp.Run(viewer, chromedp.Evaluate[int](`fetch("failed/bulk", {method: "POST", body: new URLSearchParams({action: "retry", exception: "ReadTimeout"})}).then(r => r.status)`, chromedp.EvalAwaitPromise))
	if err != nil || status != http.StatusForbidden {
		t.Errorf("a viewer's retry: %d, %v; want 403", status, err)
	}

	// a cross-origin POST is refused, though the browser sends the
	// credentials
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form method="post" action="%sfailed/bulk"><input type="hidden" name="action" value="retry"><button id="go">win a prize</button></form>`, e.base)
	}))
	t.Cleanup(evil.Close)
	evilURL := strings.Replace(evil.URL, "127.0.0.1", "localhost", 1) // another origin
	before := e.do("LRANGE", e.key("failed"), 0, -1)
	resp, err := chromedp.RunResponse(op, chromedp.Navigate(evilURL))
	if err != nil || resp.Status != http.StatusOK {
		t.Fatalf("the other origin's page: %v %v", resp, err)
	}
	resp, err = chromedp.RunResponse(op, chromedp.Click("#go"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusForbidden {
		t.Errorf("a cross-origin POST: %d, want 403", resp.Status)
	}
	if after := e.do("LRANGE", e.key("failed"), 0, -1); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Error("a cross-origin POST changed the failed list")
	}
	t.Logf("screenshots in %s", dir)
}
