package schedule_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/schedule"
)

func byName(entries []schedule.Entry) map[string]schedule.Entry {
	m := map[string]schedule.Entry{}
	for _, e := range entries {
		m[e.Name] = e
	}
	return m
}

func names(entries []schedule.Entry) string {
	var n []string
	for _, e := range entries {
		n = append(n, e.Name)
	}
	return strings.Join(n, ",")
}

func TestLoadFile(t *testing.T) {
	t.Parallel()
	entries, err := schedule.LoadFile("testdata/resque_schedule.yml", "production")
	if err != nil {
		t.Fatal(err)
	}
	// file order; demo_only is for another environment
	want := "defaults,CancelAbandonedOrders,queue_documents_for_indexing,clear_leaderboards_contributors,every_thirty,check_daemon,production_only,ImportOrdersManual"
	if got := names(entries); got != want {
		t.Fatalf("entries %s\nwant    %s", got, want)
	}
	m := byName(entries)
	payload := func(name string) string {
		t.Helper()
		p, err := m[name].Payload()
		if err != nil {
			t.Fatal(err)
		}
		return string(p)
	}
	for _, c := range []struct{ name, when, queue, payload string }{
		{"CancelAbandonedOrders", "cron */5 * * * *", "orders", `{"class":"CancelAbandonedOrders","args":[]}`},
		{"queue_documents_for_indexing", "cron 0 3 * * * Europe/Prague", "high", `{"class":"QueueDocuments","args":[]}`},
		{"clear_leaderboards_contributors", "cron 30 6 * * 1", "low", `{"class":"ClearLeaderboards","args":["contributors"]}`},
		// a mapping is one argument; key order, big integers and Ruby's
		// YAML booleans and symbols are kept as Ruby would send them
		{"every_thirty", "every 30s", "default", `{"class":"Ping","args":[{"host":"db1","big":12345678901234567890,"ratio":2.0,"tags":["a","b<&>","sym",true,"yes",null]}]}`},
		{"check_daemon", "every 30s", "daemons", `{"class":"CheckDaemon","args":[1,"two",3.5]}`},
		{"production_only", "every 1h", "reports", `{"class":"Report","args":[]}`},
	} {
		e := m[c.name]
		if e.When() != c.when || e.Queue != c.queue || payload(c.name) != c.payload || e.Source != schedule.SourceFile {
			t.Errorf("%s: %s queue=%s %s %s", c.name, e.When(), e.Queue, payload(c.name), e.Source)
		}
	}
	if d := m["queue_documents_for_indexing"].Description; d != "This job queues all content for indexing in solr" {
		t.Errorf("description %q", d)
	}
	if o := string(m["check_daemon"].Options); o != `{"first_in":"120s"}` {
		t.Errorf("options %s", o)
	}
	for _, n := range []string{"defaults", "ImportOrdersManual"} {
		if !m[n].Manual() || m[n].When() != "manual" {
			t.Errorf("%s is not manual: %s", n, m[n].When())
		}
	}
	prague, err := time.LoadLocation("Europe/Prague")
	if err != nil {
		t.Skip(err)
	}
	from := time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)
	if n := m["queue_documents_for_indexing"].Next(from); !n.Equal(time.Date(2026, 3, 29, 3, 0, 0, 0, prague)) {
		t.Errorf("next Prague 03:00 after %v: %v", from, n)
	}

	// environments: none given loads only entries without rails_env/env
	entries, err = schedule.LoadFile("testdata/resque_schedule.yml", "")
	if err != nil {
		t.Fatal(err)
	}
	if n := names(entries); strings.Contains(n, "production_only") || strings.Contains(n, "demo_only") {
		t.Errorf("no environment: %s", n)
	}
	entries, _ = schedule.LoadFile("testdata/resque_schedule.yml", "staging")
	if n := names(entries); !strings.Contains(n, "production_only") || strings.Contains(n, "demo_only") {
		t.Errorf("staging: %s", n)
	}
	entries, _ = schedule.LoadFile("testdata/resque_schedule.yml", "demo")
	if e := byName(entries)["demo_only"]; e.Class != "FakeLeaderboard" || e.Env != "demo" {
		t.Errorf("demo: %s", names(entries))
	}
}

