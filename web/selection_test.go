package web_test

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// failedEntryJSON is a failed entry as Ruby Resque writes it, of a job of
// class Job with args [n] from queue.
func failedEntryJSON(queue string, n int) string {
	return fmt.Sprintf(`{"failed_at":"2026/11/21 10:00:%02d UTC","payload":{"class":"Job","args":[%d]},"exception":"RuntimeError","error":"boom %d","backtrace":["x.rb:1"],"worker":"w:1:%s","queue":%q}`,
		n%60, n, n, queue, queue)
}

var entryBoxRe = regexp.MustCompile(`<input type="checkbox" name="entry" value="([^"]+)"`)

// boxes are the values of the entry checkboxes of a Failed page.
func (e *env) boxes(path, token string) []string {
	e.t.Helper()
	page := e.get(path, token)
	checkPage(e.t, path, page)
	var out []string
	for _, m := range entryBoxRe.FindAllStringSubmatch(page.body, -1) {
		out = append(out, m[1])
	}
	return out
}

// selectedForm is the form the Failed page posts: action and the ticked
// boxes.
func selectedForm(action string, boxes ...string) []string {
	f := []string{"action", action}
	for _, b := range boxes {
		f = append(f, "entry", b)
	}
	return f
}

// tenFailed fills the failed list with 10 entries, entry i of queue q<i>.
func tenFailed(e *env) {
	e.t.Helper()
	for i := range 10 {
		e.do("RPUSH", e.key("failed"), failedEntryJSON(fmt.Sprintf("q%d", i), i))
	}
}

// queued is the length of each queue q0..q9.
func (e *env) queued() []int64 {
	e.t.Helper()
	out := make([]int64, 10)
	for i := range out {
		out[i] = e.do("LLEN", e.key(fmt.Sprintf("queue:q%d", i))).(int64)
	}
	return out
}

// Three of ten entries ticked and retried: exactly those three go back to
// their queues, though the list moved (an entry before them removed)
// between the page and the POST.
func TestFailedSelectedRetry(t *testing.T) {
	e := newEnv(t)
	tenFailed(e)
	boxes := e.boxes("failed", operatorSecret)
	if len(boxes) != 10 {
		t.Fatalf("%d boxes, want 10", len(boxes))
	}
	fl := e.failed("")
	for i, b := range boxes {
		if want := fmt.Sprintf("%d:%s", fl.Entries[i].Index, fl.Entries[i].Digest); b != want {
			t.Errorf("box %d = %q, want %q", i, b, want)
		}
	}
	// someone removes the oldest entry meanwhile: every index shifts
	e.do("LPOP", e.key("failed"))
	r := e.postForm("failed/selected", operatorSecret, selectedForm("retry", boxes[2], boxes[5], boxes[8])...)
	checkPage(t, "retry selected", r)
	if !strings.Contains(r.body, "Retried 3 entries of 3 selected; 0 no longer there") {
		t.Errorf("message: %.1500s", r.body)
	}
	if got, want := e.queued(), []int64{0, 0, 1, 0, 0, 1, 0, 0, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("queues q0..q9 hold %v, want %v", got, want)
	}
	for _, x := range e.failed("").Entries {
		if want := x.Queue == "q2" || x.Queue == "q5" || x.Queue == "q8"; x.Retried != want {
			t.Errorf("entry %d of %s: retried %v, want %v", x.Index, x.Queue, x.Retried, want)
		}
	}
	var audit struct {
		Entries []struct {
			Who, Action, Target, Detail string
			Count                       int64
		} `json:"entries"`
	}
	e.get("api/audit", viewerSecret).decode(t, &audit)
	if len(audit.Entries) != 1 || audit.Entries[0].Action != "failed.retry_selected" || audit.Entries[0].Count != 3 ||
		audit.Entries[0].Who != "opal" || !strings.Contains(audit.Entries[0].Detail, "selected 3, gone 0") {
		t.Errorf("audit = %+v", audit.Entries)
	}
	// the same boxes again: the entries were retried (their bytes hold
	// retried_at now), so nothing is retried twice
	r = e.postForm("failed/selected", operatorSecret, selectedForm("retry", boxes[2], boxes[5], boxes[8])...)
	if !strings.Contains(r.body, "Retried 0 entries of 3 selected; 3 no longer there") {
		t.Errorf("a second retry of the same page: %.1500s", r.body)
	}
	if got := e.queued(); got[2] != 1 || got[5] != 1 || got[8] != 1 {
		t.Errorf("retried twice: %v", got)
	}
}

