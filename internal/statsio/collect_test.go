package statsio_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/statsio"
	"github.com/resque-go/resque-go/stats"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// snapshotTime is the injected "now" of the golden snapshots: Collect reads
// the server's clock, which would change the ages Render shows.
var snapshotTime = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// loadCluster writes a known cluster into e's namespace: Ruby, PHP and
// resque-go workers, per-host queue counters, and resque-go runtime records.
func loadCluster(e *env) {
	e.t.Helper()
	set := func(k, v string) { e.do("SET", e.key(k), v) }
	set("stat:processed", "1234")
	set("stat:failed", "56")
	set("stat:retries", "7")
	for _, f := range []string{`{"failed":1}`, `{"failed":2}`, `{"failed":3}`} {
		e.do("RPUSH", e.key("failed"), f)
	}
	for _, r := range []string{`{"retry":1}`, `{"retry":2}`} {
		e.do("RPUSH", e.key("retries"), r)
	}
	e.do("SADD", e.key("queues"), "critical", "default", "mail:outbound", "empty")
	for q, n := range map[string]int{"critical": 3, "default": 5, "mail:outbound": 1} {
		for i := range n {
			e.do("RPUSH", e.key("queue:"+q), `{"class":"Job","args":[`+string(rune('0'+i))+`]}`)
		}
	}
	counters := map[string]string{
		// critical on two hosts
		"queuestat:web-1:dequeued:critical": "10", "queuestat:web-1:queue_time:critical": "1500",
		"queuestat:web-1:processed:critical": "8", "queuestat:web-1:processing_time:critical": "2500",
		"queuestat:web-1:failed:critical": "1", "queuestat:web-1:retries:critical": "1",
		"queuestat:web-2:dequeued:critical": "5", "queuestat:web-2:queue_time:critical": "250",
		"queuestat:web-2:processed:critical": "5", "queuestat:web-2:processing_time:critical": "1000",
		// Ruby payloads carry no queue_time: dequeued but no wait recorded
		"queuestat:web-1:dequeued:default": "100", "queuestat:web-1:processed:default": "99",
		"queuestat:web-1:failed:default": "1", "queuestat:web-1:processing_time:default": "123456",
		// a queue no longer in the queues set, counted by a PHP worker
		"queuestat:php-1:dequeued:legacy": "2", "queuestat:php-1:queue_time:legacy": "7",
		"queuestat:php-1:processed:legacy": "2", "queuestat:php-1:processing_time:legacy": "4000",
		// a stat name that is not ours: skipped
		"queuestat:web-1:weird:critical": "5",
	}
	for k, v := range counters {
		set(k, v)
	}
	// paused as resque-queue-control writes it; "retired" is in no queues set
	set("pause:queue:legacy", "true")
	set("pause:queue:retired", "true")
	workers := []struct {
		id, record, started, heartbeat, interval string
	}{
		{"web-1:4242-1:critical,default",
			`{"queue":"critical","run_at":"2024-05-01T11:59:50Z","payload":{"class":"Archive","args":[1,"master"],"id":"a1","queue_time":1714564780.5}}`,
			"2024-05-01 10:00:00 +0000", "2024-05-01T11:59:58+00:00", "5"},
		{"web-1:4242-2:critical,default", "", "2024-05-01 10:00:00 +0000", "2024-05-01T11:59:58+00:00", "5"},
		{"web-1:4243:mail:outbound", "", "2024-05-01 11:00:00 +0000", "2024-05-01T11:59:59+00:00", "5"},
		{"web-2:77:*",
			`{"queue":"default","run_at":"2024-05-01T11:58:00Z","payload":{"class":"ActiveJob::QueueAdapters::ResqueAdapter::JobWrapper","args":[{"job_class":"MyJob","arguments":[]}]}}`,
			"2024-04-30 08:00:00 +0000", "2024-05-01T11:59:57+00:00", "2.5"},
		// php-resque: no runtime record, its own heartbeat offset
		{"php-1:999:legacy",
			`{"queue":"legacy","run_at":"2024-05-01T11:55:00Z","payload":{"class":"My_Job","args":[{"k":"v"}],"id":"b2","queue_time":1714564000.1,"prefix":""}}`,
			"2024-05-01 09:00:00 +0000", "2024-05-01T13:58:00+02:00", ""},
		// an id that is not host:pid:queues, with a record that is not JSON
		{"weird-worker-id", "garbage", "", "", ""},
	}
	for _, w := range workers {
		e.do("SADD", e.key("workers"), w.id)
		if w.record != "" {
			set("worker:"+w.id, w.record)
		}
		if w.started != "" {
			set("worker:"+w.id+":started", w.started)
		}
		if w.heartbeat != "" {
			e.do("HSET", e.key("workers:heartbeat"), w.id, w.heartbeat)
		}
		if w.interval != "" {
			e.do("HSET", e.key("resque-go:heartbeat_interval"), w.id, w.interval)
		}
	}
	set("resque-go:process:web-1:4242", `{"pid":4242,"host":"web-1","started_at":"2024-05-01T10:00:00Z","updated_at":"2024-05-01T11:59:58Z",`+
		`"heartbeat_interval_s":5,"worker_ids":["web-1:4242-1:critical,default","web-1:4242-2:critical,default"],"slots_busy":1,"slots_total":2,`+
		`"rss_bytes":52428800,"cpu_percent":12.5,"goroutines":41,"host_cpu_percent":37.25,"mem_used_percent":61.5,"load1":0.52,"load5":0.4,"load15":0.33}`)
	set("resque-go:process:web-1:4243", `{"pid":4243,"host":"web-1","started_at":"2024-05-01T11:00:00Z","updated_at":"2024-05-01T11:59:59Z",`+
		`"heartbeat_interval_s":5,"worker_ids":["web-1:4243:mail:outbound"],"slots_busy":0,"slots_total":1,`+
		`"rss_bytes":20971520,"cpu_percent":0.3,"goroutines":17,"host_cpu_percent":38,"mem_used_percent":62,"load1":0.61,"load5":0.42,"load15":0.34}`)
	set("resque-go:process:web-2:77", `{"pid":77,"host":"web-2","started_at":"2024-04-30T08:00:00Z","updated_at":"2024-05-01T11:59:57Z",`+
		`"heartbeat_interval_s":2.5,"worker_ids":["web-2:77:*"],"slots_busy":1,"slots_total":1,`+
		`"rss_bytes":1610612736,"cpu_percent":98.76,"goroutines":9,"host_cpu_percent":99.9,"mem_used_percent":91.2,"load1":3.5,"load5":2.25,"load15":1}`)
	// not a runtime record: a bad key and a bad value are both skipped
	set("resque-go:process:web-3", `{"pid":1}`)
	set("resque-go:process:web-3:5", `not json`)
}

