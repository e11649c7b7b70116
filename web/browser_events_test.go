package web_test

import (
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The Events page in a browser: a viewer sees the newest job events, and
// an event appended while the page is open arrives without a reload (the
// page's stream, fed by the dashboard's one reader); the job's view shows
// its state from its last event.
func TestBrowserJobEvents(t *testing.T) {
	b := browser(t)
	e := newEnv(t)
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e.xaddEvent("enqueued", "0a1b2c3d", "MonthlyReport", "reports", "", 0, 0)
	e.xaddEvent("started", "0a1b2c3d", "MonthlyReport", "reports", "worker-2:5150-1:reports,mail", 1, 0)
	e.xaddEvent("enqueued", "9f8e7d6c", "<b>SendMail</b>", "mail", "", 0, 0)
	e.xaddEvent("failed", "0a1b2c3d", "MonthlyReport", "reports", "worker-2:5150-1:reports,mail", 1, 2300)
	e.xaddEvent("retried", "0a1b2c3d", "MonthlyReport", "reports", "worker-2:5150-1:reports,mail", 1, 0)
	v := tab(t, b, "vic", viewerSecret)
	run(t, v, "events page", chromedp.Navigate(e.base+"job-events"), chromedp.WaitVisible("#job-events"))
	waitFor(t, v, "the page's stream is open", `!document.getElementById("job-events-live").hidden && document.getElementById("job-events-state").textContent === "live"`)
	e.xaddEvent("started", "9f8e7d6c", "<b>SendMail</b>", "mail", "worker-2:5150-2:reports,mail", 1, 0)
	e.xaddEvent("succeeded", "9f8e7d6c", "<b>SendMail</b>", "mail", "worker-2:5150-2:reports,mail", 1, 840)
	waitFor(t, v, "the new events arrive live", `document.querySelectorAll("#job-events tbody tr").length === 7 && `+
		`document.querySelector("#job-events tbody tr td:nth-child(2)").textContent === "succeeded"`)
	if c := text(t, v, "#job-events tbody tr td:nth-child(3)"); c != "<b>SendMail</b>" {
		t.Errorf("the live row's class: %q", c)
	}
	screenshot(t, v, dir, "events")
	run(t, v, "a job's events", chromedp.Navigate(e.base+"job-events?id=0a1b2c3d"), chromedp.WaitVisible("#job-state"))
	if s := text(t, v, "#job-state"); s != "delayed" {
		t.Errorf("job state: %q", s)
	}
	e.xaddEvent("started", "0a1b2c3d", "MonthlyReport", "reports", "worker-2:5150-1:reports,mail", 2, 0)
	waitFor(t, v, "the job's state follows its events", `document.getElementById("job-state").textContent === "running"`)
	if n := strings.Count(text(t, v, "#job-events tbody"), "MonthlyReport"); n != 5 {
		t.Errorf("the job's view shows %d of its 5 events", n)
	}
}