// Entries retried or removed by someone else after the page was read are
// counted as gone: not retried twice, and no other entry is hit instead.
func TestFailedSelectedGoneMeanwhile(t *testing.T) {
	e := newEnv(t)
	tenFailed(e)
	fl := e.failed("")
	boxes := e.boxes("failed", operatorSecret)
	// someone retries entry 3 (it stays, with retried_at) and removes entry 6
	if r := e.postJSON("api/failed/3/retry", adminSecret, map[string]string{"digest": fl.Entries[3].Digest}); r.code != http.StatusOK {
		t.Fatalf("retry by another: %d %s", r.code, r.body)
	}
	if r := e.postJSON("api/failed/6/remove", adminSecret, map[string]string{"digest": fl.Entries[6].Digest}); r.code != http.StatusOK {
		t.Fatalf("remove by another: %d %s", r.code, r.body)
	}
	r := e.postForm("failed/selected", operatorSecret, selectedForm("retry", boxes[1], boxes[3], boxes[6], boxes[7])...)
	if r.code != http.StatusOK || !strings.Contains(r.body, "Retried 2 entries of 4 selected; 2 no longer there") {
		t.Fatalf("retry: %d %.1500s", r.code, r.body)
	}
	if got, want := e.queued(), []int64{0, 1, 0, 1, 0, 0, 0, 1, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("queues q0..q9 hold %v, want %v", got, want)
	}
	// remove a selection: the list moves under it (the head removed), and
	// an entry changed meanwhile (retried) is left alone
	now := e.failed("")
	if len(now.Entries) != 9 {
		t.Fatalf("%d entries", len(now.Entries))
	}
	boxes = e.boxes("failed", operatorSecret)
	e.do("LPOP", e.key("failed"))
	if r := e.postJSON(fmt.Sprintf("api/failed/%d/retry", now.Entries[4].Index-1), adminSecret, map[string]string{"digest": now.Entries[4].Digest}); r.code != http.StatusOK {
		t.Fatalf("retry by another: %d %s", r.code, r.body)
	}
	r = e.postForm("failed/selected", operatorSecret, selectedForm("remove", boxes[2], boxes[4], boxes[8])...)
	if r.code != http.StatusOK || !strings.Contains(r.body, "Removed 2 entries of 3 selected; 1 no longer there") {
		t.Fatalf("remove: %d %.1500s", r.code, r.body)
	}
	var left []string
	for _, x := range e.failed("").Entries {
		left = append(left, x.Queue)
	}
	want := []string{"q1", "q3", "q4", "q5", "q7", "q8"} // q0 popped, q6 removed before, q2 and q9 now
	if now.Entries[2].Queue != "q2" || now.Entries[4].Queue != "q4" || now.Entries[8].Queue != "q9" || !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

// Identical entries (the same bytes twice) selected are two entries; one
// of them selected is one.
func TestFailedSelectedIdenticalEntries(t *testing.T) {
	e := newEnv(t)
	same := failedEntryJSON("dup", 1)
	e.do("RPUSH", e.key("failed"), same, failedEntryJSON("q0", 0), same, same)
	fl := e.failed("")
	ref := func(i int) map[string]any {
		return map[string]any{"index": fl.Entries[i].Index, "digest": fl.Entries[i].Digest}
	}
	r := e.postJSON("api/failed/retry", operatorSecret, map[string]any{"entries": []any{ref(0), ref(2)}})
	var res struct {
		Action                        string
		Selected, Done, Gone, Skipped int
	}
	r.decode(t, &res)
	if r.code != http.StatusOK || res.Action != "retry" || res.Selected != 2 || res.Done != 2 || res.Gone != 0 {
		t.Fatalf("retry 2 of 3 identical: %d %s", r.code, r.body)
	}
	if n := e.do("LLEN", e.key("queue:dup")); n != int64(2) {
		t.Errorf("queue dup holds %v, want 2", n)
	}
	got := e.failed("")
	if !got.Entries[0].Retried || got.Entries[1].Retried || !got.Entries[2].Retried || got.Entries[3].Retried {
		t.Errorf("retried: %+v", got.Entries)
	}
	// the same ref twice is one
	r = e.postJSON("api/failed/remove", operatorSecret, map[string]any{"entries": []any{ref(3), ref(3)}})
	r.decode(t, &res)
	if r.code != http.StatusOK || res.Selected != 1 || res.Done != 1 || len(e.failed("").Entries) != 3 {
		t.Errorf("remove one ref twice: %d %s", r.code, r.body)
	}
}

// A viewer is offered no boxes and refused; a cross-origin POST is
// refused; a bad selection is refused before anything is done.
func TestFailedSelectedRefused(t *testing.T) {
	e := newEnv(t)
	tenFailed(e)
	if b := e.boxes("failed", viewerSecret); len(b) != 0 {
		t.Errorf("a viewer sees %d boxes", len(b))
	}
	if page := e.get("failed", viewerSecret); strings.Contains(page.body, "retry-selected") {
		t.Error("a viewer is offered Retry selected")
	}
	boxes := e.boxes("failed", operatorSecret)
	fl := e.failed("")
	refs := []any{map[string]any{"index": fl.Entries[1].Index, "digest": fl.Entries[1].Digest}}
	if r := e.postForm("failed/selected", viewerSecret, selectedForm("retry", boxes[1])...); r.code != http.StatusForbidden {
		t.Errorf("a viewer's form: %d", r.code)
	}
	for _, op := range []string{"retry", "remove"} {
		if r := e.postJSON("api/failed/"+op, viewerSecret, map[string]any{"entries": refs}); r.code != http.StatusForbidden {
			t.Errorf("a viewer's api %s: %d %s", op, r.code, r.body)
		}
	}
	for _, h := range [][]string{{"Sec-Fetch-Site", "cross-site"}, {"Origin", "http://evil.example"}} {
		r := e.request("POST", "failed/selected", adminSecret, "application/x-www-form-urlencoded",
			"action=remove&entry="+urlEncode(boxes[1]), h...)
		if r.code != http.StatusForbidden || !strings.Contains(r.body, "cross-origin") {
			t.Errorf("cross-origin POST with %v: %d %.200s", h, r.code, r.body)
		}
	}
	bad := []struct {
		what string
		body any
	}{
		{"an empty list", map[string]any{"entries": []any{}}},
		{"null", map[string]any{"entries": nil}},
		{"not a list", map[string]any{"entries": "1:abc"}},
		{"a filter beside", map[string]any{"entries": refs, "queue": "q1"}},
		{"an expect beside", map[string]any{"entries": refs, "expect": 1}},
		{"no digest", map[string]any{"entries": []any{map[string]any{"index": 1}}}},
		{"a short digest", map[string]any{"entries": []any{map[string]any{"index": 1, "digest": "abc"}}}},
		{"a negative index", map[string]any{"entries": []any{map[string]any{"index": -1, "digest": fl.Entries[1].Digest}}}},
		{"an unknown field", map[string]any{"entries": []any{map[string]any{"index": 1, "digest": fl.Entries[1].Digest, "id": 2}}}},
		{"too many", map[string]any{"entries": slices.Repeat(refs, 1001)}},
	}
	for _, b := range bad {
		if r := e.postJSON("api/failed/remove", operatorSecret, b.body); r.code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", b.what, r.code, r.body)
		}
	}
	for _, f := range [][]string{
		selectedForm("retry"),      // nothing ticked
		selectedForm("retry", "7"), // no digest
		selectedForm("retry", "x:"+strings.Repeat("a", 32)),
		selectedForm("purge", boxes[1]),
	} {
		if r := e.postForm("failed/selected", operatorSecret, f...); r.code != http.StatusBadRequest {
			t.Errorf("form %v: %d %.300s", f, r.code, r.body)
		}
	}
	if got := e.queued(); !slices.Equal(got, make([]int64, 10)) {
		t.Errorf("a refused request retried: %v", got)
	}
	if n := e.do("LLEN", e.key("failed")); n != int64(10) {
		t.Errorf("a refused request removed: %v entries", n)
	}
	if r := e.postForm("failed/selected", operatorSecret, selectedForm("retry")...); !strings.Contains(r.body, "No entry was selected") {
		t.Errorf("nothing ticked: %.600s", r.body)
	}
}

