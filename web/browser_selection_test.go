package web_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The Failed page's selection in a browser: "select every entry on this
// page" ticks every box, and an operator ticks two entries and retries
// exactly those.
func TestBrowserFailedSelection(t *testing.T) {
	b := browser(t)
	e := newEnv(t)
	tenFailed(e)
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	op := tab(t, b, "opal", operatorSecret)
	run(t, op, "failed page", chromedp.Navigate(e.base+"failed"), chromedp.WaitVisible("#retry-selected"))
	// the script shows the box that ticks the page, and it ticks every entry
	run(t, op, "select the page", chromedp.WaitVisible("#select-page"), chromedp.Click("#select-page"))
	waitFor(t, op, "every box ticked", `[...document.querySelectorAll('#failed input[name="entry"]')].every(b => b.checked)`)
	run(t, op, "unselect the page", chromedp.Click("#select-page"))
	waitFor(t, op, "no box ticked", `[...document.querySelectorAll('#failed input[name="entry"]')].every(b => !b.checked)`)
	// tick entries 3 and 7 by hand
	for _, i := range []int{3, 7} {
		run(t, op, fmt.Sprintf("tick entry %d", i), chromedp.Click(fmt.Sprintf(`#failed tbody tr:nth-child(%d) input[name="entry"]`, i+1)))
	}
	screenshot(t, op, dir, "failed-selection")
	run(t, op, "retry selected", chromedp.Click("#retry-selected"), chromedp.WaitVisible("#done-message"))
	if d := text(t, op, "#done-message"); !strings.HasPrefix(d, "Retried 2 entries of 2 selected; 0 no longer there") {
		t.Errorf("done: %q", d)
	}
	if got, want := e.queued(), []int64{0, 0, 0, 1, 0, 0, 0, 1, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("queues q0..q9 hold %v, want %v", got, want)
	}
	// a viewer gets no boxes
	viewer := tab(t, b, "vic", viewerSecret)
	run(t, viewer, "viewer's failed page", chromedp.Navigate(e.base+"failed"), chromedp.WaitVisible("#failed"))
	if n, _ := chromedp.Run(viewer, chromedp.Evaluate[int](`document.querySelectorAll('input[name="entry"], #retry-selected').length`)); n != 0 {
		t.Errorf("a viewer is offered %d boxes or buttons", n)
	}
}
