package web_test

import (
	"fmt"
	"html"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/plan"
	"github.com/resque-go/resque-go/web"
)

// A filtered failed page reads at most 10,000 entries and says which; the
// next page goes on from there (?from=), and the matches shown are the
// ones of the entries it read, unusual payloads included.
func TestFailedFilterPagesByCursor(t *testing.T) {
	e := newEnv(t)
	e.dropKeys()
	// 12,000 entries of 1,000 queues: q0001 is entry 1, 1001, …, 11001
	// (indexes 0, 1000, …, 11000)
	e.do("EVAL", benchFillFailed, 1, e.key("failed"), 1, 12_000, 1000)
	// unusual entries among them that the filter selects: HTML and
	// script, invalid UTF-8, a payload that is a string; and one that is
	// not JSON at all (never selected by a queue)
	odd := []string{
		`{"failed_at":"2026/11/28 10:00:00 UTC","payload":{"class":"<script>alert(1)</script>","args":["<b>not bold"]},"exception":"<img src=x>","error":"<b>err","queue":"q0001"}`,
		"{\"failed_at\":\"2026/11/28 10:00:00 UTC\",\"payload\":{\"class\":\"Bad\xff\xfeUTF8\",\"args\":[\"\xc3\x28\"]},\"exception\":\"E\",\"error\":\"x\",\"queue\":\"q0001\"}",
		`{"failed_at":"2026/11/28 10:00:00 UTC","payload":"{\"class\":\"Stringly\",\"args\":[]}","exception":"E","error":"x","queue":"q0001"}`,
		"not json at all <script>alert(2)</script>",
	}
	for _, o := range odd {
		e.do("RPUSH", e.key("failed"), o)
	}
	// the list: 12,004 entries; q0001 at 0, 1000, …, 9000 in the first
	// 10,000, then 10000, 11000, and the three odd ones at 12000..12002
	p1 := e.get("failed?queue=q0001", viewerSecret)
	checkPage(t, "failed?queue=q0001", p1)
	if n := strings.Count(p1.body, "<td>q0001</td>"); n != 10 {
		t.Errorf("page 1: %d matches, want the 10 of the first 10,000 entries", n)
	}
	for _, want := range []string{"Matches among entries 1–10000 of 12004", `href="/failed?from=10000&amp;queue=q0001"`, "Go on from entry 10001"} {
		if !strings.Contains(p1.body, want) {
			t.Errorf("page 1 lacks %q: %.2000s", want, p1.body[strings.Index(p1.body, "<main"):])
		}
	}
	p2 := e.get("failed?from=10000&queue=q0001", viewerSecret)
	checkPage(t, "failed?from=10000&queue=q0001", p2)
	if n := strings.Count(p2.body, "<td>q0001</td>"); n != 5 {
		t.Errorf("page 2: %d matches, want 10000, 11000 and the three odd ones", n)
	}
	for _, want := range []string{"Matches among entries 10001–12004 of 12004", "The end of the list.", "Back to the start",
		"&lt;script&gt;alert(1)&lt;/script&gt;", "Stringly"} {
		if !strings.Contains(p2.body, want) {
			t.Errorf("page 2 lacks %q", want)
		}
	}
	if strings.Contains(p2.body, "scan-next") {
		t.Error("page 2 links to a next page past the end")
	}
	// a page fills before its 10,000 entries: the next starts after its
	// last match
	e2 := newEnv(t, func(o *web.Options) { o.PageSize = 4 })
	e2.dropKeys()
	e2.do("EVAL", benchFillFailed, 1, e2.key("failed"), 1, 12_000, 1000)
	p := e2.get("failed?queue=q0001", viewerSecret)
	for _, want := range []string{"Matches among entries 1–3001 of 12000", `href="/failed?from=3001&amp;queue=q0001"`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("page of 4 lacks %q", want)
		}
	}
	// past the end, and a cursor that is not a number: the start
	for _, path := range []string{"failed?from=99999&queue=q0001", "failed?from=x&queue=q0001", "failed?from=-5&class=%3Cscript%3E"} {
		checkPage(t, path, e.get(path, viewerSecret))
	}

	// the API, by the same cursor
	var step struct {
		Total, From, ReadTo int64
		Next                *int64
		Entries             []struct{ Index int64 }
	}
	for _, c := range []struct {
		path       string
		n          int
		next       *int64
		readTo     int64
		firstIndex int64
	}{
		{"api/failed?queue=q0001&from=0", 10, ptr(int64(10000)), 10000, 0},
		{"api/failed?queue=q0001&from=10000", 5, nil, 12004, 10000},
		{"api/failed?queue=q0001&from=0&limit=2", 2, ptr(int64(1001)), 1001, 0},
	} {
		step.Next = nil
		r := e.get(c.path, viewerSecret)
		r.decode(t, &step)
		var raw struct {
			ReadTo int64 `json:"read_to"`
		}
		r.decode(t, &raw)
		if len(step.Entries) != c.n || fmt.Sprint(deref(step.Next)) != fmt.Sprint(deref(c.next)) || raw.ReadTo != c.readTo ||
			step.Entries[0].Index != c.firstIndex {
			t.Errorf("%s: %d entries, next %v, read to %d: %.300s", c.path, len(step.Entries), deref(step.Next), raw.ReadTo, r.body)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A filtered delayed page reads at most 1,000 due times and 10,000 items
// and goes on from a due time and a position in its bucket.
func TestDelayedFilterPagesByCursor(t *testing.T) {
	e := newEnv(t)
	e.dropKeys()
	const base = 1_900_000_000
	// 2,500 due times of one item each, item i in queue q<i % 1000>
	e.do("EVAL", benchFillDelayed, 0, e.ns+":", 1, 2500, base, 1000)
	p1 := e.get("delayed?queue=q0001", viewerSecret)
	checkPage(t, "delayed?queue=q0001", p1)
	for _, want := range []string{"Matches among 1000 items of 1000 due times", `user1@example.com&#34;`,
		fmt.Sprintf(`href="/delayed?from=%d&amp;pos=0&amp;queue=q0001"`, base+1001)} {
		if !strings.Contains(p1.body, want) {
			t.Errorf("page 1 lacks %q", want)
		}
	}
	p3 := e.get(fmt.Sprintf("delayed?from=%d&pos=0&queue=q0001", base+2001), viewerSecret)
	checkPage(t, "delayed page 3", p3)
	for _, want := range []string{"Matches among 500 items of 500 due times", `user2001@example.com&#34;`, "The end of the delayed queue.", "Back to the start"} {
		if !strings.Contains(p3.body, want) {
			t.Errorf("page 3 lacks %q", want)
		}
	}
	if strings.Contains(p3.body, "scan-next") || strings.Contains(p3.body, `user1001@example.com&#34;`) {
		t.Error("page 3 goes past the end or shows an earlier match")
	}

	// one bucket of 12,000 items with odd ones among them: the first page
	// stops after 10,000 items, the next goes on inside the bucket
	const big = base + 5000
	e.do("EVAL", `for i = 1, 12000 do
  local item = '{"class":"Big","args":[' .. i .. '],"queue":"other"}'
  if i % 4000 == 0 then item = '{"class":"<script>alert(1)</script>","args":["<b>not bold"],"queue":"bigq"}' end
  if i == 11000 then item = 'not json <script>alert(2)</script>' end
  if i == 11001 then item = '{"class":"Bad\255UTF8","args":["\195\40"],"queue":"bigq"}' end
  redis.call('RPUSH', KEYS[1], item)
end
redis.call('ZADD', KEYS[2], ARGV[1], ARGV[1])
return 1`, 2, e.key(fmt.Sprintf("delayed:%d", big)), e.key("delayed_queue_schedule"), big)
	b1 := e.get(fmt.Sprintf("delayed?from=%d&queue=bigq", big), viewerSecret)
	checkPage(t, "big bucket, page 1", b1)
	for _, want := range []string{"Matches among 10000 items of 1 due times", fmt.Sprintf(`from=%d&amp;pos=10000&amp;queue=bigq`, big),
		"&lt;script&gt;alert(1)&lt;/script&gt;"} {
		if !strings.Contains(b1.body, want) {
			t.Errorf("big bucket, page 1 lacks %q", want)
		}
	}
	if n := strings.Count(b1.body, `<article class="job">`); n != 2 {
		t.Errorf("big bucket, page 1: %d items, want 2 (the 4000th and 8000th)", n)
	}
	b2 := e.get(fmt.Sprintf("delayed?from=%d&pos=10000&queue=bigq", big), viewerSecret)
	checkPage(t, "big bucket, page 2", b2)
	if n := strings.Count(b2.body, `<article class="job">`); n != 2 || !strings.Contains(b2.body, "Matches among 2000 items of 1 due times") {
		t.Errorf("big bucket, page 2: %d items (want the 11001st and 12000th): %.600s", n, b2.body[strings.Index(b2.body, "<main"):])
	}
	// the API by the same cursor
	var step struct {
		Items []struct {
			Queue string `json:"queue"`
		} `json:"items"`
		Next *struct{ From, Pos int64 } `json:"next"`
	}
	e.get(fmt.Sprintf("api/delayed?queue=bigq&from=%d", big), viewerSecret).decode(t, &step)
	if len(step.Items) != 2 || step.Next == nil || step.Next.From != big || step.Next.Pos != 10000 {
		t.Errorf("api/delayed step: %+v", step)
	}
	for _, path := range []string{"delayed?from=x&pos=-1&queue=q0001", "delayed?from=99999999999&class=%3Cscript%3E"} {
		checkPage(t, path, e.get(path, viewerSecret))
	}
}

// allPages asks path and every page its "go on" links lead to, and returns
// their bodies, each checked.
func (e *env) allPages(path string) string {
	e.t.Helper()
	var all strings.Builder
	for i := 0; path != ""; i++ {
		if i == 10_000 {
			e.t.Fatalf("%s: no end of the pages", path)
		}
		r := e.get(path, viewerSecret)
		checkPage(e.t, path, r)
		all.WriteString(r.body)
		path = ""
		if _, rest, ok := strings.Cut(r.body, `id="scan-next" href="/`); ok {
			href, _, _ := strings.Cut(rest, `"`)
			path = html.UnescapeString(href)
		}
	}
	return all.String()
}

// The plans page reads the schedule 200 slots a page, paused plans on the
// first; the unique ids page walks a bounded part of the keyspace a page.
// Every plan and uid shows once over the pages, odd ids escaped.
func TestPlansAndUniquePageByCursor(t *testing.T) {
	e := newEnv(t)
	e.dropKeys()
	ids := map[string]bool{}
	for i := 0; i < 450; i++ {
		id := fmt.Sprintf("p%03d", i)
		if i == 7 {
			id = "<i>odd</i> ünï"
		}
		if _, err := e.c.AddPlan(ctx(), plan.Plan{ID: id, Queue: "go", Class: "Every", Every: time.Duration(i+1) * time.Minute}); err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	for _, id := range []string{"p001", "p300"} {
		if _, err := e.c.PausePlan(ctx(), id); err != nil {
			t.Fatal(err)
		}
	}
	first := e.get("plans", viewerSecret).body
	for _, want := range []string{"p000", "p001", "p300", "&lt;i&gt;odd&lt;/i&gt; ünï", "a page reads at most 200 slots. The first page also shows the 2 paused plans.", `href="/plans?from=`} {
		if !strings.Contains(first, want) {
			t.Errorf("plans, first page, lacks %q", want)
		}
	}
	if strings.Contains(first, ">p400<") {
		t.Error("plans, first page, shows a plan of a later slot")
	}
	seen := map[string]int{}
	for next := ""; ; {
		var pg struct {
			Plans []struct{ ID string } `json:"plans"`
			Next  *string               `json:"next"`
		}
		e.get("api/plans?from="+next, viewerSecret).decode(t, &pg)
		for _, p := range pg.Plans {
			seen[p.ID]++
		}
		if pg.Next == nil {
			break
		}
		next = *pg.Next
	}
	for id := range ids {
		if seen[id] != 1 {
			t.Errorf("plan %q shown %d times over the pages", id, seen[id])
		}
	}
	if all := e.allPages("plans"); !strings.Contains(all, ">p449<") || !strings.Contains(all, "Back to the start") {
		t.Error("the plans pages do not reach the last plan")
	}

	k := e.raw.Keys()
	uids := []string{"<script>alert(1)</script>", "bad\xffutf8", "ünïcødé", "plain"}
	for i := 0; i < 40; i++ {
		uids = append(uids, fmt.Sprintf("u%02d", i))
	}
	for _, u := range uids {
		e.do("SET", k.UniqueState(u), "queued")
	}
	all := e.allPages("unique")
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "bad\uFFFDutf8", "ünïcødé", ">plain<", ">u39<", "The end of the keyspace."} {
		if !strings.Contains(all, want) {
			t.Errorf("unique pages lack %q", want)
		}
	}
}

// The Mass queues page looks for pools at most once a minute and reads
// the pools it knows on every request.
func TestMassPoolsFoundOnceAMinute(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := newEnv(t, func(o *web.Options) { o.Now = clock })
	e.dropKeys()
	k := e.raw.Keys()
	e.do("RPUSH", k.StaticRing("first-pool"), "s1")
	var v struct {
		Status struct {
			Static []struct {
				Pool string `json:"pool"`
				Ring int    `json:"ring"`
			} `json:"static_pools"`
		} `json:"status"`
	}
	pools := func() map[string]int {
		e.get("api/mass", viewerSecret).decode(t, &v)
		out := map[string]int{}
		for _, p := range v.Status.Static {
			out[p.Pool] = p.Ring
		}
		return out
	}
	if got := pools(); got["first-pool"] != 1 {
		t.Fatalf("pools: %v (%+v)", got, v)
	}
	// a pool known is read afresh; a new one waits for the next look
	e.do("RPUSH", k.StaticRing("first-pool"), "s2")
	e.do("RPUSH", k.StaticRing("new-pool"), "s1")
	if got := pools(); got["first-pool"] != 2 || got["new-pool"] != 0 {
		t.Errorf("within the minute: %v", got)
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	if got := pools(); got["new-pool"] != 1 {
		t.Errorf("a minute later: %v", got)
	}
	checkPage(t, "mass", e.get("mass", viewerSecret))
}

// dropKeys deletes the test's keys when it ends: these tests write
// thousands, which would make every later SCAN of the shared test server
// longer (the overview's look for schedulers, for one).
func (e *env) dropKeys() {
	e.t.Cleanup(func() {
		keys, err := e.raw.ScanKeys(ctx(), e.ns+":*")
		if err != nil {
			e.t.Log(err)
			return
		}
		for i := 0; i < len(keys); i += 1000 {
			args := make([]any, 0, 1000)
			for _, k := range keys[i:min(i+1000, len(keys))] {
				args = append(args, k)
			}
			_, _ = e.raw.Do(ctx(), "UNLINK", args...)
		}
	})
}
