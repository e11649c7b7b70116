package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/bench"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/worker"
)

// jsonCase is one run of a command with --json.
type jsonCase struct {
	path    string   // the command's words: "queue peek"
	args    []string // flags, then arguments
	list    bool     // prints {"items": [...], "total": N}
	paged   bool     // total may exceed the items shown
	noRedis bool     // takes no Redis flags
}

// Every command that has a --json flag, run against a namespace holding
// what Ruby Resque, resque-scheduler, php-resque and node-resque wrote
// (fixtures/), prints what the CLI reference promises: one JSON object,
// snake_case keys at every depth (stored payloads and args aside), lists
// as {"items": [...], "total": N}, times as RFC 3339 in UTC. A command
// with --json that no case runs fails the test, so a new one gets a case.
func TestJSONOutputsFollowOneConvention(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	e.loadDumps(
		[2]string{"ruby-resque-3.0.0", "failure-requeue"},
		[2]string{"php-resque-chrisboulton", "failure"},
		[2]string{"node-resque-9.7.1", "failure"},
		[2]string{"ruby-resque-3.0.0", "worker-running"},
		[2]string{"ruby-resque-3.0.0", "enqueue"},
		[2]string{"php-resque-resque-master", "enqueue"},
		[2]string{"resque-scheduler-5.0.0", "delayed-enqueue"},
		[2]string{"resque-scheduler-5.0.0", "set-schedule"},
	)
	e.seedPoolRecord()
	cfg := writeMassConfig(t)
	out, errOut := newSyncBuffer(), newSyncBuffer()
	if code := runCommand(context.Background(), enqueueCommand(), append(e.redisArgs(), "--queue", "mail", "--class", "C", "--unique-id", "u1"), out, errOut); code != ExitOK {
		t.Fatalf("enqueue --unique-id: exit %d: %s", code, errOut.String())
	}
	if code := runCommand(context.Background(), enqueueCommand(), append(e.redisArgs(), "--queue", "mail", "--class", "C", "--tag", "t1", "--events"), out, errOut); code != ExitOK {
		t.Fatalf("enqueue --tag --events: exit %d: %s", code, errOut.String())
	}

	// a serial queue's lock, for queue locks and queue unlock
	e.do("SADD", e.client.Keys().Queues(), "serialq")
	e.do("SET", e.client.Keys().SerialLock("serialq"), "0123456789abcdef0123456789abcdef", "PX", 60000)

	// a slot running a job, as a resque-go claim leaves it, for job cancel
	running := "testhost:1:mail"
	k := e.client.Keys()
	for _, cmd := range [][]any{{"SET", k.Worker(running), `{"queue":"mail","run_at":"2026-01-01T00:00:00Z","payload":{"class":"C","args":[]}}`}, {"HSET", k.ClaimSeqs(), running, "1"},
		// ... registered as a resque-go process, for process quiet, resume and stop
		{"SADD", k.Workers(), running}, {"HSET", k.WorkerIntervals(), running, "5"},
		{"SET", k.Process("testhost", 1), `{"pid":1,"host":"testhost","started_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","worker_ids":["testhost:1:mail"],"slots_busy":1,"slots_total":1,"paused":true}`}} {
		if _, err := e.client.Do(context.Background(), cmd[0].(string), cmd[1:]...); err != nil {
			t.Fatal(err)
		}
	}

	var delayedAt string
	cases := []jsonCase{
		{path: "job cancel", args: []string{running}},
		{path: "process list", list: true},
		{path: "process quiet", args: []string{"testhost:1"}},
		{path: "process resume", args: []string{running}},
		{path: "process stop", args: []string{"testhost:1"}},
		{path: "queue list", list: true},
		{path: "queue limits", list: true},
		{path: "queue size", args: []string{"mail"}},
		{path: "queue pause", args: []string{"mail"}},
		{path: "queue resume", args: []string{"mail"}},
		{path: "queue locks", list: true},
		{path: "queue unlock", args: []string{"--token", "0123456789abcdef0123456789abcdef", "serialq"}},
		{path: "queue peek", args: []string{"--limit", "1", "mail"}, list: true, paged: true},
		{path: "failed list", args: []string{"--limit", "2"}, list: true, paged: true},
		{path: "failed show", args: []string{"0", "1", "2"}, list: true},
		{path: "delayed list", list: true},
		{path: "delayed count"},
		{path: "delayed show", list: true},      // TIME: the first due time, filled in below
		{path: "delayed queue-now", list: true}, // TIME: the first due time, filled in below
		{path: "plan add", args: []string{"--queue", "q", "--class", "C", "--every", "5m", "--unique-id", "u", "--id", "p1"}},
		{path: "plan list", list: true},
		{path: "plan show", args: []string{"p1"}},
		{path: "plan pause", args: []string{"p1"}},
		{path: "plan resume", args: []string{"p1"}},
		{path: "plan queue-now", args: []string{"p1"}},
		{path: "calendar add", args: []string{"--date", "2026-12-25", "--cron", "* * * * 0,6", "holidays"}},
		{path: "calendar list", list: true},
		{path: "calendar show", args: []string{"holidays"}},
		{path: "calendar remove", args: []string{"holidays"}},
		{path: "job list", args: []string{"--tag", "t1"}, list: true, paged: true},
		{path: "job events", args: []string{"no-such-id"}, list: true},
		{path: "events tail", list: true},
		{path: "unique list", list: true},
		{path: "unique show", args: []string{"u1"}},
		{path: "group show", args: []string{"g1"}},
		{path: "job show", args: []string{"j1"}},
		{path: "unique clear", args: []string{"u9"}},
		{path: "schedule list", args: []string{"--schedule", goodScheduleFile}, list: true},
		{path: "schedule show", args: []string{"--schedule", goodScheduleFile, "every_thirty"}},
		{path: "schedule queue-now", args: []string{"--schedule", goodScheduleFile, "every_thirty"}},
		{path: "schedule validate", args: []string{goodScheduleFile}, list: true, noRedis: true},
		{path: "stats"},
		{path: "pool status", list: true},
		{path: "mass enqueue", args: []string{"--source", "s9", "--name", "x", "--class", "C", "--args", "[1]"}},
		{path: "mass batch create", args: []string{"--source", "s1", "--name", "imp"}},
		{path: "mass batch push"}, // ID of the batch created, filled in below
		{path: "mass batch commit"},
		{path: "mass routes", args: []string{"--config", cfg}, list: true},
		{path: "mass status", args: []string{"--config", cfg}},
		{path: "mass failures", list: true},
		{path: "mass reallocate", args: []string{"--all"}},
		{path: "mass weight", args: []string{"--source", "s1", "--weight", "2"}},
		{path: "mass limit", args: []string{"--source", "s1", "--concurrency", "3"}},
		{path: "mass pause", args: []string{"--source", "s1"}},
		{path: "mass settings", list: true},
		{path: "mass resume", args: []string{"--source", "s1", "--config", cfg}},
		{path: "plan remove", args: []string{"p1"}},
		{path: "queue remove", args: []string{"--class", "MailJob", "mail"}},
		{path: "queue clear", args: []string{"--yes", "mail"}},
		{path: "delayed remove", args: []string{"--class", "NoArgsJob"}},
		{path: "delayed clear", args: []string{"--yes"}},
		{path: "failed retry", args: []string{"0"}},
		{path: "failed remove", args: []string{"1"}},
		{path: "failed clear", args: []string{"--yes"}},
	}
	// bench measures for minutes: its report is checked as written below.
	covered := map[string]bool{"bench": true}
	var batch string
	for _, c := range cases {
		covered[c.path] = true
		switch c.path {
		case "delayed show", "delayed queue-now":
			c.args = []string{delayedAt}
		case "mass batch push":
			c.args = []string{"--class", "C", "--args", "[1]", batch}
		case "mass batch commit":
			c.args = []string{batch}
		}
		out := e.runJSON(c)
		doc := checkJSONConvention(t, c.path, out, c.list, c.paged)
		switch c.path {
		case "delayed list":
			if items, _ := doc["items"].([]any); len(items) > 0 {
				delayedAt = items[0].(map[string]any)["due_at"].(string)
			}
		case "mass batch create":
			batch, _ = doc["id"].(string)
		}
	}
	if delayedAt == "" || batch == "" {
		t.Fatalf("the fixtures gave no delayed item (%q) or no batch (%q)", delayedAt, batch)
	}

	var rep bytes.Buffer
	r := &bench.Report{Throughput: []bench.Throughput{{Scenario: "static", PerCommand: map[string]bench.CommandCost{"lrange": {Calls: 1}}}},
		Definitions: map[string]string{"jobs_per_sec": "jobs finished per second"}}
	if err := r.WriteJSON(&rep); err != nil {
		t.Fatal(err)
	}
	checkJSONConvention(t, "bench", rep.Bytes(), false, false)

	for _, path := range commandsWithJSON(newApp(io.Discard, io.Discard, worker.NewRegistry()).Commands, "") {
		if !covered[path] {
			t.Errorf("%s has --json but no case in this test", path)
		}
	}
}

