package web_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/stats"
	"github.com/resque-go/resque-go/web"
)

// Two dashboards over one Redis show the same history: it is kept in
// Redis, not in a dashboard.
func TestHistorySameOnTwoDashboards(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 30, 0, time.UTC)
	clock := func() time.Time { return now }
	e := newEnv(t, func(o *web.Options) { o.Now = clock })
	h2, err := web.Handler(web.Options{Client: e.c, Anonymous: web.RoleViewer, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(h2)
	t.Cleanup(srv2.Close)

	// a publisher's samples, 10 minutes apart, while Ruby workers count
	at := now.Add(-time.Hour)
	if err := e.c.SampleHistory(ctx(), at, 0); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 6; i++ {
		e.do("INCRBY", e.key("stat:processed"), 10*i)
		e.do("INCRBY", e.key("stat:failed"), i)
		if err := e.c.SampleHistory(ctx(), at.Add(time.Duration(i)*10*time.Minute), 0); err != nil {
			t.Fatal(err)
		}
	}
	var one, two struct {
		Range       string `json:"range"`
		Resolution  string `json:"resolution"`
		StepSeconds int64  `json:"step_seconds"`
		Processed   int64  `json:"processed"`
		Failed      int64  `json:"failed"`
		Points      []struct {
			Start     time.Time `json:"start"`
			Processed int64     `json:"processed"`
		} `json:"points"`
		Storage struct {
			Keys      int   `json:"keys"`
			MaxFields int   `json:"max_fields"`
			MaxBytes  int64 `json:"max_bytes"`
		} `json:"storage"`
	}
	r1 := e.get("api/history?range=72h", viewerSecret)
	r1.decode(t, &one)
	resp, err := srv2.Client().Get(srv2.URL + "/api/history?range=72h")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&two); err != nil {
		t.Fatal(err)
	}
	if one.Processed != 210 || one.Failed != 21 || one.Resolution != "minute" || one.StepSeconds != 60 || len(one.Points) != 4320 {
		t.Fatalf("history: %s %s %d points, %d/%d", one.Range, one.Resolution, len(one.Points), one.Processed, one.Failed)
	}
	if one.Storage.Keys != 4 || one.Storage.MaxFields != 4320+2160+730 || one.Storage.MaxBytes <= 0 {
		t.Errorf("storage %+v", one.Storage)
	}
	b1, _ := json.Marshal(one)
	b2, _ := json.Marshal(two)
	if string(b1) != string(b2) {
		t.Fatal("two dashboards show different histories")
	}
	last := one.Points[len(one.Points)-1]
	if !last.Start.Equal(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)) || last.Processed != 60 {
		t.Errorf("last minute %+v", last)
	}

	// the page: an SVG chart of the range chosen, no inline script or style
	for _, rg := range []string{"72h", "90d", "2y"} {
		p := e.get("?range="+rg, viewerSecret)
		checkPage(t, "overview "+rg, p)
		if !strings.Contains(p.body, `<svg viewBox="0 0 `) || !strings.Contains(p.body, `aria-current="true">`+rg+`</a>`) ||
			!strings.Contains(p.body, `<path class="line" vector-effect="non-scaling-stroke" d="M0 `) {
			t.Errorf("overview ?range=%s: no chart of that range", rg)
		}
		if strings.Contains(p.body, " style=") {
			t.Errorf("overview ?range=%s: an inline style", rg)
		}
	}
	if r := e.get("api/history?range=1w", viewerSecret); r.code != 400 {
		t.Errorf("range=1w: %d", r.code)
	}
}

