package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/web"
)

// The dashboard benchmark: a namespace filled with the sizes below, each
// page asked `rounds` times, and the search of a text one entry in a
// thousand holds. It prints p50/p95 page times, the Redis commands of
// each page, the Redis commands slower than 5 ms (SLOWLOG), the search's
// time to its first and 50th hit, and the Redis load of 1 and 50 live
// tabs. `make bench-web` runs it at full size; TestDashboardBenchSmall
// runs it small in the suite so it keeps working.

type benchSizes struct {
	Failed, Queues, JobsPerQueue, Delayed, Workers int
	Rounds                                         int
	// Tabs is the number of live tabs compared with one.
	Tabs int
}

var (
	benchFull  = benchSizes{Failed: 1_000_000, Queues: 1000, JobsPerQueue: 10, Delayed: 100_000, Workers: 20, Rounds: 40, Tabs: 50}
	benchSmall = benchSizes{Failed: 3000, Queues: 30, JobsPerQueue: 10, Delayed: 500, Workers: 3, Rounds: 3, Tabs: 5}
)

// BenchmarkDashboard runs the benchmark at full size: run it alone, with
// -benchtime 1x (make bench-web). It fills about 600 MB of Redis.
func BenchmarkDashboard(b *testing.B) {
	r := runDashboardBench(b, benchFull)
	for _, p := range r.pages {
		if p.name == "overview (a fresh reading)" {
			b.ReportMetric(p.p95, "overview-p95-ms")
		}
	}
	b.ReportMetric(r.first50, "search-first50-ms")
}

func TestDashboardBenchSmall(t *testing.T) {
	r := runDashboardBench(t, benchSmall)
	if len(r.pages) == 0 || r.hits50 == 0 {
		t.Errorf("the benchmark measured nothing: %+v", r)
	}
}

// benchFillFailed writes ARGV[2]..ARGV[3] failed entries of ARGV[4]
// queues to KEYS[1], shaped as resque-go writes them; entry i's args hold
// "needle" when i is a multiple of 1000, its id is j<i, 7 digits>.
const benchFillFailed = `
local batch = {}
local exc = {"Net::ReadTimeout", "ActiveRecord::RecordNotFound", "Redis::TimeoutError", "RuntimeError", "PG::ConnectionBad"}
for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do
  local q = i % tonumber(ARGV[3])
  local needle = ''
  if i % 1000 == 0 then needle = ',"needle"' end
  batch[#batch+1] = string.format('{"failed_at":"2026/11/28 10:%02d:%02d UTC","payload":{"class":"Job%d","args":[%d,"user%d@example.com",{"order":"O-%d"}%s],"id":"j%07d","queue_time":1795300000.25},"exception":"%s","error":"timed out after 30s reading from 10.0.%d.%d","backtrace":["app/jobs/job%d.rb:12:in perform","lib/resque/worker.rb:40:in run","lib/resque/worker.rb:90:in work"],"worker":"host%d:%d:q%04d","queue":"q%04d"}',
    i % 60, i % 60, i % 100, i, i, i, needle, i, exc[i % 5 + 1], i % 250, i % 250, i % 100, i % 20, 1000 + i % 20, q, q)
  if #batch == 1000 then
    redis.call('RPUSH', KEYS[1], unpack(batch))
    batch = {}
  end
end
if #batch > 0 then redis.call('RPUSH', KEYS[1], unpack(batch)) end
return 1`