// Entries that are not JSON, hold HTML or invalid UTF-8, or are huge are
// ticked, retried and removed like any; the pages stay safe.
func TestFailedSelectedUnusualPayloads(t *testing.T) {
	e := newEnv(t)
	seed(e)
	boxes := e.boxes("failed", operatorSecret)
	fl := e.failed("")
	if len(boxes) != len(fl.Entries) || len(boxes) < len(oddPayloads)+2 {
		t.Fatalf("%d boxes for %d entries", len(boxes), len(fl.Entries))
	}
	filtered := e.boxes("failed?queue=odd", operatorSecret)
	odd := len(e.failed("queue=odd").Entries) // the entry of invalid UTF-8 is unreadable, of no queue
	if len(filtered) != odd || odd < len(oddPayloads)-1 {
		t.Fatalf("%d boxes on the filtered page, want %d", len(filtered), odd)
	}
	if page := e.get("failed?queue=odd", operatorSecret); !strings.Contains(page.body, `action="/failed/selected?&amp;queue=odd"`) {
		t.Error("the filtered page's selection form does not carry the filter back")
	}
	// every entry: the fixtures', the odd payloads, and three that are no
	// JSON (the first odd payload, and the last two), which are skipped
	r := e.postForm("failed/selected?&queue=odd", operatorSecret, selectedForm("retry", boxes...)...)
	checkPage(t, "retry odd ones", r)
	want := fmt.Sprintf("Retried %d entries of %d selected; 0 no longer there", len(boxes)-3, len(boxes))
	if !strings.Contains(r.body, want) || !strings.Contains(r.body, "3 entries skipped: no queue or payload to retry.") {
		t.Errorf("message: want %q: %.1500s", want, r.body)
	}
	if !strings.Contains(r.body, `href="/failed?queue=odd"`) {
		t.Errorf("the done page does not lead back to the filtered page: %.1500s", r.body)
	}
	if n := e.do("LLEN", e.key("queue:odd")); n != int64(len(oddPayloads)+odd) {
		t.Errorf("queue odd: %v jobs, want %d", n, len(oddPayloads)+odd)
	}
	// every entry, retried ones with their new bytes, removed by the API
	var refs []any
	for _, x := range e.failed("").Entries {
		refs = append(refs, map[string]any{"index": x.Index, "digest": x.Digest})
	}
	r = e.postJSON("api/failed/remove", operatorSecret, map[string]any{"entries": refs})
	var res struct{ Selected, Done, Gone int }
	r.decode(t, &res)
	if r.code != http.StatusOK || res.Done != len(refs) || res.Gone != 0 || e.do("LLEN", e.key("failed")) != int64(0) {
		t.Errorf("remove every entry: %d %s", r.code, r.body)
	}
	checkPage(t, "the empty failed page", e.get("failed", operatorSecret))
}

