package web_test

import (
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// In a German browser the overview's words are German, the live updates
// too, and it shows the chart, the processes and the schedulers.
func TestBrowserOverviewGermanHostsChart(t *testing.T) {
	b := browser(t)
	e := newEnv(t)
	seedDemo(e)
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	de := tab(t, b, "", "")
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("vic:"+viewerSecret))
	if _, err := chromedp.Call(de, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
		Headers: network.Headers{"Authorization": auth, "Accept-Language": "de-DE,de;q=0.9"}}); err != nil {
		t.Fatal(err)
	}
	run(t, de, "overview", chromedp.Navigate(e.base), chromedp.WaitVisible("#processes"))
	waitFor(t, de, "the overview goes live, in German", `document.getElementById("live-state").textContent === "live, aktualisiert"`)
	if nav := text(t, de, "nav"); !strings.Contains(nav, "Übersicht") || !strings.Contains(nav, "Warteschlangen") {
		t.Errorf("nav: %q", nav)
	}
	if p := text(t, de, "#processes tbody"); !strings.Contains(p, "worker-2") || !strings.Contains(p, "1 / 4") || !strings.Contains(p, "41.0 MiB") {
		t.Errorf("processes, updated live: %q", p)
	}
	if s := text(t, de, "#schedulers tbody"); !strings.Contains(s, "worker-2:5160") || !strings.Contains(s, "Master") {
		t.Errorf("schedulers, updated live: %q", s)
	}
	if w := text(t, de, "#workers tbody"); !strings.Contains(w, "resque-go") || !strings.Contains(w, "ruby") || !strings.Contains(w, "node") || !strings.Contains(w, "untätig") {
		t.Errorf("workers, updated live: %q", w)
	}
	waitFor(t, de, "the chart is drawn", `document.querySelector(".chart svg path.line").getBoundingClientRect().width > 600`)
	run(t, de, "90 days", chromedp.Click(`.ranges a[href$="range=90d#history"]`), chromedp.WaitVisible(`.ranges a[aria-current="true"]`))
	waitFor(t, de, "the 90-day chart", `location.search === "?range=90d" && document.querySelector(".legend").innerText.includes("pro Stunde")`)
	waitFor(t, de, "scrolled to the processes", `(document.getElementById("processes").scrollIntoView(), true)`)
	screenshot(t, de, dir, "overview-hosts-de")
}