// collect reads the cluster and pins the snapshot's clock.
func collect(e *env, host string) *stats.Snapshot {
	e.t.Helper()
	s, err := statsio.Collect(e.ctx(), e.client, host)
	if err != nil {
		e.t.Fatal(err)
	}
	if s.Time.IsZero() || time.Since(s.Time).Abs() > time.Hour {
		e.t.Errorf("snapshot time %v is not the server's clock", s.Time)
	}
	s.Time = snapshotTime
	return s
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/statsio/ -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./internal/statsio/ -update rewrites it)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func goldenBoth(t *testing.T, name string, s *stats.Snapshot) {
	t.Helper()
	var text, js bytes.Buffer
	if err := stats.Render(&text, s); err != nil {
		t.Fatal(err)
	}
	if err := stats.WriteJSON(&js, s); err != nil {
		t.Fatal(err)
	}
	golden(t, name+".golden", text.Bytes())
	golden(t, name+".json.golden", js.Bytes())
}

func TestGoldenCluster(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	loadCluster(e)
	goldenBoth(t, "cluster", collect(e, ""))
}

func TestGoldenHostFilter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	loadCluster(e)
	goldenBoth(t, "cluster_web-1", collect(e, "web-1"))
}

func TestGoldenEmpty(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	goldenBoth(t, "empty", collect(e, ""))
}