// The page, its buttons and the answer in German.
func TestFailedSelectedGerman(t *testing.T) {
	e := newEnv(t)
	tenFailed(e)
	page := e.request("GET", "failed", operatorSecret, "", "", "Accept-Language", "de")
	for _, w := range []string{">Ausgewählte wiederholen</button>", ">Ausgewählte entfernen</button>", `aria-label="Eintrag 3 auswählen"`} {
		if !strings.Contains(page.body, w) {
			t.Errorf("German page lacks %s", w)
		}
	}
	boxes := e.boxes("failed", operatorSecret)
	r := e.request("POST", "failed/selected", operatorSecret, "application/x-www-form-urlencoded",
		"action=remove&entry="+urlEncode(boxes[0])+"&entry="+urlEncode(boxes[9]),
		"Accept-Language", "de", "Origin", e.srv.URL, "Sec-Fetch-Site", "same-origin")
	if !strings.Contains(r.body, "2 Einträge von 2 ausgewählten entfernt; 0 nicht mehr vorhanden") {
		t.Errorf("German answer: %d %.1500s", r.code, r.body)
	}
}

// A selection spread over a long list that moved by more than one read
// step: each entry is found where it went; one moved further than the
// look-back (1,000 places) is counted as gone, never mistaken for another.
func TestFailedSelectedLongListMoved(t *testing.T) {
	e := newEnv(t)
	var all []any
	for i := range 2600 {
		all = append(all, failedEntryJSON(fmt.Sprintf("l%d", i), i))
	}
	e.do("RPUSH", append([]any{e.key("failed")}, all...)...)
	fl := e.failed("offset=1000") // entries 1000..1999
	ref := func(i int) map[string]any {
		x := fl.Entries[i-1000]
		return map[string]any{"index": x.Index, "digest": x.Digest}
	}
	e.do("LTRIM", e.key("failed"), 600, -1) // 600 entries before every selected one go
	refs := []any{ref(1000), ref(1550), ref(1551), ref(1999)}
	before := e.commands()
	r := e.postJSON("api/failed/retry", operatorSecret, map[string]any{"entries": refs})
	cmds := e.commands() - before
	var res struct{ Selected, Done, Gone int }
	r.decode(t, &res)
	if r.code != http.StatusOK || res.Selected != 4 || res.Done != 4 || res.Gone != 0 {
		t.Fatalf("retry: %d %s", r.code, r.body)
	}
	for _, i := range []int{1000, 1550, 1551, 1999} {
		if n := e.do("LLEN", e.key(fmt.Sprintf("queue:l%d", i))); n != int64(1) {
			t.Errorf("queue l%d: %v jobs, want 1", i, n)
		}
	}
	if n := len(e.do("KEYS", e.key("queue:*")).([]any)); n != 4 {
		t.Errorf("%d queues hold jobs, want 4", n)
	}
	t.Logf("4 entries over 1,000 places, moved by 600: %d Redis commands", cmds)

	// moved by more than the look-back: gone
	fl = e.failed("offset=1500") // entries 2100.. of the first filling
	x := fl.Entries[0]
	e.do("LTRIM", e.key("failed"), 1001, -1)
	r = e.postJSON("api/failed/remove", operatorSecret, map[string]any{"entries": []any{map[string]any{"index": x.Index, "digest": x.Digest}}})
	r.decode(t, &res)
	if r.code != http.StatusOK || res.Done != 0 || res.Gone != 1 {
		t.Errorf("an entry moved 1,001 places: %d %s", r.code, r.body)
	}
}

// What acting on a page of 50 selected entries costs.
func TestFailedSelectedPageCommands(t *testing.T) {
	e := newEnv(t)
	var all []any
	for i := range 1100 {
		all = append(all, failedEntryJSON("page", i))
	}
	e.do("RPUSH", append([]any{e.key("failed")}, all...)...)
	boxes := e.boxes("failed?page=21", operatorSecret) // entries 1000..1049
	if len(boxes) != 50 {
		t.Fatalf("%d boxes", len(boxes))
	}
	before := e.commands()
	r := e.postForm("failed/selected", operatorSecret, selectedForm("retry", boxes...)...)
	cmds := e.commands() - before
	if !strings.Contains(r.body, "Retried 50 entries of 50 selected; 0 no longer there") {
		t.Fatalf("retry a page: %.1000s", r.body)
	}
	t.Logf("retrying 50 selected entries (1000..1049 of 1100): %d Redis commands", cmds)
}
