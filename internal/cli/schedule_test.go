package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/scheduleio"
)

const (
	goodScheduleFile = "../../schedule/testdata/resque_schedule.yml"
	badScheduleFile  = "../../schedule/testdata/bad_schedule.yml"
)

// spaces is a tabwriter's padding.
var spaces = regexp.MustCompile(`  +`)

func runSchedule(args ...string) (int, string, string) {
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	code := runCommand(context.Background(), scheduleCommand(), args, stdout, stderr)
	return code, stdout.String(), stderr.String()
}

// schedule runs a subcommand against the test server (flags before
// arguments).
func (e *cliEnv) schedule(sub string, args ...string) (int, string, string) {
	return runSchedule(append(append([]string{sub}, e.redisArgs()...), args...)...)
}

func TestScheduleValidate(t *testing.T) {
	t.Parallel()
	code, out, errOut := runSchedule("validate", goodScheduleFile)
	if code != 0 || errOut != "" {
		t.Fatalf("validate: %d %s", code, errOut)
	}
	for _, want := range []string{
		"NAME ", "queue_documents_for_indexing     cron 0 3 * * * Europe/Prague  high ",
		"production_only ", `no (rails_env "production, staging")`,
		"ImportOrdersManual ", "manual",
		"resque_schedule.yml: 9 entries, 5 fired with no --environment (an entry with a rails_env needs one)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runSchedule("validate", "--json", "--environment", "production", goodScheduleFile)
	var validated struct {
		Items []struct {
			Name, When string
			Next       string `json:"next_run_at"`
			Loaded     bool
			Args       json.RawMessage
		}
		Total       int
		Environment string
	}
	if err := json.Unmarshal([]byte(out), &validated); code != 0 || err != nil || len(validated.Items) != 9 || validated.Total != 9 ||
		validated.Environment != "production" {
		t.Fatalf("validate --json: %d %v\n%s", code, err, out)
	}
	if r := validated.Items[6]; r.Name != "production_only" || !r.Loaded || r.When != "every 1h" || !strings.HasSuffix(r.Next, "Z") || string(r.Args) != "[]" {
		t.Errorf("row %+v", r)
	}

	code, out, errOut = runSchedule("validate", badScheduleFile)
	if code != ExitUsage || out != "" || strings.Count(noHint(errOut), "\n") != 1 ||
		!strings.HasPrefix(errOut, "resque-go: schedule: "+badScheduleFile+": 8 bad entries: schedule \"no_queue\": queue: missing") {
		t.Errorf("bad file: %d %q %q", code, out, errOut)
	}
	for _, args := range [][]string{{"validate"}, {"validate", "a", "b"}, {"validate", "nope.yml"}} {
		if code, _, errOut := runSchedule(args...); code != ExitUsage || strings.Count(noHint(errOut), "\n") != 1 {
			t.Errorf("%v: %d %q", args, code, errOut)
		}
	}
}

func TestScheduleListShow(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	k := e.client.Keys()
	e.do("SET", k.SchedulerMasterLock(""), "otherhost:4242", "EX", 100)
	e.do("HSET", k.PersistentSchedules(),
		"persisted_every_5m", `{"class":"MailJob","every":"5m","queue":"mail","args":["dyn",3.5],"description":"persisted via set_schedule"}`,
		"CancelAbandonedOrders", `{"class":"Cancel2","cron":"0 * * * *","queue":"orders2"}`,
		"broken", `{"class":"X","every":"soon","queue":"q"}`)
	e.do("HSET", k.LastEnqueuedAt(), "persisted_every_5m", "2026-11-21 21:26:15 +0000")

	code, out, errOut := e.schedule("list", "--schedule", goodScheduleFile)
	if code != 0 {
		t.Fatalf("list: %d %s", code, errOut)
	}
	out = spaces.ReplaceAllString(out, "  ")
	for _, want := range []string{
		"master: otherhost:4242 (lock " + e.ns + ":" + e.ns + ":resque_scheduler_master_lock, ",
		"\nCancelAbandonedOrders  cron 0 * * * *  orders2  Cancel2  redis  -  2", // the persistent one replaces the file's
		"\npersisted_every_5m  every 5m  mail  MailJob  redis  2026-11-21 21:26:15 UTC  2",
		"\nevery_thirty  every 30s  default  Ping  file  -  2",
		"not loaded: schedule \"broken\": every: \"soon\" is not a duration",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "production_only") {
		t.Errorf("an entry of another environment is listed:\n%s", out)
	}

	code, out, _ = e.schedule("list", "--json")
	var l struct {
		Master    string
		Schedules []struct {
			Name, When, Source string
			LastEnqueuedAt     string `json:"last_enqueued_at"`
			LastEnqueuedAtRaw  string `json:"last_enqueued_at_raw"`
		} `json:"items"`
		Total  int
		Errors []struct{ Name, Error string } `json:"bad_schedules"`
	}
	if err := json.Unmarshal([]byte(out), &l); code != 0 || err != nil || l.Master != "otherhost:4242" || len(l.Schedules) != 2 || l.Total != 2 || len(l.Errors) != 1 {
		t.Fatalf("list --json: %d %v\n%s", code, err, out)
	}
	if s := l.Schedules[1]; s.Name != "persisted_every_5m" || s.Source != "redis" || s.LastEnqueuedAt != "2026-11-21T21:26:15Z" ||
		s.LastEnqueuedAtRaw != "2026-11-21 21:26:15 +0000" {
		t.Errorf("%+v", s)
	}

	code, out, _ = e.schedule("show", "persisted_every_5m")
	for _, want := range []string{"when:           every 5m\n", "args:           [\"dyn\",3.5]\n", "description:    persisted via set_schedule\n", "master:         otherhost:4242"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("show: %d lacks %q:\n%s", code, want, out)
		}
	}
	code, out, _ = e.schedule("show", "--json", "--schedule", goodScheduleFile, "check_daemon")
	var s struct {
		Name, Every, When string
		Next              string `json:"next_run_at"`
		Options           json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &s); code != 0 || err != nil || s.Every != "30s" || strings.Join(strings.Fields(string(s.Options)), "") != `{"first_in":"120s"}` || s.Next == "" {
		t.Errorf("show --json: %d %v\n%s", code, err, out)
	}
	if code, _, errOut = e.schedule("show", "nope"); code != ExitUsage || !strings.Contains(errOut, `no schedule named "nope"`) {
		t.Errorf("show nope: %d %q", code, errOut)
	}
	if code, _, _ = e.schedule("show", "broken"); code != ExitFailure {
		t.Errorf("show broken: %d", code)
	}
	if code, _, errOut = e.schedule("list", "--schedule", badScheduleFile); code != ExitUsage || strings.Count(noHint(errOut), "\n") != 1 {
		t.Errorf("list with a bad file: %d %q", code, errOut)
	}
}