// commandsWithJSON lists the commands under cmds that have a --json flag.
func commandsWithJSON(cmds []*ucli.Command, parent string) []string {
	var out []string
	for _, c := range cmds {
		path := strings.TrimSpace(parent + " " + c.Name)
		if slices.ContainsFunc(c.Flags, func(f ucli.Flag) bool { return slices.Contains(f.Names(), "json") }) {
			out = append(out, path)
		}
		out = append(out, commandsWithJSON(c.Subcommands, path)...)
	}
	return out
}

// runJSON runs c with --json and returns its stdout; it must exit 0.
func (e *cliEnv) runJSON(c jsonCase) []byte {
	e.t.Helper()
	words := strings.Fields(c.path)
	var cmd *ucli.Command
	for _, x := range newApp(io.Discard, io.Discard, worker.NewRegistry()).Commands {
		if x.Name == words[0] {
			cmd = x
		}
	}
	args := append(append([]string{}, words[1:]...), "--json")
	if !c.noRedis {
		args = append(args, e.redisArgs()...)
	}
	out, errOut := newSyncBuffer(), newSyncBuffer()
	if code := runCommand(context.Background(), cmd, append(args, c.args...), out, errOut); code != ExitOK {
		e.t.Fatalf("%s %v: exit %d\n%s%s", c.path, c.args, code, out.String(), errOut.String())
	}
	return []byte(out.String())
}

