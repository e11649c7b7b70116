package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// queue pause writes the key as resque-queue-control does, queue list and
// stats show it (text and JSON), queue resume removes it; a queue paused
// from Ruby shows too.
func TestQueuePauseCommand(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	k := e.client.Keys()
	e.do("SADD", k.Queues(), "mail", "reports")
	e.do("RPUSH", k.Queue("mail"), `{"class":"Mail","args":[]}`)

	if code, out, errOut := e.queue("pause", "mail"); code != 0 || out != "queue mail paused\n" {
		t.Fatalf("pause: %d %q %q", code, out, errOut)
	}
	// what ResqueQueueControlHelper.paused? reads: a GET that is not nil
	if v, err := redis.String(e.client.Do(context.Background(), "GET", e.ns+":pause:queue:mail")); err != nil || v != "true" {
		t.Errorf("pause key = %q, %v; want \"true\"", v, err)
	}
	e.do("SET", e.ns+":pause:queue:reports", "true") // paused from Ruby

	code, out, _ := e.queue("list")
	if code != 0 || !strings.Contains(out, "mail     1  paused\nreports  0  paused\n") {
		t.Errorf("list: %d\n%s", code, out)
	}
	code, out, _ = e.queue("list", "--json")
	var list struct {
		Items []struct {
			Name   string
			Paused bool
		}
	}
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list.Items) != 2 || !list.Items[0].Paused || !list.Items[1].Paused {
		t.Errorf("list --json: %d %v\n%s", code, err, out)
	}
	code, out, _ = e.stats(context.Background())
	if code != 0 || !strings.Contains(out, "paused: mail, reports\n") || !strings.Contains(out, "total (paused)") {
		t.Errorf("stats:\n%s", out)
	}
	code, out, _ = e.stats(context.Background(), "--json")
	var snap struct {
		PausedQueues []string `json:"paused_queues"`
		Queues       []struct {
			Name   string `json:"name"`
			Paused bool   `json:"paused"`
		} `json:"queues"`
	}
	if err := json.Unmarshal([]byte(out), &snap); code != 0 || err != nil || strings.Join(snap.PausedQueues, ",") != "mail,reports" ||
		len(snap.Queues) != 2 || !snap.Queues[0].Paused {
		t.Errorf("stats --json: %d %v\n%s", code, err, out)
	}

	if code, out, _ := e.queue("resume", "reports"); code != 0 || out != "queue reports resumed\n" {
		t.Errorf("resume: %d %q", code, out)
	}
	if code, out, _ := e.queue("resume", "reports"); code != 0 || out != "queue reports was not paused\n" {
		t.Errorf("resume again: %d %q", code, out)
	}
	if code, out, _ := e.queue("resume", "--json", "mail"); code != 0 || strings.Join(strings.Fields(out), "") != `{"paused":false,"queue":"mail"}` {
		t.Errorf("resume --json: %d %q", code, out)
	}
	if n, _ := redis.Int(e.client.Do(context.Background(), "EXISTS", e.ns+":pause:queue:mail", e.ns+":pause:queue:reports")); n != 0 {
		t.Errorf("%d pause keys left after resume", n)
	}
	if code, out, _ := e.queue("list"); code != 0 || strings.Contains(out, "paused") {
		t.Errorf("list after resume: %d\n%s", code, out)
	}

	for _, args := range [][]string{{"pause"}, {"pause", "a", "b"}, {"pause", ""}, {"resume"}, {"resume", "a", "b"}} {
		code, out, errOut := e.queue(args...)
		if code != ExitUsage || out != "" || !strings.HasPrefix(errOut, "resque-go: ") || strings.Count(noHint(errOut), "\n") != 1 {
			t.Errorf("queue %q: exit %d, stdout %q, stderr %q; want 2 and one line", args, code, out, errOut)
		}
	}
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	code = runCommand(context.Background(), queueCommand(), []string{"pause", "--redis", "redis://127.0.0.1:1/0", "q"}, stdout, stderr)
	if code != ExitFailure || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("refused connection: exit %d, stderr %q; want 1 and one line", code, stderr.String())
	}
}
