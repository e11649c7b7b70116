package web_test

import (
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserSearch: the search page shows the hits a browser receives in
// parts, under the Content-Security-Policy, and an operator retries a hit
// from it.
func TestBrowserSearch(t *testing.T) {
	b := browser(t)
	e := newEnv(t)
	seedDemo(e)
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	op := tab(t, b, "opal", operatorSecret)
	run(t, op, "search page", chromedp.Navigate(e.base), chromedp.Click(`nav a[href$="/search"]`), chromedp.WaitVisible("#search-form"))
	run(t, op, "search", chromedp.SetValue(`input[name="q"]`, "feed/1"), chromedp.Submit("#search-form"), chromedp.WaitVisible("#search-summary"))
	if s := text(t, op, "#search-summary"); !strings.HasPrefix(s, "1 found, every entry read") {
		t.Errorf("summary: %q", s)
	}
	if row := text(t, op, "#hits tr.hit"); !strings.Contains(row, "FetchFeed") || !strings.Contains(row, "Net::ReadTimeout") {
		t.Errorf("the hit: %q", row)
	}
	screenshot(t, op, dir, "search")
	size, _ := e.c.QueueSize(ctx(), "feeds")
	run(t, op, "retry the hit", chromedp.Click("#hits tr.hit form button"), chromedp.WaitVisible("#done-message"))
	if d := text(t, op, "#done-message"); !strings.HasPrefix(d, "Retried the failed FetchFeed job of queue feeds") {
		t.Errorf("done: %q", d)
	}
	if n, _ := e.c.QueueSize(ctx(), "feeds"); n != size+1 {
		t.Errorf("feeds holds %d jobs after the retry, want %d", n, size+1)
	}
}