// The overview lists every runtime's workers, resque-go's processes with
// their figures, and the schedulers with the master marked.
func TestOverviewHostsProcessesSchedulers(t *testing.T) {
	e := newEnv(t)
	for _, f := range [][2]string{
		{"ruby-resque-3.0.0", "worker-running"}, {"php-resque-resque-master", "worker-running"},
		{"php-resque-chrisboulton", "worker-running"}, {"node-resque-9.7.1", "worker-running"},
	} {
		e.load(fixtures.MustLoad(f[0], f[1]))
	}
	// a resque-go process with two slots, one busy, and its record
	id1, id2 := "gohost:4242-1:mail", "gohost:4242-2:mail"
	e.do("SADD", e.key("workers"), id1, id2)
	e.do("SET", e.key("worker:"+id1+":started"), "2026-11-21 21:00:00 +0000")
	e.do("SET", e.key("worker:"+id1), `{"queue":"mail","run_at":"2026-11-21T21:00:05Z","payload":{"class":"GoJob","args":[]}}`)
	rec, _ := json.Marshal(stats.Record{PID: 4242, Host: "gohost", StartedAt: time.Now().Add(-time.Hour), UpdatedAt: time.Now(),
		SlotsBusy: 0, SlotsTotal: 2, RSSBytes: 48 << 20, CPUPercent: 12.5, Goroutines: 30, Load1: 0.5})
	e.do("SET", e.key("resque-go:process:gohost:4242"), rec)
	// a resque-go scheduler on standby; Ruby's resque-scheduler holds the
	// master lock (its physical key repeats the namespace)
	sched, _ := json.Marshal(stats.SchedulerInfo{Host: "gohost", PID: 4300, Started: time.Now().Add(-time.Hour), Promoted: 7})
	e.do("SET", e.key("resque-go:scheduler:gohost:4300"), sched)
	e.do("SET", e.key(e.ns+":resque_scheduler_master_lock"), "rubyhost:29476")

	var ov struct {
		Workers []struct {
			ID      string `json:"id"`
			Runtime string `json:"runtime"`
		} `json:"workers"`
		Processes []struct {
			Host       string  `json:"host"`
			PID        int     `json:"pid"`
			SlotsBusy  int     `json:"slots_busy"`
			SlotsTotal int     `json:"slots_total"`
			RSSBytes   uint64  `json:"rss_bytes"`
			CPUPercent float64 `json:"cpu_percent"`
		} `json:"processes"`
		Schedulers []struct {
			Host     string `json:"host"`
			PID      int    `json:"pid"`
			Runtime  string `json:"runtime"`
			Master   bool   `json:"master"`
			Promoted int64  `json:"promoted"`
		} `json:"schedulers"`
	}
	e.get("api/overview", viewerSecret).decode(t, &ov)
	runtimes := map[string]int{}
	for _, w := range ov.Workers {
		runtimes[w.Runtime]++
	}
	if runtimes["ruby"] != 1 || runtimes["php"] != 2 || runtimes["node"] != 1 || runtimes["resque-go"] != 2 {
		t.Errorf("runtimes %v, want ruby 1, php 2, node 1, resque-go 2", runtimes)
	}
	if len(ov.Processes) != 1 {
		t.Fatalf("processes %+v", ov.Processes)
	}
	if p := ov.Processes[0]; p.Host != "gohost" || p.PID != 4242 || p.SlotsBusy != 1 || p.SlotsTotal != 2 || p.RSSBytes != 48<<20 || p.CPUPercent != 12.5 {
		t.Errorf("process %+v: want gohost 4242, 1 of 2 slots busy (from the worker records), 48 MiB, 12.5%%", p)
	}
	if len(ov.Schedulers) != 2 || ov.Schedulers[0].Master || ov.Schedulers[0].Promoted != 7 ||
		!ov.Schedulers[1].Master || ov.Schedulers[1].Runtime != "resque-scheduler" || ov.Schedulers[1].Host != "rubyhost" {
		t.Errorf("schedulers %+v: want gohost:4300 on standby and rubyhost:29476 master", ov.Schedulers)
	}
	p := e.get("", viewerSecret)
	checkPage(t, "overview", p)
	for _, want := range []string{`<td>gohost</td><td class="num">4242</td><td class="num">1 / 2</td><td class="num">48.0 MiB</td>`,
		`rubyhost:29476</td><td>resque-scheduler</td><td><span class="badge">master</span>`, `<td>node</td>`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("overview lacks %s", want)
		}
	}
}

// seedHistoryDemo fills the history rings as months of a day-and-night
// load would leave them, for the screenshots.
func seedHistoryDemo(e *env) {
	e.t.Helper()
	now := time.Now()
	rnd := rand.New(rand.NewPCG(1, 2))
	for _, r := range client.HistoryResolutions() {
		step := int64(r.Step / time.Second)
		cur := now.Unix() / step
		args := []any{e.key("resque-go:history:" + r.Name)}
		for b := cur - int64(r.Slots) + 1; b <= cur; b++ {
			hour := float64(b*step%86400) / 3600
			perMin := 40 + 30*math.Sin((hour-9)/24*2*math.Pi) + 8*rnd.Float64()
			p := int64(perMin * float64(step) / 60)
			f := p / 60
			if r.Name == "minute" && cur-b > 600 && cur-b < 640 {
				f = p / 3 // a bad deploy, ten hours ago
			}
			args = append(args, b%int64(r.Slots), protocol.HistorySlot(b, p, f))
		}
		e.do("HSET", args...)
	}
}