// benchFillDelayed writes items ARGV[2]..ARGV[3], one per due time
// ARGV[4]+i, into the delayed queue under prefix ARGV[1] (test data:
// the keys are built here), with resque-scheduler's timestamps index.
const benchFillDelayed = `
local p = ARGV[1]
for i = tonumber(ARGV[2]), tonumber(ARGV[3]) do
  local ts = tonumber(ARGV[4]) + i
  local needle = ''
  if i % 1000 == 0 then needle = ',"needle"' end
  local item = string.format('{"class":"Job%d","args":[%d,"user%d@example.com"%s],"queue":"q%04d"}', i % 100, i, i, needle, i % tonumber(ARGV[5]))
  redis.call('RPUSH', p .. 'delayed:' .. ts, item)
  redis.call('ZADD', p .. 'delayed_queue_schedule', ts, ts)
  redis.call('SADD', p .. 'timestamps:' .. item, 'delayed:' .. ts)
end
return 1`

// benchFillQueues writes ARGV[3] jobs into each of queues ARGV[2].. of
// ARGV[4] under prefix ARGV[1], as resque-go enqueues them.
const benchFillQueues = `
local p = ARGV[1]
for q = 0, tonumber(ARGV[2]) - 1 do
  local name = string.format('q%04d', q)
  redis.call('SADD', p .. 'queues', name)
  for i = 1, tonumber(ARGV[3]) do
    local n = q * 1000 + i
    local needle = ''
    if n % 1000 == 0 then needle = ',"needle"' end
    redis.call('RPUSH', p .. 'queue:' .. name, string.format('{"class":"Job%d","args":[%d,"user%d@example.com"%s],"id":"k%07d","queue_time":%d.5}', n % 100, n, n, needle, n, tonumber(ARGV[4]) - i))
  end
end
return 1`

type benchPage struct {
	name, path string
	p50, p95   float64 // ms
	commands   int64   // Redis commands of one asking
	slow       int     // Redis commands slower than 5 ms over every asking
}

type benchResult struct {
	pages                 []benchPage
	first1, first50       float64 // ms to the first and to the 50th search hit
	hits50                int
	searchCalls           int64
	fullScan              float64 // ms to search everything for one id
	fullScanned, fullCall int64
	searchSlow, fullSlow  int
	tabs                  map[int]float64 // commands/s with n live tabs
}

// benchEnv is the benchmark's namespace and dashboard.
type benchEnv struct {
	tb   testing.TB
	c    *client.Client
	raw  *rdb.Client
	ns   string
	srv  *httptest.Server
	auth string
}

func (e *benchEnv) do(cmd string, args ...any) any {
	e.tb.Helper()
	v, err := e.raw.Do(context.Background(), cmd, args...)
	if err != nil {
		e.tb.Fatalf("%s: %v", cmd, err)
	}
	return v
}

// commands is the server's count of commands served (INFO stats).
func (e *benchEnv) commands() int64 {
	info := string(e.do("INFO", "stats").([]byte))
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "total_commands_processed:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	e.tb.Fatal("no total_commands_processed")
	return 0
}

// cmdstats is INFO commandstats: calls and µs of each command.
func (e *benchEnv) cmdstats() map[string][2]int64 {
	out := map[string][2]int64{}
	for _, l := range strings.Split(string(e.do("INFO", "commandstats").([]byte)), "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(l), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var calls, usec int64
		for _, f := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				calls = n
			case "usec":
				usec = n
			}
		}
		out[strings.TrimPrefix(name, "cmdstat_")] = [2]int64{calls, usec}
	}
	return out
}