var (
	snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	// rawKeys hold data as it is stored or was given (job payloads, args,
	// schedule options, Redis command names), not keys of ours.
	rawKeys = map[string]bool{"payload": true, "args": true, "deferred": true, "stored": true, "entry": true,
		"options": true, "per_command": true}
)

// timeKey reports whether a key names a time: *_at, and the names the
// stats and pool records have kept.
func timeKey(k string) bool {
	return k == "at" || k == "time" || strings.HasSuffix(k, "_at") ||
		slices.Contains([]string{"started", "heartbeat", "last_pass", "next_plan_slot"}, k)
}

// checkJSONConvention checks out against the --json convention and returns
// it decoded.
func checkJSONConvention(t *testing.T, name string, out []byte, list, paged bool) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		t.Errorf("%s: not JSON: %v\n%s", name, err, out)
		return nil
	}
	if dec.More() {
		t.Errorf("%s: more than one JSON value:\n%s", name, out)
	}
	top, ok := doc.(map[string]any)
	if !ok {
		t.Errorf("%s: prints %T, want an object:\n%s", name, doc, out)
		return nil
	}
	if _, has := top["items"]; list && !has {
		t.Errorf("%s: a list without items:\n%s", name, out)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if items, has := v["items"]; has {
				checkEnvelope(t, name+path, v, items, paged)
			}
			for k, x := range v {
				if !snakeKey.MatchString(k) {
					t.Errorf("%s: key %s.%s is not snake_case", name, path, k)
				}
				if timeKey(k) {
					checkTime(t, name+path+"."+k, x)
				}
				if k == "upcoming" {
					for _, s := range x.([]any) {
						checkTime(t, name+path+".upcoming[]", s)
					}
				}
				if !rawKeys[k] {
					walk(path+"."+k, x)
				}
			}
		case []any:
			for _, x := range v {
				walk(path+"[]", x)
			}
		}
	}
	walk("", top)
	return top
}