func TestLoadFileBadEntries(t *testing.T) {
	t.Parallel()
	entries, err := schedule.LoadFile("testdata/bad_schedule.yml", "")
	if names(entries) != "good" {
		t.Errorf("good entries: %s", names(entries))
	}
	var fe *schedule.FileError
	if !errors.As(err, &fe) || fe.Path != "testdata/bad_schedule.yml" || len(fe.Entries) != 8 {
		t.Fatalf("error: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"testdata/bad_schedule.yml: 8 bad entries: ",
		`schedule "no_queue": queue: missing: resque-scheduler would ask the Ruby class NoQueue for its queue`,
		`schedule "bad_cron": cron: cron "0 25 * * *": end of range (25) above maximum (23)`,
		`schedule "bad_zone": cron: unknown time zone "Europe/Atlantis"`,
		`schedule "bad_every": every: "5 minutes please" is not a duration`,
		`schedule "bad_option": every: option times: not supported by resque-go`,
		`schedule "custom": custom_job_class: "Resque::JobWithStatus" is not supported`,
		`schedule "not_a_mapping": line 24: want a mapping`,
		`schedule "bad_env": rails_env: want a comma separated string`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	var ee *schedule.EntryError
	if !errors.As(err, &ee) || ee.Name != "no_queue" || ee.Field != "queue" {
		t.Errorf("first entry error: %+v", ee)
	}

	for _, c := range []struct{ yaml, msg string }{
		{"- a\n- b\n", "want a mapping of schedule name"},
		{"a: [\n", "yaml:"},
	} {
		if _, err := schedule.Parse([]byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: %v", c.yaml, err)
		}
	}
	if e, err := schedule.Parse(nil); err != nil || e != nil {
		t.Errorf("empty file: %v %v", e, err)
	}
	if _, err := schedule.LoadFile("testdata/none.yml", ""); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
}

// The persistent_schedules value of the resque-scheduler 5.0.0 fixture
// (set-schedule), and the forms Resque.set_schedule writes.
func TestParseJSON(t *testing.T) {
	t.Parallel()
	e, err := schedule.ParseJSON("persisted_every_5m", []byte(`{"class":"MailJob","every":"5m","queue":"mail","args":["dyn",3.5],"description":"persisted via set_schedule"}`))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := e.Payload()
	if e.When() != "every 5m" || e.Queue != "mail" || string(p) != `{"class":"MailJob","args":["dyn",3.5]}` || e.Source != schedule.SourceRedis {
		t.Errorf("%+v %s", e, p)
	}
	e, err = schedule.ParseJSON("send_emails", []byte(`{"class":"SendEmail","args":"POC email subject","every":["1h",{"first_in":300}],"queue":"mail"}`))
	if p, _ := e.Payload(); err != nil || string(p) != `{"class":"SendEmail","args":["POC email subject"]}` || string(e.Options) != `{"first_in":300}` {
		t.Errorf("%v %s", err, p)
	}
	if _, err := schedule.ParseJSON("no_class", []byte(`{"cron":"*/5 * * * *","queue":"mail"}`)); err == nil || !strings.Contains(err.Error(), "class: missing") {
		t.Errorf("no class: %v", err)
	}
	if _, err := schedule.ParseJSON("garbage", []byte(`nope`)); err == nil {
		t.Error("garbage accepted")
	}
}

// The job resque-scheduler 5.0.0 pushed for a recurring schedule
// (fixture scheduler-running), byte for byte.
func TestPayloadMatchesResqueScheduler(t *testing.T) {
	t.Parallel()
	d := fixtures.MustLoad("resque-scheduler-5.0.0", "scheduler-running")
	e, err := schedule.ParseJSON("every_2s", []byte(`{"class":"MailJob","every":"2s","queue":"mail","args":["recurring",1]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := e.Payload()
	jobs := d.List("resque:queue:" + e.Queue)
	if got := jobs[len(jobs)-1]; string(p) != got {
		t.Errorf("payload %s, resque-scheduler pushed %s", p, got)
	}
}

// A schedule file over MaxFileSize is refused before it is read, one over
// MaxEntries entries before its entries are parsed; both with one line
// naming the limit.
func TestScheduleFileLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yml")
	entry := "tick:\n  every: 1m\n  class: Tick\n  queue: q\n"
	data := []byte(entry + strings.Repeat("# padding\n", schedule.MaxFileSize/10+1))
	if err := os.WriteFile(big, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := schedule.ParseFile(big)
	if err == nil || !strings.Contains(err.Error(), "over the 4 MiB limit") || strings.Contains(err.Error(), "\n") {
		t.Errorf("ParseFile(%d bytes) = %v", len(data), err)
	}
	if _, err := schedule.LoadFile(big, ""); err == nil {
		t.Error("LoadFile read a file over the limit")
	}
	if _, err := schedule.Parse(data); err == nil {
		t.Error("Parse took data over the limit")
	}
	var b strings.Builder
	for i := range schedule.MaxEntries + 1 {
		fmt.Fprintf(&b, "e%d: {every: 1m, class: C, queue: q}\n", i)
	}
	many := filepath.Join(dir, "many.yml")
	if err := os.WriteFile(many, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = schedule.ParseFile(many)
	if err == nil || !strings.Contains(err.Error(), "10001 entries: over the limit of 10000") {
		t.Errorf("ParseFile(%d entries) = %v", schedule.MaxEntries+1, err)
	}
	// at the limits the file is read
	ok := filepath.Join(dir, "ok.yml")
	if err := os.WriteFile(ok, []byte(entry+strings.Repeat("#", schedule.MaxFileSize-len(entry)-1)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if entries, err := schedule.ParseFile(ok); err != nil || len(entries) != 1 {
		t.Errorf("a file of exactly %d bytes: %d entries, %v", schedule.MaxFileSize, len(entries), err)
	}
}