// TestCollectKnownState checks the numbers themselves, so that a golden file
// rewritten with a bug in it cannot hide the bug.
func TestCollectKnownState(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	loadCluster(e)
	s := collect(e, "")

	tt := s.Totals
	if tt.Processed != 1234 || tt.Failed != 56 || tt.Retries != 7 || tt.FailedList != 3 || tt.RetriesList != 2 {
		t.Errorf("global counters: %+v", tt)
	}
	if tt.Pending != 9 || tt.Queues != 5 || tt.Workers != 6 || tt.Working != 4 || tt.Processes != 3 {
		t.Errorf("totals: %+v", tt)
	}

	var names []string
	queues := map[string]stats.Queue{}
	for _, q := range s.Queues {
		names = append(names, q.Name)
		queues[q.Name] = q
	}
	if want := []string{"critical", "default", "empty", "legacy", "mail:outbound"}; !slices.Equal(names, want) {
		t.Errorf("queues %q, want %q", names, want)
	}
	crit := queues["critical"]
	if crit.Pending != 3 || len(crit.Hosts) != 2 || crit.Hosts[0].Host != "web-1" || crit.Hosts[1].Host != "web-2" {
		t.Fatalf("critical: %+v", crit)
	}
	if c := crit.QueueCounters; c.Dequeued != 15 || c.Processed != 13 || c.Failed != 1 || c.Retries != 1 ||
		c.QueueTimeMs != 1750 || c.ProcessingTimeMs != 3500 {
		t.Errorf("critical totals: %+v", c)
	}
	// 1750/15 and 3500/(13+1+1)
	if c := crit.QueueCounters; c.AvgQueueTimeMs != 116.67 || c.AvgProcessingTimeMs != 233.33 {
		t.Errorf("critical averages: %v, %v", c.AvgQueueTimeMs, c.AvgProcessingTimeMs)
	}
	if h := crit.Hosts[0]; h.AvgQueueTimeMs != 150 || h.AvgProcessingTimeMs != 250 {
		t.Errorf("critical on web-1 averages: %v, %v", h.AvgQueueTimeMs, h.AvgProcessingTimeMs)
	}
	if d := queues["default"]; d.AvgQueueTimeMs != 0 || d.AvgProcessingTimeMs != 1234.56 {
		t.Errorf("default averages: %v, %v", d.AvgQueueTimeMs, d.AvgProcessingTimeMs)
	}
	if l := queues["legacy"]; l.Pending != 0 || len(l.Hosts) != 1 || l.Hosts[0].Host != "php-1" {
		t.Errorf("legacy: %+v", l)
	}
	if q := queues["empty"]; q.Pending != 0 || q.Hosts == nil || len(q.Hosts) != 0 {
		t.Errorf("empty: %+v", q)
	}

	workers := map[string]stats.Worker{}
	for _, w := range s.Workers {
		workers[w.ID] = w
	}
	w := workers["web-1:4242-1:critical,default"]
	if w.State != "working" || w.Host != "web-1" || w.PID != 4242 || w.Slot != 1 || w.Queues != "critical,default" ||
		w.Queue != "critical" || w.Class != "Archive" || w.RunAt != "2024-05-01T11:59:50Z" ||
		w.Started != "2024-05-01 10:00:00 +0000" || w.HeartbeatIntervalS != 5 {
		t.Errorf("working resque-go worker: %+v", w)
	}
	if w.RSSBytes == nil || *w.RSSBytes != 52428800 || w.CPUPercent == nil || *w.CPUPercent != 12.5 {
		t.Errorf("runtime record not joined: %v %v", w.RSSBytes, w.CPUPercent)
	}
	if w := workers["web-1:4242-2:critical,default"]; w.State != "idle" || w.Queue != "" || w.RSSBytes == nil {
		t.Errorf("idle slot: %+v", w)
	}
	if w := workers["web-2:77:*"]; w.Class != "MyJob" || w.Queue != "default" {
		t.Errorf("ActiveJob worker: %+v", w)
	}
	if w := workers["php-1:999:legacy"]; w.Class != "My_Job" || w.RSSBytes != nil || w.CPUPercent != nil || w.HeartbeatIntervalS != 0 {
		t.Errorf("php worker: %+v", w)
	}
	if w := workers["weird-worker-id"]; w.State != "working" || w.Host != "" || w.PID != 0 || w.Class != "" {
		t.Errorf("odd worker id: %+v", w)
	}

	if len(s.Hosts) != 2 || s.Hosts[0].Host != "web-1" || s.Hosts[1].Host != "web-2" {
		t.Fatalf("hosts: %+v", s.Hosts)
	}
	h := s.Hosts[0]
	if len(h.Processes) != 2 || h.Processes[0].PID != 4242 || h.SlotsBusy != 1 || h.SlotsTotal != 3 ||
		h.RSSBytes != 52428800+20971520 {
		t.Errorf("web-1: %+v", h)
	}
	// host-wide numbers come from the freshest record (4243)
	if !h.UpdatedAt.Equal(time.Date(2024, 5, 1, 11, 59, 59, 0, time.UTC)) || h.HostCPUPercent != 38 || h.Load1 != 0.61 {
		t.Errorf("web-1 host metrics: %+v", h)
	}
}

