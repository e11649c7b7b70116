package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

func (e *cliEnv) queue(args ...string) (int, string, string) {
	e.t.Helper()
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	full := append([]string{args[0]}, e.redisArgs()...)
	code := runCommand(context.Background(), queueCommand(), append(full, args[1:]...), stdout, stderr)
	return code, stdout.String(), stderr.String()
}

func (e *cliEnv) items(q string) []string {
	e.t.Helper()
	v, err := redis.Strings(e.client.Do(context.Background(), "LRANGE", e.client.Keys().Queue(q), 0, -1))
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func TestQueueCommandInspects(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	k := e.client.Keys()
	e.do("SADD", k.Queues(), "mail", "b:q", "empty")
	e.do("RPUSH", k.Queue("mail"), `{"class":"Mail","args":[12345678901234567890],"id":"abc"}`, "not json", `{"class":"Other","args":{"k":"v"}}`)
	e.do("RPUSH", k.Queue("b:q"), `{"class":"X","args":[]}`)

	code, out, _ := e.queue("list")
	if code != 0 || !strings.Contains(out, "b:q    1\nempty  0\nmail   3\n") {
		t.Fatalf("list: %d\n%s", code, out)
	}
	code, out, _ = e.queue("sizes", "--json")
	var list struct {
		Items []struct {
			Name string
			Size int64
		}
		Total int
	}
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || list.Total != 3 || len(list.Items) != 3 || list.Items[2].Name != "mail" || list.Items[2].Size != 3 {
		t.Fatalf("sizes --json: %d %v\n%s", code, err, out)
	}
	if code, out, _ = e.queue("size", "mail"); code != 0 || out != "3\n" {
		t.Errorf("size: %d %q", code, out)
	}
	if code, out, _ = e.queue("size", "--json", "nope"); code != 0 || strings.Join(strings.Fields(out), "") != `{"queue":"nope","size":0}` {
		t.Errorf("size --json: %d %q", code, out)
	}
	code, out, _ = e.queue("peek", "--offset", "0", "--limit", "2", "mail")
	if code != 0 || !strings.Contains(out, "#0 Mail id=abc\n{\n  \"class\": \"Mail\",\n  \"args\": [\n    12345678901234567890\n  ],") ||
		!strings.Contains(out, "#1 (not a job a worker would run") || !strings.Contains(out, "\nnot json\n") || strings.Contains(out, "Other") {
		t.Errorf("peek: %d\n%s", code, out)
	}
	code, out, _ = e.queue("peek", "--json", "--offset", "1", "mail")
	want := `{"items":[{"position":1,"error":"not a job a worker would run: ` // the decoder's reason follows
	if code != 0 || !strings.HasPrefix(strings.Join(strings.Fields(out), ""), strings.Join(strings.Fields(want), "")) ||
		!strings.HasSuffix(strings.Join(strings.Fields(out), ""), `"payload":"notjson"},{"position":2,"class":"Other","payload":{"class":"Other","args":{"k":"v"}}}],"total":3,"queue":"mail","offset":1,"limit":10}`) {
		t.Errorf("peek --json: %d %s", code, out)
	}
	code, out, _ = e.queue("peek", "--json", "--limit", "1", "mail")
	if code != 0 || !strings.Contains(strings.Join(strings.Fields(out), ""), `"args":[12345678901234567890]`) {
		t.Errorf("peek --json changed the payload's number: %d %s", code, out)
	}
	if n := len(e.items("mail")); n != 3 {
		t.Errorf("peek took jobs: %d left", n)
	}
}

func TestQueueCommandRemovesAndClears(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	k := e.client.Keys()
	e.do("RPUSH", k.Queue("q"),
		`{"class":"A","args":[1],"id":"i1"}`,
		`{"class":"A","args":[{"user":7,"x":1}],"id":"i2"}`,
		`{"class":"A","args":{"user":7},"id":"i3"}`,
		`{"class":"B","args":[1]}`,
		`garbage`,
		`{"class":"A","args":[2]}`)
	if code, out, _ := e.queue("remove", "--class", "A", "--id", "i1", "q"); code != 0 || out != "removed 1\n" {
		t.Fatalf("remove --id: %d %q", code, out)
	}
	if code, out, _ := e.queue("remove", "--class", "A", "--args", `{"user":7}`, "--json", "q"); code != 0 || strings.Join(strings.Fields(out), "") != `{"queue":"q","removed":2}` {
		t.Fatalf("remove --args object: %d %q", code, out)
	}
	if code, out, _ := e.queue("remove", "--class", "A", "--args", `[2]`, "q"); code != 0 || out != "removed 1\n" {
		t.Fatalf("remove --args array: %d %q", code, out)
	}
	if got := e.items("q"); strings.Join(got, " ") != `{"class":"B","args":[1]} garbage` {
		t.Fatalf("queue after removes: %q", got)
	}
	code, _, errOut := e.queue("clear", "q")
	if code != ExitUsage || noHint(errOut) != "resque-go: clear deletes every job of queue \"q\": add --yes to confirm\n" {
		t.Fatalf("clear without --yes: %d %q", code, errOut)
	}
	if code, out, _ := e.queue("clear", "--yes", "q"); code != 0 || out != "removed 2\n" {
		t.Fatalf("clear --yes: %d %q", code, out)
	}
}

func TestQueueCommandUsageErrors(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	for _, args := range [][]string{
		{"size"}, {"size", "a", "b"}, {"size", ""}, {"list", "x"},
		{"peek", "--limit", "-1", "q"}, {"peek", "--offset", "x", "q"},
		{"remove", "q"}, {"remove", "--class", "A", "--id", "1", "--args", "[]", "q"},
		{"remove", "--class", "A", "--args", "1", "q"}, {"remove", "--class", "A", "--args", "[1", "q"},
		{"remove", "--class", "A", "--id", "", "q"}, {"clear", "q"}, {"nope"},
	} {
		code, out, errOut := e.queue(args...)
		if code != ExitUsage || out != "" || !strings.HasPrefix(errOut, "resque-go: ") {
			t.Errorf("queue %q: exit %d, stdout %q, stderr %q; want 2 and a message", args, code, out, errOut)
		}
	}
}

func TestQueueCommandRedisErrorHidesPassword(t *testing.T) {
	t.Parallel()
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	code := runCommand(context.Background(), queueCommand(),
		[]string{"size", "--redis", "redis://:sekrit@127.0.0.1:1/0", "q"}, stdout, stderr)
	msg := stderr.String()
	if code != ExitFailure || strings.Contains(msg, "sekrit") || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "xxxxx") {
		t.Errorf("exit %d, stderr %q: want 1, one line, password hidden", code, msg)
	}
}