// seedProcessDemo adds a resque-go process with four slots, one busy, and
// a resque-go scheduler holding the master lock, for the screenshots.
func seedProcessDemo(e *env) {
	e.t.Helper()
	now := time.Now()
	for i := 1; i <= 4; i++ {
		e.do("SADD", e.key("workers"), fmt.Sprintf("worker-2:5150-%d:reports,mail", i))
		e.do("SET", e.key(fmt.Sprintf("worker:worker-2:5150-%d:reports,mail:started", i)), now.Add(-3*time.Hour).UTC().Format("2006-01-02 15:04:05 -0700"))
	}
	e.do("SET", e.key("worker:worker-2:5150-1:reports,mail"), fmt.Sprintf(`{"queue":"reports","run_at":%q,"payload":{"class":"YearlyReport","args":[2026]}}`,
		now.Add(-95*time.Second).UTC().Format(time.RFC3339)))
	rec, _ := json.Marshal(stats.Record{PID: 5150, Host: "worker-2", StartedAt: now.Add(-3 * time.Hour), UpdatedAt: now, HeartbeatIntervalS: 5,
		SlotsBusy: 1, SlotsTotal: 4, RSSBytes: 41 << 20, CPUPercent: 23.4, Goroutines: 41, HostCPUPercent: 37, MemUsedPercent: 61, Load1: 1.2})
	e.do("SET", e.key("resque-go:process:worker-2:5150"), rec)
	sched, _ := json.Marshal(stats.SchedulerInfo{Host: "worker-2", PID: 5160, Started: now.Add(-3 * time.Hour), Master: true,
		LastPass: now.Add(-2 * time.Second), Promoted: 1290, PlansFired: 31})
	e.do("SET", e.key("resque-go:scheduler:worker-2:5160"), sched)
}

// A process record or a master lock of another type (written by hand)
// leaves the rest of the overview whole.
func TestOverviewHostsWrongType(t *testing.T) {
	e := newEnv(t)
	e.do("SADD", e.key("workers"), "gohost:77-1:q")
	e.do("RPUSH", e.key("resque-go:process:gohost:77"), "not a string")
	e.do("HSET", e.key(e.ns+":resque_scheduler_master_lock"), "a", "b")
	e.do("SET", e.key("resque-go:scheduler:gohost:78"), "not json")
	var ov struct {
		Error      string `json:"error"`
		Workers    []any  `json:"workers"`
		Processes  []any  `json:"processes"`
		Schedulers []any  `json:"schedulers"`
	}
	e.get("api/overview", viewerSecret).decode(t, &ov)
	if ov.Error != "" || len(ov.Workers) != 1 || len(ov.Processes) != 0 || len(ov.Schedulers) != 0 {
		t.Errorf("overview %+v", ov)
	}
	checkPage(t, "overview", e.get("", viewerSecret))
}

// The keys workers set aside (the set-aside hash: key -> {"at","what"})
// show on the overview with what was not done, and in its JSON; a value
// written by hand shows as it is.
func TestOverviewSetAsideKeys(t *testing.T) {
	e := newEnv(t)
	events := e.key("resque-go:events")
	e.do("HSET", e.key("resque-go:set_aside"), events, `{"at":1900000000,"what":"events stream not written: WRONGTYPE"}`,
		e.key("resque-go:tag:t"), "written by hand <b>")
	var ov struct {
		SetAside []struct {
			Key, What string
			At        *time.Time
		} `json:"set_aside"`
	}
	e.get("api/overview", viewerSecret).decode(t, &ov)
	if len(ov.SetAside) != 2 || ov.SetAside[0].Key != events || ov.SetAside[0].What != "events stream not written: WRONGTYPE" ||
		ov.SetAside[0].At == nil || ov.SetAside[0].At.Unix() != 1900000000 || ov.SetAside[1].What != "written by hand <b>" || ov.SetAside[1].At != nil {
		t.Errorf("set aside in the overview's JSON: %+v", ov.SetAside)
	}
	r := e.get("", viewerSecret)
	checkPage(t, "overview", r)
	for _, want := range []string{`id="set-aside"`, events, "events stream not written: WRONGTYPE", "written by hand &lt;b&gt;"} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("overview page lacks %q", want)
		}
	}
}
