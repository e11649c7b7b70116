package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/protocol"
)

func (e *cliEnv) delayedCmd(args ...string) (int, string, string) {
	e.t.Helper()
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	full := append([]string{args[0]}, e.redisArgs()...)
	code := runCommand(context.Background(), delayedCommand(), append(full, args[1:]...), stdout, stderr)
	return code, stdout.String(), stderr.String()
}

func (e *cliEnv) delay(queue, payload string, ts int64) {
	e.t.Helper()
	if err := delayedio.EnqueueAt(context.Background(), e.client, queue, []byte(payload), time.Unix(ts, 0)); err != nil {
		e.t.Fatal(err)
	}
}

func TestDelayedCommandInspects(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	e.delay("mail", `{"class":"Mail","args":[1,"two"]}`, 1795299965)
	e.delay("mail", `{"class":"Other","args":[]}`, 1795299965)
	e.delay("high", `{"class":"Mail","args":[3],"id":"abc","queue_time":1.5}`, 1795300025)
	e.do("RPUSH", e.client.Keys().Delayed(1795300025), "garbage")

	code, out, _ := e.delayedCmd("list")
	want := "DUE                      QUEUE  CLASS       ARGS\n" +
		"2026-11-21 22:26:05 UTC  mail   Mail        [1,\"two\"]\n" +
		"2026-11-21 22:26:05 UTC  mail   Other       []\n" +
		"2026-11-21 22:27:05 UTC  high   Mail        [3]\n" +
		"2026-11-21 22:27:05 UTC         (bad item)  garbage\n"
	if code != 0 || out != want {
		t.Errorf("list: %d\n%s\nwant\n%s", code, out, want)
	}
	code, out, errOut := e.delayedCmd("list", "--limit", "1", "--from", "2026-11-21T22:26:05Z", "--to", "1795300025", "--class", "Mail")
	if code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(errOut, "--offset 1") {
		t.Errorf("list --limit 1: %d %q %q", code, out, errOut)
	}
	code, out, _ = e.delayedCmd("list", "--json", "--queue", "high")
	var list struct {
		Items []map[string]any
		Total int
	}
	err := json.Unmarshal([]byte(out), &list)
	items := list.Items
	if code != 0 || err != nil || len(items) != 1 || list.Total != 1 ||
		items[0]["due_at_unix"] != 1795300025.0 || items[0]["due_at"] != "2026-11-21T22:27:05Z" || items[0]["position"] != 0.0 ||
		items[0]["payload"].(map[string]any)["id"] != "abc" {
		t.Errorf("list --json: %d %v\n%s", code, err, out)
	}
	if code, out, _ = e.delayedCmd("count"); code != 0 || out != "4 items in 2 buckets\n" {
		t.Errorf("count: %d %q", code, out)
	}
	code, out, _ = e.delayedCmd("count", "--json", "--class", "Mail", "--queue", "mail", "--args", `[1, "two"]`)
	if code != 0 || strings.Join(strings.Fields(out), "") != `{"buckets":1,"total":1}` {
		t.Errorf("count --args: %d %q", code, out)
	}
	// the id-bearing item is not in the index: a hint names --scan
	code, out, errOut = e.delayedCmd("count", "--class", "Mail", "--queue", "high", "--args", `[3]`)
	if code != 0 || out != "0 items in 0 buckets\n" || !strings.Contains(errOut, "--scan") {
		t.Errorf("count --args, id-bearing: %d %q %q", code, out, errOut)
	}
	if code, out, _ = e.delayedCmd("count", "--scan", "--class", "Mail", "--args", `[3]`); code != 0 || out != "1 item in 1 bucket\n" {
		t.Errorf("count --scan: %d %q", code, out)
	}
	code, out, _ = e.delayedCmd("show", "2026-11-21T22:27:05Z")
	if code != 0 || !strings.HasPrefix(out, "#0 Mail queue=high\n{\n  \"class\": \"Mail\",\n  \"args\": [\n    3\n  ],\n  \"queue\": \"high\",") ||
		!strings.Contains(out, "#1 (bad item: ") || !strings.HasSuffix(out, "\ngarbage\n\n") {
		t.Errorf("show: %d\n%s", code, out)
	}
	code, out, _ = e.delayedCmd("show", "--json", "1795299965")
	var bucket struct {
		DueAt     string `json:"due_at"`
		DueAtUnix int64  `json:"due_at_unix"`
		Items     []struct {
			Payload json.RawMessage
		}
		Total int
	}
	if err := json.Unmarshal([]byte(out), &bucket); code != 0 || err != nil || bucket.DueAtUnix != 1795299965 || len(bucket.Items) != 2 ||
		bucket.Total != 2 || bucket.DueAt != "2026-11-21T22:26:05Z" ||
		string(jsonLine(bucket.Items[0].Payload)) != `{"class":"Mail","args":[1,"two"],"queue":"mail"}` {
		t.Errorf("show --json: %d %v\n%s", code, err, out)
	}
	if code, out, errOut = e.delayedCmd("show", "1"); code != 0 || out != "" || !strings.Contains(errOut, "no delayed items due at 1970-01-01 00:00:01 UTC") {
		t.Errorf("show empty: %d %q %q", code, out, errOut)
	}
}

