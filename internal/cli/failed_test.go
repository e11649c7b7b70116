package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/protocol"
)

// failed runs `failed <sub> <redis flags> args...` in-process.
func (e *cliEnv) failed(sub string, args ...string) (code int, stdout, stderr string) {
	e.t.Helper()
	out, errOut := newSyncBuffer(), newSyncBuffer()
	code = runCommand(context.Background(), failedCommand(), append(append([]string{sub}, e.redisArgs()...), args...), out, errOut)
	return code, out.String(), errOut.String()
}

func (e *cliEnv) list(key string) []string {
	e.t.Helper()
	items, err := e.client.List(context.Background(), key, 0, -1)
	if err != nil {
		e.t.Fatal(err)
	}
	out := make([]string, len(items))
	for i, b := range items {
		out[i] = string(b)
	}
	return out
}

// pushFailed fills failed with the entries Ruby 3, chrisboulton's
// php-resque and node-resque wrote, then a line of garbage.
func (e *cliEnv) pushFailed() []string {
	e.t.Helper()
	var raws []string
	for _, dir := range []string{"ruby-resque-3.0.0", "php-resque-chrisboulton", "node-resque-9.7.1"} {
		raws = append(raws, fixtures.MustLoad(dir, "failure").List("resque:failed")[0])
	}
	raws = append(raws, "not json")
	for _, r := range raws {
		e.do("RPUSH", e.client.Keys().Failed(), r)
	}
	return raws
}

