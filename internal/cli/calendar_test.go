package cli

import (
	"context"
	"strings"
	"testing"
)

func (e *cliEnv) calendar(args ...string) (int, string, string) {
	e.t.Helper()
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	full := append([]string{args[0]}, e.redisArgs()...)
	code := runCommand(context.Background(), calendarCommand(), append(full, args[1:]...), stdout, stderr)
	return code, stdout.String(), stderr.String()
}

func TestCalendarAndPauseCommands(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	code, out, errOut := e.calendar("add", "holidays", "--date", "2026-12-25", "--date", "2027-01-01", "--cron", "* * * * 0,6", "--timezone", "Europe/Prague")
	if code != 0 || !strings.Contains(out, "2 dates, 1 cron lines") {
		t.Fatalf("calendar add: %d %q %q", code, out, errOut)
	}
	if code, out, _ = e.calendar("list"); code != 0 || !strings.Contains(out, "holidays") || !strings.Contains(out, "Europe/Prague") {
		t.Fatalf("calendar list: %d %q", code, out)
	}
	if code, out, _ = e.calendar("show", "--json", "holidays"); code != 0 || !strings.Contains(out, `"2027-01-01"`) {
		t.Fatalf("calendar show: %d %q", code, out)
	}
	for _, bad := range [][]string{
		{"add", "holidays", "--date", "2026-12-26"}, // exists
		{"add", "x", "--date", "2026-13-01"},        // not a date
		{"add", "x", "--cron", "* * *"},             // not a cron line
		{"add", "x", "--date", "2026-12-25", "--timezone", "Mars/Base"},
		{"add", "x"}, // excludes nothing
		{"show", "nope"},
		{"remove"},
	} {
		code, out, errOut := e.calendar(bad...)
		if code != 2 || out != "" || !oneLine(errOut) {
			t.Errorf("calendar %v: %d %q %q, want exit 2 and one line", bad, code, out, errOut)
		}
	}
	if code, _, errOut = e.plan("add", "--queue", "q", "--class", "C", "--cron", "0 9 * * *", "--timezone", "Europe/Prague",
		"--exclude-calendar", "holidays", "--misfire", "skip", "--group", "reports", "--id", "nine"); code != 0 {
		t.Fatalf("plan add --exclude-calendar: %d %q", code, errOut)
	}
	if code, _, errOut = e.plan("add", "--queue", "q", "--class", "C", "--every", "5m", "--exclude-calendar", "nope"); code != 2 || !strings.Contains(errOut, "nope") {
		t.Fatalf("plan add on a missing calendar: %d %q", code, errOut)
	}
	code, out, _ = e.plan("show", "nine")
	if code != 0 || !strings.Contains(out, "calendar") || !strings.Contains(out, "group") {
		t.Fatalf("plan show: %d %q", code, out)
	}
	if code, out, _ = e.plan("pause", "--group", "reports"); code != 0 || out != "group reports paused: 1 plans\n" {
		t.Fatalf("plan pause --group: %d %q", code, out)
	}
	if code, out, _ = e.plan("list"); code != 0 || !strings.Contains(out, "(paused)") {
		t.Fatalf("plan list: %d %q", code, out)
	}
	if code, out, _ = e.plan("resume", "nine"); code != 0 || out != "resumed nine\n" {
		t.Fatalf("plan resume ID: %d %q", code, out)
	}
	if code, out, _ = e.plan("resume", "nine"); code != 0 || out != "nine was not paused already\n" {
		t.Fatalf("plan resume again: %d %q", code, out)
	}
	if code, out, _ = e.plan("pause", "nine"); code != 0 || out != "paused nine\n" {
		t.Fatalf("plan pause ID: %d %q", code, out)
	}
	if code, out, _ = e.plan("resume", "--json", "--group", "reports"); code != 0 || !strings.Contains(out, `"resumed": 1`) {
		t.Fatalf("plan resume --group: %d %q", code, out)
	}
	for _, bad := range [][]string{{"pause"}, {"pause", "nope"}, {"resume", "nine", "--group", "g"}, {"pause", "--group", ""}, {"pause", "--group", "a b"}} {
		code, out, errOut := e.plan(bad...)
		if code != 2 || out != "" || !oneLine(errOut) {
			t.Errorf("plan %v: %d %q %q, want exit 2 and one line", bad, code, out, errOut)
		}
	}
	if code, _, errOut = e.calendar("remove", "holidays"); code != 2 || !strings.Contains(errOut, "nine") {
		t.Fatalf("calendar remove in use: %d %q", code, errOut)
	}
	if code, _, _ = e.plan("remove", "nine"); code != 0 {
		t.Fatal("plan remove")
	}
	if code, out, _ = e.calendar("remove", "holidays"); code != 0 || out != "removed calendar holidays\n" {
		t.Fatalf("calendar remove: %d %q", code, out)
	}
}

// oneLine reports whether errOut is one error line (and the usage hint
// the app adds under every usage error).
func oneLine(errOut string) bool {
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	return strings.HasPrefix(lines[0], "resque-go: ") && (len(lines) == 1 || len(lines) == 2 && strings.HasPrefix(lines[1], "Run 'resque-go "))
}