// checkEnvelope checks {"items": [...], "total": N}.
func checkEnvelope(t *testing.T, where string, obj map[string]any, items any, paged bool) {
	t.Helper()
	arr, ok := items.([]any)
	if !ok {
		t.Errorf("%s: items is %T, want an array", where, items)
		return
	}
	n, ok := obj["total"].(json.Number)
	if !ok {
		t.Errorf("%s: total is %v, want a number beside items", where, obj["total"])
		return
	}
	total, err := n.Int64()
	switch {
	case err != nil:
		t.Errorf("%s: total %s is not an integer", where, n)
	case paged && total < int64(len(arr)):
		t.Errorf("%s: total %d is less than the %d items shown", where, total, len(arr))
	case !paged && total != int64(len(arr)):
		t.Errorf("%s: total %d, but %d items", where, total, len(arr))
	}
}

// checkTime checks that a time is null or RFC 3339 in UTC.
func checkTime(t *testing.T, where string, v any) {
	t.Helper()
	if v == nil {
		return
	}
	s, ok := v.(string)
	if !ok {
		t.Errorf("%s = %v: a time must be an RFC 3339 string or null", where, v)
		return
	}
	if _, err := time.Parse(time.RFC3339, s); err != nil || !strings.HasSuffix(s, "Z") {
		t.Errorf("%s = %q: want RFC 3339 in UTC (2026-11-28T14:05:03Z)", where, s)
	}
}

// loadDumps writes the keys of fixture dumps into e's namespace (their
// "resque:" becomes e's namespace); lists and sets are appended to.
func (e *cliEnv) loadDumps(dumps ...[2]string) {
	e.t.Helper()
	for _, d := range dumps {
		for _, k := range fixtures.MustLoad(d[0], d[1]).Keys {
			name := e.ns + ":" + strings.TrimPrefix(k.Key, "resque:")
			switch k.Type {
			case "string":
				var s string
				mustUnmarshal(e.t, k.Value, &s)
				e.do("SET", name, s)
			case "list", "set":
				var items []string
				mustUnmarshal(e.t, k.Value, &items)
				cmd := map[string]string{"list": "RPUSH", "set": "SADD"}[k.Type]
				for _, it := range items {
					e.do(cmd, name, it)
				}
			case "zset":
				var pairs [][2]json.RawMessage
				mustUnmarshal(e.t, k.Value, &pairs)
				for _, p := range pairs {
					var member string
					mustUnmarshal(e.t, p[0], &member)
					e.do("ZADD", name, string(p[1]), member)
				}
			case "hash":
				var m map[string]string
				mustUnmarshal(e.t, k.Value, &m)
				for f, v := range m {
					e.do("HSET", name, f, v)
				}
			default:
				e.t.Fatalf("%s/%s: key %s of type %s", d[0], d[1], k.Key, k.Type)
			}
		}
	}
}

// seedPoolRecord files the status record of one pool manager.
func (e *cliEnv) seedPoolRecord() {
	e.t.Helper()
	started := time.Now().Add(-time.Hour)
	v, err := protocol.EncodePoolRecord(protocol.PoolRecord{PID: 42, Host: "web-1", Config: "pool.yml", Format: "resque-go",
		StartedAt: started, UpdatedAt: time.Now(), RefreshIntervalS: 5, State: "running", CPUPercent: 1.23456,
		Children: []protocol.PoolChild{{Slot: 1, Queues: "mail", PID: 43, State: "running", StartedAt: &started, UptimeS: 3600}}})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.client.SetPoolRecord(context.Background(), "web-1", 42, v, time.Minute); err != nil {
		e.t.Fatal(err)
	}
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(fmt.Errorf("fixture value %.60s: %w", b, err))
	}
}