func TestCollectHostFilter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	loadCluster(e)
	s := collect(e, "web-2")
	if s.HostFilter != "web-2" || s.Totals.Workers != 1 || s.Workers[0].ID != "web-2:77:*" || len(s.Hosts) != 1 {
		t.Errorf("filtered snapshot: %+v", s)
	}
	// global numbers have no host and stay whole
	if s.Totals.Processed != 1234 || s.Totals.Pending != 9 || len(s.Queues) != 5 {
		t.Errorf("filtered totals: %+v", s.Totals)
	}
	for _, q := range s.Queues {
		for _, h := range q.Hosts {
			if h.Host != "web-2" {
				t.Errorf("queue %s has a row for host %s", q.Name, h.Host)
			}
		}
		if q.Name == "critical" && (q.Dequeued != 5 || q.Processed != 5) {
			t.Errorf("critical on web-2: %+v", q.QueueCounters)
		}
	}
}

// TestCollectManyKeys crosses the pipeline's batch size.
func TestCollectManyKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 1500
	args := []any{e.key("queues")}
	for i := range n {
		args = append(args, "q"+strconv.Itoa(i))
	}
	e.do("SADD", args...)
	mset := []any{}
	for i := range n {
		mset = append(mset, e.key("queuestat:h:dequeued:q"+strconv.Itoa(i)), i)
	}
	e.do("MSET", mset...)
	s := collect(e, "")
	if len(s.Queues) != n {
		t.Fatalf("%d queues, want %d", len(s.Queues), n)
	}
	var sum int64
	for _, q := range s.Queues {
		sum += q.Dequeued
	}
	if want := int64(n * (n - 1) / 2); sum != want {
		t.Errorf("dequeued sum %d, want %d", sum, want)
	}
}

func TestCollectRedisDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := e.client.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := statsio.Collect(e.ctx(), e.client, ""); err == nil {
		t.Error("Collect on a closed client: want an error")
	}
}

