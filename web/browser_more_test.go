package web_test

import (
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The Queues, Serial locks, Mass queues and Calendars pages in a browser:
// an operator pauses a queue, an admin releases a stale serial lock, and
// the pages are saved as screenshots.
func TestBrowserMorePages(t *testing.T) {
	b := browser(t)
	e := newEnv(t)
	seedMore(e)
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	op := tab(t, b, "opal", operatorSecret)
	run(t, op, "queues page", chromedp.Navigate(e.base+"queues"), chromedp.WaitVisible("#queues"))
	run(t, op, "pause ser", chromedp.Click(`form[action$="/queues/ser/pause"] button`), chromedp.WaitVisible("#done-message"))
	if d := text(t, op, "#done-message"); !strings.HasPrefix(d, "Paused queue ser") {
		t.Errorf("after pause: %q", d)
	}
	if p, err := e.c.QueuesPaused(ctx(), []string{"ser"}); err != nil || !p[0] {
		t.Errorf("ser paused: %v %v", p, err)
	}
	run(t, op, "mass page", chromedp.Navigate(e.base+"mass"), chromedp.WaitVisible("#mass-sources"))
	screenshot(t, op, dir, "mass")
	run(t, op, "calendars page", chromedp.Navigate(e.base+"calendars"), chromedp.WaitVisible("#calendars"))
	screenshot(t, op, dir, "calendars")

	admin := tab(t, b, "ada", adminSecret)
	run(t, admin, "serial page", chromedp.Navigate(e.base+"serial"), chromedp.WaitVisible("#serial"))
	screenshot(t, admin, dir, "serial")
	if _, err := chromedp.Run(admin, chromedp.Evaluate[bool](
		`(document.querySelector('#serial input[name=queue][value=stale]').form.querySelector('button').click(), true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, admin, "the release's answer", `!!document.querySelector("#done-message")`)
	if d := text(t, admin, "#done-message"); !strings.HasPrefix(d, "Released the lock of serial queue stale") {
		t.Errorf("after release: %q", d)
	}
	if n := e.do("EXISTS", e.raw.Keys().SerialLock("stale")).(int64); n != 0 {
		t.Error("the stale lock is still there")
	}
}
