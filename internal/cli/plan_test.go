package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func (e *cliEnv) plan(args ...string) (int, string, string) {
	e.t.Helper()
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	full := append([]string{args[0]}, e.redisArgs()...)
	code := runCommand(context.Background(), planCommand(), append(full, args[1:]...), stdout, stderr)
	return code, stdout.String(), stderr.String()
}

func TestPlanCommand(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	k := e.client.Keys()
	code, out, errOut := e.plan("add", "--queue", "mail", "--class", "Digest", "--args", `[1, "two"]`, "--every", "5m", "--id", "digest")
	if code != 0 || !strings.HasPrefix(out, "digest\tnext run ") {
		t.Fatalf("add: %d %q %q", code, out, errOut)
	}
	code, out, errOut = e.plan("add", "--json", "--queue", "reports", "--class", "Monthly", "--period", "P1M",
		"--start", "2026-01-31T09:00:00Z", "--misfire", "catch-up", "--unique-id", "monthly")
	var added planJSON
	if err := json.Unmarshal([]byte(out), &added); code != 0 || err != nil || len(added.ID) != 32 ||
		added.Recurrence != "period P0Y1M0DT0H0M0S" || added.Misfire != "catch-up" || added.UniqueID != "monthly" ||
		!strings.Contains(out, `"unique_id": "monthly"`) {
		t.Fatalf("add --json: %d %q %q", code, out, errOut)
	}
	if code, _, errOut = e.plan("add", "--queue", "q", "--class", "Nightly", "--cron", "30 2 * * *", "--timezone", "Europe/Prague", "--id", "nightly"); code != 0 {
		t.Fatalf("add --cron: %d %q", code, errOut)
	}
	// a resque-v3 PHP plan
	e.do("SET", k.Plan("1506092109.1235"), `{"class":"Php_Job","args":{"a":1},"queue":"php","id":1506092109.1235,"nextRun":1506092400,"recurrenceInterval":"P0Y0M0DT0H5M0S"}`)
	e.do("ZADD", k.PlanSchedule(), 1506092400, 1506092400)
	e.do("RPUSH", k.PlanSlot(1506092400), "1506092109.1235")

	code, out, _ = e.plan("list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 5 || !strings.HasPrefix(lines[0], "ID ") || !strings.HasPrefix(lines[1], "1506092109.1235 ") || !strings.Contains(lines[1], " Php_Job  php ") ||
		!strings.Contains(out, "cron 30 2 * * * (Europe/Prague)") || !strings.Contains(lines[1], "2017-09-22 15:00:00 UTC") {
		t.Fatalf("list: %d\n%s", code, out)
	}
	code, out, _ = e.plan("list", "--json")
	var rows listJSON[planJSON]
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || rows.Total != 4 || len(rows.Items) != 4 || rows.Items[0].Misfire != "coalesce" ||
		*rows.Items[0].NextRunAt != "2017-09-22T15:00:00Z" || rows.Items[0].NextRunAtUnix != 1506092400 {
		t.Fatalf("list --json: %d %v\n%s", code, err, out)
	}

	code, out, _ = e.plan("show", "--next", "3", added.ID)
	if code != 0 || !strings.Contains(out, "recurrence  period P0Y1M0DT0H0M0S") ||
		!strings.Contains(out, "upcoming    ") || !strings.Contains(out, `stored      {"class":"Monthly","args":[],"queue":"reports","unique":{"uid":"monthly"}`) {
		t.Fatalf("show: %d\n%s", code, out)
	}
	var shown planJSON
	code, out, _ = e.plan("show", "--json", "--next", "4", "nightly")
	if err := json.Unmarshal([]byte(out), &shown); code != 0 || err != nil || len(shown.Upcoming) != 4 || shown.Timezone != "Europe/Prague" ||
		!strings.HasPrefix(string(jsonLine(shown.Stored)), `{"class":"Nightly","args":[],"queue":"q","id":"nightly"`) {
		t.Fatalf("show --json: %d %v\n%s", code, err, out)
	}
	for i := 1; i < 4; i++ {
		a, _ := time.Parse(time.RFC3339, shown.Upcoming[i-1])
		b, _ := time.Parse(time.RFC3339, shown.Upcoming[i])
		if d := b.Sub(a); d < 23*time.Hour || d > 25*time.Hour {
			t.Errorf("nightly slots %v", shown.Upcoming)
		}
	}

	if code, out, _ = e.plan("remove", "1506092109.1235"); code != 0 || out != "removed 1506092109.1235\n" {
		t.Fatalf("remove: %d %q", code, out)
	}
	if n := e.do2("EXISTS", k.Plan("1506092109.1235"), k.PlanSlot(1506092400)); n != 0 {
		t.Errorf("remove left %d keys", n)
	}
	code, _, errOut = e.plan("remove", "1506092109.1235")
	if code != ExitUsage || noHint(errOut) != "resque-go: no plan \"1506092109.1235\" (plan list shows them)\n" {
		t.Errorf("remove again: %d %q", code, errOut)
	}
	if code, out, _ = e.plan("remove", "--json", "digest"); code != 0 || strings.Join(strings.Fields(out), "") != `{"id":"digest","removed":true}` {
		t.Errorf("remove --json: %d %q", code, out)
	}
}

func (e *cliEnv) do2(cmd string, args ...any) int64 {
	e.t.Helper()
	v, err := e.client.Do(context.Background(), cmd, args...)
	if err != nil {
		e.t.Fatal(err)
	}
	return v.(int64)
}

func TestPlanCommandUsageErrors(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	if code, _, _ := e.plan("add", "--queue", "q", "--class", "C", "--every", "1m", "--id", "taken"); code != 0 {
		t.Fatal("add")
	}
	for _, args := range [][]string{
		{"add", "--class", "C", "--every", "1m"},
		{"add", "--queue", "q", "--class", "C"},
		{"add", "--queue", "q", "--class", "C", "--every", "1m", "--cron", "* * * * *"},
		{"add", "--queue", "q", "--class", "C", "--every", "1.5s"},
		{"add", "--queue", "q", "--class", "C", "--every", "soon"},
		{"add", "--queue", "q", "--class", "C", "--period", "P1X"},
		{"add", "--queue", "q", "--class", "C", "--period", "P0D"},
		{"add", "--queue", "q", "--class", "C", "--cron", "61 * * * *"},
		{"add", "--queue", "q", "--class", "C", "--cron", "0 0 30 2 *"},
		{"add", "--queue", "q", "--class", "C", "--cron", "0 3 * * *", "--timezone", "Mars/Base"},
		{"add", "--queue", "q", "--class", "C", "--every", "1m", "--timezone", "Europe/Prague"},
		{"add", "--queue", "q", "--class", "C", "--every", "1m", "--misfire", "often"},
		{"add", "--queue", "q", "--class", "C", "--every", "1m", "--args", "5"},
		{"add", "--queue", "q", "--class", "C", "--every", "1m", "--start", "tomorrow"},
		{"add", "--queue", "q", "--class", "C", "--every", "1m", "--unique-id", ""},
		{"add", "--queue", "a,b", "--class", "C", "--every", "1m"},
		{"add", "--queue", "q", "--class", "C", "--every", "1m", "--id", "taken"},
		{"add", "--queue", "q", "--class", "C", "--every", "1m", "extra"},
		{"list", "x"}, {"show"}, {"show", "a", "b"}, {"show", "nope"}, {"show", "--next", "-1", "taken"},
		{"remove"}, {"remove", "nope"},
	} {
		code, out, errOut := e.plan(args...)
		if code != ExitUsage || out != "" || !strings.HasPrefix(errOut, "resque-go: ") || strings.Count(noHint(errOut), "\n") != 1 {
			t.Errorf("plan %q: exit %d, stdout %q, stderr %q; want 2 and one line", args, code, out, errOut)
		}
	}
	if code, _, _ := e.plan("nope"); code != ExitUsage {
		t.Errorf("plan nope: exit %d", code)
	}
}

func TestPlanCommandRedisErrorHidesPassword(t *testing.T) {
	t.Parallel()
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	code := runCommand(context.Background(), planCommand(),
		[]string{"list", "--redis", "redis://:sekrit@127.0.0.1:1/0"}, stdout, stderr)
	msg := stderr.String()
	if code != ExitFailure || strings.Contains(msg, "sekrit") || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "xxxxx") {
		t.Errorf("exit %d, stderr %q: want 1, one line, password hidden", code, msg)
	}
}