func TestDelayedCommandRemovesAndClears(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	plain := func(class, args string) string {
		p, _ := protocol.NewPayload(class, []byte(args), protocol.EnqueueOptions{Plain: true})
		return string(p)
	}
	e.delay("mail", plain("Mail", `[1]`), 100)
	e.delay("mail", plain("Mail", `[1]`), 200)
	e.delay("mail", plain("Mail", `[2]`), 200)
	e.delay("mail", plain("Other", `[]`), 300)
	e.delay("mail", `{"class":"Mail","args":[2],"id":"x"}`, 300)

	code, out, _ := e.delayedCmd("remove", "--class", "Mail", "--queue", "mail", "--args", "[1]")
	if code != 0 || out != "removed 2 items (2 index entries, 1 bucket taken off the schedule)\n" {
		t.Fatalf("remove --args: %d %q", code, out)
	}
	code, out, _ = e.delayedCmd("remove", "--json", "--from", "250", "--class", "Mail")
	var r delayed.Removal
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r != (delayed.Removal{Removed: 1, Unindexed: 1}) {
		t.Fatalf("remove --from --class: %d %q", code, out)
	}
	code, _, errOut := e.delayedCmd("clear")
	if code != ExitUsage || noHint(errOut) != "resque-go: clear deletes every delayed item: add --yes to confirm\n" {
		t.Fatalf("clear without --yes: %d %q", code, errOut)
	}
	if code, out, _ = e.delayedCmd("clear", "--yes"); code != 0 || out != "removed 2 items (2 index entries, 2 buckets taken off the schedule)\n" {
		t.Fatalf("clear --yes: %d %q", code, out)
	}
	if keys, _ := e.client.ScanKeys(context.Background(), e.ns+":*"); len(keys) != 0 {
		t.Errorf("keys left after clear: %v", keys)
	}
}

func TestDelayedCommandUsageErrors(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	for _, args := range [][]string{
		{"list", "x"}, {"list", "--from", "yesterday"}, {"list", "--to", "1.5"}, {"list", "--from", "20", "--to", "10"},
		{"list", "--limit", "-1"}, {"list", "--args", "[1"}, {"list", "--args", "[1]"}, {"list", "--class", "C", "--args", "[1]"},
		{"list", "--scan"}, {"list", "--class", ""}, {"count", "--queue", ""},
		{"show"}, {"show", "a", "b"}, {"show", "tomorrow"},
		{"remove"}, {"remove", "--args", "[1]", "--scan"}, {"remove", "--class", "C", "x"},
		{"clear"}, {"clear", "x", "--yes"}, {"nope"},
	} {
		code, out, errOut := e.delayedCmd(args...)
		if code != ExitUsage || out != "" || !strings.HasPrefix(errOut, "resque-go: ") {
			t.Errorf("delayed %q: exit %d, stdout %q, stderr %q; want 2 and a message", args, code, out, errOut)
		}
	}
}

func TestDelayedCommandRefusedConnection(t *testing.T) {
	t.Parallel()
	for _, sub := range []string{"list", "count", "remove --class C", "clear --yes", "show 1"} {
		args := strings.Fields(sub)
		stdout, stderr := newSyncBuffer(), newSyncBuffer()
		full := append([]string{args[0], "--redis", "redis://:sekrit@127.0.0.1:1/0"}, args[1:]...)
		code := runCommand(context.Background(), delayedCommand(), full, stdout, stderr)
		msg := stderr.String()
		if code != ExitFailure || strings.Contains(msg, "sekrit") || strings.Count(msg, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q: want 1, one line, password hidden", sub, code, msg)
		}
	}
}