func TestScheduleRefusedConnection(t *testing.T) {
	t.Parallel()
	code, _, errOut := runSchedule("list", "--redis", "redis://127.0.0.1:1")
	if code != ExitFailure || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "cannot reach redis at redis://127.0.0.1:1") {
		t.Errorf("%d %q", code, errOut)
	}
}

// The flags a scheduler command takes (resque-scheduler's environment
// variables) make a schedule.Config.
func TestRecurringScheduleConfig(t *testing.T) {
	t.Parallel()
	run := func(args ...string) (scheduleio.Config, int, string) {
		var cfg scheduleio.Config
		cmd := &ucli.Command{Name: "sched", Flags: recurringScheduleFlags(), Action: func(c *ucli.Context) error {
			var err error
			cfg, err = recurringScheduleConfig(c)
			return err
		}}
		stdout, stderr := newSyncBuffer(), newSyncBuffer()
		code := runCommand(context.Background(), cmd, args, stdout, stderr)
		return cfg, code, stderr.String()
	}
	cfg, code, errOut := run("--schedule", goodScheduleFile, "-E", "production", "-D", "--lock-timeout", "60", "--lock-prefix", "MyApp", "--schedule-interval", "500ms")
	if code != 0 || len(cfg.Entries) != 8 || cfg.Environment != "production" || !cfg.Dynamic || cfg.LockTimeout != time.Minute ||
		cfg.LockPrefix != "MyApp" || cfg.Interval != 500*time.Millisecond {
		t.Errorf("%d %s %+v", code, errOut, cfg)
	}
	cfg, code, _ = run()
	if code != 0 || cfg.Entries != nil || cfg.LockTimeout != 180*time.Second || cfg.Interval != 5*time.Second {
		t.Errorf("defaults: %d %+v", code, cfg)
	}
	for _, args := range [][]string{{"--schedule", badScheduleFile}, {"--lock-timeout", "0.5"}, {"--schedule-interval", "0"}, {"--lock-timeout", "soon"}} {
		if _, code, errOut := run(args...); code != ExitUsage || strings.Count(noHint(errOut), "\n") != 1 {
			t.Errorf("%v: %d %q", args, code, errOut)
		}
	}
}

// schedule validate refuses a file over the size limit with one line
// and exit 2, before reading it.
func TestScheduleValidateRefusesAHugeFile(t *testing.T) {
	t.Parallel()
	big := filepath.Join(t.TempDir(), "big.yml")
	if err := os.WriteFile(big, bytes.Repeat([]byte("# padding\n"), 5<<20/10), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runSchedule("validate", big)
	if code != ExitUsage || out != "" || strings.Count(strings.TrimSpace(noHint(errOut)), "\n") != 0 || !strings.Contains(errOut, "limit of a schedule file") {
		t.Errorf("validate: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