// perCall is, for each command called between before and after, its
// calls and its mean time in µs.
func perCall(before, after map[string][2]int64) string {
	var parts []string
	for name, a := range after {
		b := before[name]
		if n := a[0] - b[0]; n > 0 && name != "info" {
			parts = append(parts, fmt.Sprintf("%s %d × %.0f µs", strings.ToUpper(name), n, float64(a[1]-b[1])/float64(n)))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// slow is the number of commands SLOWLOG holds (those over 5 ms), and
// empties it; it logs them by command (calls, the slowest) when what is
// not "".
func (e *benchEnv) slow(what ...string) int {
	n, _ := e.do("SLOWLOG", "LEN").(int64)
	if n > 0 && len(what) > 0 {
		entries, _ := e.do("SLOWLOG", "GET", n).([]any)
		calls, worst := map[string]int{}, map[string]int64{}
		for _, x := range entries {
			if f, ok := x.([]any); ok && len(f) >= 4 {
				args, _ := f[3].([]any)
				us, _ := f[2].(int64)
				if len(args) > 0 {
					name, _ := args[0].([]byte)
					calls[string(name)]++
					worst[string(name)] = max(worst[string(name)], us)
				}
			}
		}
		var cmds []string
		for name, c := range calls {
			cmds = append(cmds, fmt.Sprintf("%s × %d (slowest %.1f ms)", name, c, float64(worst[name])/1000))
		}
		slices.Sort(cmds)
		e.tb.Logf("%s: commands over 5 ms: %s", what[0], strings.Join(cmds, ", "))
	}
	e.do("SLOWLOG", "RESET")
	return int(n)
}

// get asks path and reads the answer whole; it returns the time to the
// last byte.
func (e *benchEnv) get(path string) time.Duration {
	e.tb.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+"/"+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.auth)
	t0 := time.Now()
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.tb.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	if err != nil || resp.StatusCode != http.StatusOK {
		e.tb.Fatalf("%s: %d %v", path, resp.StatusCode, err)
	}
	return d
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func percentile(ds []float64, p float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p)
	return s[i]
}

func runDashboardBench(tb testing.TB, sz benchSizes) benchResult {
	ns := redistest.Namespace(tb)
	c, err := client.New(client.Options{URL: os.Getenv(redisEnv), Namespace: ns})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	raw, err := rdb.New(rdb.Options{URL: os.Getenv(redisEnv), Namespace: ns})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { raw.Close() })
	e := &benchEnv{tb: tb, c: c, raw: raw, ns: ns, auth: viewerSecret}
	prefix := ns + ":"
	tb.Cleanup(func() { e.dropNamespace() })

	t0 := time.Now()
	for from := 1; from <= sz.Failed; from += 50_000 {
		e.do("EVAL", benchFillFailed, 1, prefix+"failed", from, min(from+49_999, sz.Failed), sz.Queues)
	}
	now := time.Now().Unix()
	for from := 1; from <= sz.Delayed; from += 20_000 {
		e.do("EVAL", benchFillDelayed, 0, prefix, from, min(from+19_999, sz.Delayed), now+3600, sz.Queues)
	}
	e.do("EVAL", benchFillQueues, 0, prefix, sz.Queues, sz.JobsPerQueue, now)
	for i := 0; i < sz.Workers; i++ {
		id := fmt.Sprintf("host%d:%d:q%04d", i, 1000+i, i)
		e.do("SADD", prefix+"workers", id)
		e.do("SET", prefix+"worker:"+id+":started", time.Now().UTC().Format(time.RFC3339))
		if i%2 == 0 {
			e.do("SET", prefix+"worker:"+id, fmt.Sprintf(`{"queue":"q%04d","run_at":"%s","payload":{"class":"Job1","args":[1]}}`, i, time.Now().UTC().Format(time.RFC3339)))
		}
	}
	tb.Logf("filled %d failed entries, %d queues of %d jobs, %d delayed due times, %d workers in %.1f s",
		sz.Failed, sz.Queues, sz.JobsPerQueue, sz.Delayed, sz.Workers, time.Since(t0).Seconds())

	// every page reads Redis afresh: no reading of the overview is reused
	h, err := web.Handler(web.Options{Client: c, PollInterval: time.Nanosecond,
		Users: []web.User{{Name: "vic", Role: web.RoleViewer, Secret: viewerSecret}}})
	if err != nil {
		tb.Fatal(err)
	}
	e.srv = httptest.NewServer(h)
	defer e.srv.Close()

	e.do("CONFIG", "SET", "slowlog-log-slower-than", "5000")
	defer e.do("CONFIG", "SET", "slowlog-log-slower-than", "10000")
	e.do("CONFIG", "SET", "slowlog-max-len", "100000")
	defer e.do("CONFIG", "SET", "slowlog-max-len", "128")
	e.slow()

	var res benchResult
	lastPage := (sz.Failed + 49) / 50
	pages := []benchPage{
		{name: "overview (a fresh reading)", path: ""},
		{name: "/queues", path: "queues"},
		{name: "a queue", path: "queues/q0001"},
		{name: "/failed", path: "failed"},
		{name: "/failed, the last page", path: "failed?page=" + strconv.Itoa(lastPage)},
		{name: "/failed?queue=q0001 (1 in 1,000)", path: "failed?queue=q0001"},
		{name: "/failed?queue=q0001, its next page", path: "failed?queue=q0001&from=" + strconv.Itoa(min(10_000, sz.Failed/2))},
		{name: "/failed?class=Job7 (1 in 100)", path: "failed?class=Job7"},
		{name: "a failed entry", path: "failed/" + strconv.Itoa(sz.Failed/2)},
		{name: "/delayed", path: "delayed"},
		{name: "/delayed?queue=q0001", path: "delayed?queue=q0001"},
		{name: "/delayed?queue=q0001, a later page", path: fmt.Sprintf("delayed?queue=q0001&from=%d", now+3600+int64(sz.Delayed/2))},
		{name: "/workers", path: "workers"},
		{name: "/plans", path: "plans"},
		{name: "/schedules", path: "schedules"},
		{name: "/plans?scan=0 (every plan key)", path: "plans?scan=0"},
		{name: "/unique", path: "unique"},
		{name: "/mass", path: "mass"},
		{name: "/audit", path: "audit"},
		{name: "/api/overview", path: "api/overview"},
		{name: "/api/failed", path: "api/failed"},
	}
	for i := range pages {
		p := &pages[i]
		e.get(p.path) // warm up
		before := e.commands()
		e.get(p.path)
		p.commands = e.commands() - before - 1
		e.slow()
		ts := make([]float64, sz.Rounds)
		for r := range ts {
			ts[r] = ms(e.get(p.path))
		}
		p.slow = e.slow(p.name)
		p.p50, p.p95 = percentile(ts, 0.5), percentile(ts, 0.95)
	}
	res.pages = pages

	// the search: time to the first and the 50th hit of a text one
	// entry in a thousand holds, in every place
	e.slow()
	statsBefore := e.cmdstats()
	var firsts, fifties []float64
	for r := 0; r < max(sz.Rounds/4, 3); r++ {
		first, fifty, hits, calls := e.searchTimes("api/search?q=needle&limit=50")
		firsts, fifties, res.hits50, res.searchCalls = append(firsts, first), append(fifties, fifty), hits, calls
	}
	res.searchSlow = e.slow("search")
	tb.Logf("search q=needle, Redis time per command: %s", perCall(statsBefore, e.cmdstats()))
	statsBefore = e.cmdstats()
	res.first1, res.first50 = percentile(firsts, 0.5), percentile(fifties, 0.5)
	// and a search that reads everything: one id, in the oldest entry
	start := time.Now()
	var end struct {
		Scanned int64 `json:"scanned"`
		Calls   int64 `json:"round_trips"`
	}
	body := e.read("api/search?q=j0000001")
	res.fullScan = ms(time.Since(start))
	lines := strings.Split(strings.TrimSpace(body), "\n")
	_ = jsonUnmarshal(lines[len(lines)-1], &end)
	res.fullScanned, res.fullCall = end.Scanned, end.Calls
	res.fullSlow = e.slow("full search")
	tb.Logf("search of one id, Redis time per command: %s", perCall(statsBefore, e.cmdstats()))

	res.tabs = map[int]float64{}
	for _, n := range []int{1, sz.Tabs} {
		res.tabs[n] = e.liveLoad(n)
	}

	tb.Logf("%-36s %9s %9s %9s %6s", "page", "p50 ms", "p95 ms", "commands", ">5ms")
	for _, p := range res.pages {
		tb.Logf("%-36s %9.1f %9.1f %9d %6d", p.name, p.p50, p.p95, p.commands, p.slow)
	}
	tb.Logf("search q=needle (1 in 1,000 in every place): first hit %.1f ms, 50th hit %.1f ms (median of %d), %d Redis round trips, %d commands over 5 ms",
		res.first1, res.first50, len(fifties), res.searchCalls, res.searchSlow)
	tb.Logf("search of one id that only the oldest failed entry holds: %.0f ms, %d entries read in %d Redis round trips, %d commands over 5 ms",
		res.fullScan, res.fullScanned, res.fullCall, res.fullSlow)
	for _, n := range []int{1, sz.Tabs} {
		tb.Logf("live overview, %d open tabs: %.0f Redis commands/s (poll every 500 ms)", n, res.tabs[n])
	}
	return res
}

// read asks path and returns its body.
func (e *benchEnv) read(path string) string {
	e.tb.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+"/"+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.auth)
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		e.tb.Fatalf("%s: %d %v", path, resp.StatusCode, err)
	}
	return string(b)
}