func TestFailedListAndShow(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	e.pushFailed()

	code, out, errOut := e.failed("list")
	if code != ExitOK {
		t.Fatalf("list: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"INDEX", "FAILED AT", "QUEUE", "CLASS", "EXCEPTION", "ERROR",
		"2026-11-21 21:23:48 UTC", "2026-11-21 21:26:55 UTC", "2026-11-21 21:29:37 UTC",
		"Fail_Job", "RuntimeError", "boom <1>", "unreadable entry", "4 shown, 4 entries in the failed list"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = e.failed("list", "--json", "--class", "FailJob", "--queue", "mail", "--exception", "Err")
	var listed struct {
		Total   int
		Entries []struct {
			Index       int
			Class       string
			Exception   string
			FailedAt    string `json:"failed_at"`
			FailedAtRaw string `json:"failed_at_raw"`
			Payload     json.RawMessage
			Backtrace   []string
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &listed); code != ExitOK || err != nil {
		t.Fatalf("list --json: exit %d, %v: %s%s", code, err, out, errOut)
	}
	// --exception is a substring: RuntimeError (Ruby) and Error (node)
	var payload bytes.Buffer
	if len(listed.Entries) == 2 {
		_ = json.Compact(&payload, listed.Entries[1].Payload)
	}
	if listed.Total != 4 || len(listed.Entries) != 2 || listed.Entries[0].Exception != "RuntimeError" ||
		listed.Entries[1].Index != 2 || listed.Entries[1].Exception != "Error" ||
		!strings.HasPrefix(payload.String(), `{"class":"FailJob","queue":"mail"`) || len(listed.Entries[1].Backtrace) != 4 ||
		listed.Entries[1].FailedAt != "2026-11-21T21:29:37Z" || !strings.HasPrefix(listed.Entries[1].FailedAtRaw, "Sat Nov 21 2026 21:29:37 GMT+0000") {
		t.Errorf("list --json --class FailJob --exception Err:\n%s", out)
	}

	code, out, _ = e.failed("list", "--offset", "1", "--limit", "2")
	if code != ExitOK || !strings.Contains(out, "Fail_Job") || strings.Contains(out, "RuntimeError") || strings.Contains(out, "unreadable") ||
		!strings.Contains(out, "2 shown, 4 entries") {
		t.Errorf("list --offset 1 --limit 2: exit %d:\n%s", code, out)
	}

	code, out, errOut = e.failed("show", "1", "0")
	if code != ExitOK {
		t.Fatalf("show: exit %d: %s", code, errOut)
	}
	php := strings.Index(out, "class:        Fail_Job")
	ruby := strings.Index(out, "class:        FailJob")
	if php < 0 || ruby < php || !strings.Contains(out, `#4 {main}`) || !strings.Contains(out, "worker:       vm:25655:high,mail") ||
		!strings.Contains(out, `"id":"`) {
		t.Errorf("show 1 0:\n%s", out)
	}

	code, out, _ = e.failed("show", "--json", "3")
	var shown struct {
		Items []struct {
			Unreadable bool
			Error      string
		}
		Total int
	}
	if err := json.Unmarshal([]byte(out), &shown); code != ExitOK || err != nil || shown.Total != 1 || len(shown.Items) != 1 || !shown.Items[0].Unreadable {
		t.Errorf("show --json 3: exit %d, %v: %s", code, err, out)
	}

	if code, _, errOut = e.failed("show", "9"); code != ExitUsage || !strings.Contains(errOut, "no entry 9: the failed list has 4 entries (0-3)") {
		t.Errorf("show 9: exit %d: %s", code, errOut)
	}
}

// retry, remove and clear change the list as Ruby does; the garbage entry
// can be removed but not retried.
func TestFailedRetryRemoveClear(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	k := e.client.Keys()
	raws := e.pushFailed()

	code, out, errOut := e.failed("retry", "0", "2")
	if code != ExitOK || !strings.Contains(out, "retried 2") {
		t.Fatalf("retry 0 2: exit %d: %s%s", code, out, errOut)
	}
	failed := e.list(k.Failed())
	for _, i := range []int{0, 2} {
		if !strings.HasPrefix(failed[i], strings.TrimSuffix(raws[i], "}")+`,"retried_at":"`) || !strings.HasSuffix(failed[i], ` UTC"}`) {
			t.Errorf("entry %d after retry: %s", i, failed[i])
		}
	}
	if failed[1] != raws[1] || failed[3] != raws[3] {
		t.Errorf("entries not selected changed: %q", failed)
	}
	queued := e.list(k.Queue("mail"))
	if len(queued) != 2 || !strings.HasPrefix(queued[0], `{"class":"FailJob","args":[1,`) || !strings.HasPrefix(queued[1], `{"class":"FailJob","queue":"mail"`) {
		t.Errorf("queue mail after retry: %q", queued)
	}

	if code, out, _ = e.failed("retry", "--json", "--all"); code != ExitOK || !strings.Contains(out, `"skipped": 1`) || !strings.Contains(out, `"done": 3`) {
		t.Errorf("retry --all: exit %d:\n%s", code, out)
	}
	if n := len(e.list(k.Queue("mail"))); n != 5 {
		t.Errorf("queue mail has %d jobs after retry --all, want 5", n)
	}

	if code, out, errOut = e.failed("remove", "3", "1"); code != ExitOK || !strings.Contains(out, "removed 2") {
		t.Errorf("remove 3 1: exit %d: %s%s", code, out, errOut)
	}
	failed = e.list(k.Failed())
	if len(failed) != 2 || !strings.Contains(failed[0], `"FailJob","args"`) || !strings.Contains(failed[1], `"worker":"vm:2568"`) {
		t.Errorf("after remove 3 1: %q", failed)
	}

	if code, out, _ = e.failed("clear", "--queue", "other", "--yes"); code != ExitOK || !strings.Contains(out, "removed 0") {
		t.Errorf("clear --queue other: exit %d: %s", code, out)
	}
	if code, out, _ = e.failed("clear", "--yes"); code != ExitOK || !strings.Contains(out, "removed 2") {
		t.Errorf("clear: exit %d: %s", code, out)
	}
	if n := len(e.list(k.Failed())); n != 0 {
		t.Errorf("failed has %d entries after clear", n)
	}
}

// Every selected index is checked before anything changes: one that does
// not match the filters, or cannot be retried, stops the whole command with
// nothing done. An index given twice is acted on once.
func TestFailedChecksEveryIndexFirst(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	k := e.client.Keys()
	raws := e.pushFailed()
	unchanged := func(what string) {
		t.Helper()
		if got := e.list(k.Failed()); strings.Join(got, "\n") != strings.Join(raws, "\n") {
			t.Errorf("%s: failed changed: %q", what, got)
		}
		if got := e.list(k.Queue("mail")); len(got) != 0 {
			t.Errorf("%s: jobs queued: %q", what, got)
		}
	}

	code, _, errOut := e.failed("retry", "--class", "FailJob", "0", "1")
	if code != ExitUsage || !strings.Contains(errOut, "entry 1 (Fail_Job on mail) does not match") {
		t.Errorf("retry --class FailJob 0 1: exit %d: %s", code, errOut)
	}
	unchanged("a filter mismatch")

	code, _, errOut = e.failed("retry", "0", "3")
	if code != ExitFailure || !strings.Contains(errOut, "no queue or payload") {
		t.Errorf("retry 0 3: exit %d: %s", code, errOut)
	}
	unchanged("an unretryable entry")

	code, out, errOut := e.failed("retry", "2", "2", "2")
	if code != ExitOK || !strings.Contains(out, "retried 1") {
		t.Errorf("retry 2 2 2: exit %d: %s%s", code, out, errOut)
	}
	if got := e.list(k.Queue("mail")); len(got) != 1 {
		t.Errorf("retry 2 2 2 queued %d jobs, want 1", len(got))
	}
	code, out, errOut = e.failed("remove", "0", "0")
	if code != ExitOK || !strings.Contains(out, "removed 1") {
		t.Errorf("remove 0 0: exit %d: %s%s", code, out, errOut)
	}
	if got := e.list(k.Failed()); len(got) != 3 || got[0] != raws[1] {
		t.Errorf("after remove 0 0: %q", got)
	}
}

func TestFailedUsageErrors(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	e.pushFailed()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"retry"}, "needs INDEX... or --all"},
		{[]string{"remove", "--all", "0"}, "not both"},
		{[]string{"retry", "0", "-x"}, "flag provided but not defined: -x"},
		{[]string{"remove", "-1"}, "-1"},
		{[]string{"remove", "0", "-1"}, `"-1" is not an entry index`},
		{[]string{"remove", "0", "--all"}, "not both"},
		{[]string{"show"}, "at least one INDEX"},
		{[]string{"show", "x"}, `"x" is not an entry index`},
		{[]string{"list", "3"}, "list takes no argument"},
		{[]string{"list", "--limit", "-1"}, "must not be negative"},
		{[]string{"clear", "0"}, "clear takes no index"},
		{[]string{"list", "--limit", "many"}, "limit"},
		{[]string{"list", "--redis", "ftp://x"}, "ftp"},
	} {
		code, _, errOut := e.failed(tc.args[0], tc.args[1:]...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("failed %v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	if n := len(e.list(e.client.Keys().Failed())); n != 4 {
		t.Errorf("failed has %d entries after usage errors, want 4", n)
	}
}

// An entry resque-go wrote says retried_by "no retry" (no automatic retry
// happened); after a requeue it also has retried_at. show and --json give
// the requeue time and leave the "no retry" out, so that the two do not
// contradict each other.
func TestFailedRequeuedEntryShowsRetriedAtOnly(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	at := time.Date(2026, 11, 28, 14, 5, 3, 0, time.UTC)
	e.do("RPUSH", e.client.Keys().Failed(), protocol.Failure{FailedAt: at, Payload: []byte(`{"class":"Mail","args":[1]}`),
		Exception: "RuntimeError", Error: "boom", Queue: "mail", Worker: "vm:1:mail"}.Encode())
	if code, _, errOut := e.failed("retry", "0"); code != ExitOK {
		t.Fatalf("retry 0: exit %d: %s", code, errOut)
	}
	code, out, _ := e.failed("show", "0")
	if code != ExitOK || !strings.Contains(out, "failed_at:    2026-11-28 14:05:03 UTC\n") || !strings.Contains(out, "retried_at:") ||
		strings.Contains(out, "no retry") {
		t.Errorf("show 0: exit %d:\n%s", code, out)
	}
	code, out, _ = e.failed("show", "--json", "0")
	var shown struct {
		Items []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &shown); code != ExitOK || err != nil || len(shown.Items) != 1 {
		t.Fatalf("show --json 0: exit %d, %v: %s", code, err, out)
	}
	got := shown.Items[0]
	if _, ok := got["retried_by"]; ok || got["failed_at"] != "2026-11-28T14:05:03Z" || got["failed_at_raw"] != "2026/11/28 14:05:03 UTC" {
		t.Errorf("show --json 0: %s", out)
	}
	if s, _ := got["retried_at"].(string); !strings.HasSuffix(s, "Z") {
		t.Errorf("retried_at %v: want an RFC 3339 UTC time\n%s", got["retried_at"], out)
	}
}