// The slots column agrees with the workers shown: a runtime record written
// before its four slots took jobs (slots_busy is refreshed once per
// heartbeat interval) used to show 0/4 next to four working workers.
func TestCollectBusySlotsFromWorkerRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	set := func(k, v string) { e.do("SET", e.key(k), v) }
	var ids []string
	for slot := 1; slot <= 4; slot++ {
		id := "web-1:100-" + strconv.Itoa(slot) + ":q"
		ids = append(ids, `"`+id+`"`)
		e.do("SADD", e.key("workers"), id)
		set("worker:"+id, `{"queue":"q","run_at":"2024-05-01T11:59:50Z","payload":{"class":"Job","args":[]}}`)
	}
	// A stale record (0 of 4 busy), and one that says 3 busy of 2 workers
	// of which one is working; a record without worker ids keeps its count.
	set("resque-go:process:web-1:100", `{"pid":100,"host":"web-1","worker_ids":[`+strings.Join(ids, ",")+`],"slots_busy":0,"slots_total":4}`)
	e.do("SADD", e.key("workers"), "web-1:200-1:q", "web-1:200-2:q")
	set("worker:web-1:200-2:q", `{"queue":"q","run_at":"2024-05-01T11:59:50Z","payload":{"class":"Job","args":[]}}`)
	set("resque-go:process:web-1:200", `{"pid":200,"host":"web-1","worker_ids":["web-1:200-1:q","web-1:200-2:q"],"slots_busy":2,"slots_total":2}`)
	set("resque-go:process:web-1:300", `{"pid":300,"host":"web-1","slots_busy":1,"slots_total":3}`)

	s := collect(e, "")
	if len(s.Hosts) != 1 || len(s.Hosts[0].Processes) != 3 {
		t.Fatalf("hosts: %+v", s.Hosts)
	}
	h := s.Hosts[0]
	var got []string
	for _, p := range h.Processes {
		got = append(got, strconv.Itoa(p.PID)+":"+strconv.Itoa(p.SlotsBusy)+"/"+strconv.Itoa(p.SlotsTotal))
	}
	if want := []string{"100:4/4", "200:1/2", "300:1/3"}; !slices.Equal(got, want) || h.SlotsBusy != 6 || h.SlotsTotal != 9 {
		t.Errorf("slots %v, host %d/%d; want %v, 6/9", got, h.SlotsBusy, h.SlotsTotal, want)
	}
	var text bytes.Buffer
	if err := stats.Render(&text, s); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^web-1\s+100\s+4/4\s`).Match(text.Bytes()) {
		t.Errorf("process 100 is not shown 4/4:\n%s", text.String())
	}
}

// A process whose claims skip a queue whose key holds another type says so
// in its runtime record, and stats shows it (text and JSON).
func TestStatsShowsQueuesOfWrongType(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := stats.Record{PID: 42, Host: "web-1", StartedAt: snapshotTime, UpdatedAt: snapshotTime, WrongTypeQueues: []string{"b"}}
	b, err := protocol.EncodeProcessRecord(protocol.ProcessRecord(rec))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.client.SetProcessRecord(e.ctx(), "web-1", 42, b, time.Minute); err != nil {
		t.Fatal(err)
	}
	s := collect(e, "")
	var text, js bytes.Buffer
	if err := stats.Render(&text, s); err != nil {
		t.Fatal(err)
	}
	if err := stats.WriteJSON(&js, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "SKIPPED QUEUES") || !regexp.MustCompile(`(?m)^web-1\s+42\s+b$`).MatchString(text.String()) {
		t.Errorf("stats text does not show queue b skipped by web-1:42:\n%s", text.String())
	}
	if !strings.Contains(js.String(), `"wrong_type_queues": [`) {
		t.Errorf("stats JSON has no wrong_type_queues:\n%s", js.String())
	}
}

// The keys workers set aside are in the snapshot, its JSON and its text,
// each with what was not done and how long ago it was last met.
func TestCollectSetAside(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tag := e.key("resque-go:tag:t")
	at := snapshotTime.Add(-90 * time.Minute)
	e.do("HSET", e.key("resque-go:set_aside"), tag, fmt.Sprintf(`{"at":%d,"what":"tag index not updated: WRONGTYPE"}`, at.Unix()))
	s := collect(e, "")
	if len(s.SetAside) != 1 || s.SetAside[0].Key != tag || s.SetAside[0].What != "tag index not updated: WRONGTYPE" || !s.SetAside[0].At.Equal(at) {
		t.Fatalf("set aside: %+v", s.SetAside)
	}
	var text, js bytes.Buffer
	if err := stats.Render(&text, s); err != nil {
		t.Fatal(err)
	}
	if err := stats.WriteJSON(&js, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"KEYS SET ASIDE", tag, "1h30m ago", "tag index not updated: WRONGTYPE"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var v struct {
		SetAside []struct{ Key, What, At string } `json:"set_aside"`
	}
	if err := json.Unmarshal(js.Bytes(), &v); err != nil || len(v.SetAside) != 1 || v.SetAside[0].Key != tag || v.SetAside[0].At != at.Format(time.RFC3339) {
		t.Errorf("JSON set_aside: %+v, %v", v.SetAside, err)
	}
}