// searchTimes asks a search and returns the times to its first and its
// last hit, the hits and the Redis calls it says it made.
func (e *benchEnv) searchTimes(path string) (first, last float64, hits int, calls int64) {
	e.tb.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+"/"+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.auth)
	t0 := time.Now()
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.tb.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var end struct {
			Done  bool  `json:"done"`
			Calls int64 `json:"round_trips"`
		}
		if jsonUnmarshal(sc.Text(), &end) == nil && end.Done {
			return first, last, hits, end.Calls
		}
		hits++
		last = ms(time.Since(t0))
		if hits == 1 {
			first = last
		}
	}
	e.tb.Fatalf("%s: no last line (%v)", path, sc.Err())
	return
}

// liveLoad opens n event streams on a dashboard that polls every 500 ms
// and returns the Redis commands per second while they listen.
func (e *benchEnv) liveLoad(n int) float64 {
	e.tb.Helper()
	h, err := web.Handler(web.Options{Client: e.c, PollInterval: 500 * time.Millisecond,
		Users: []web.User{{Name: "vic", Role: web.RoleViewer, Secret: viewerSecret}}})
	if err != nil {
		e.tb.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan int, 1024)
	for i := 0; i < n; i++ {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/events", nil)
		req.Header.Set("Authorization", "Bearer "+e.auth)
		resp, err := srv.Client().Do(req)
		if err != nil {
			e.tb.Fatal(err)
		}
		go func(tab int) {
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(nil, 64<<20)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "data:") {
					select {
					case events <- tab:
					case <-ctx.Done():
						return
					}
				}
			}
		}(i)
	}
	// count from the first event of tab 0 to its fifth after it
	wait := func(k int) {
		for got := 0; got < k; {
			select {
			case tab := <-events:
				if tab == 0 {
					got++
				}
			case <-time.After(60 * time.Second):
				e.tb.Fatal("no live event")
			}
		}
	}
	wait(1)
	before, t0 := e.commands(), time.Now()
	wait(5)
	return float64(e.commands()-before-1) / time.Since(t0).Seconds()
}

// dropNamespace deletes the benchmark's keys, a few at a time (UNLINK).
func (e *benchEnv) dropNamespace() {
	keys, err := e.raw.ScanKeys(context.Background(), e.ns+":*")
	if err != nil {
		e.tb.Log(err)
		return
	}
	for i := 0; i < len(keys); i += 1000 {
		args := make([]any, 0, 1000)
		for _, k := range keys[i:min(i+1000, len(keys))] {
			args = append(args, k)
		}
		_, _ = e.raw.Do(context.Background(), "UNLINK", args...)
	}
}
