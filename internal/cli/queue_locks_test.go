package cli

import (
	"context"
	"strings"
	"testing"
)

// queue locks lists the held serial locks with the worker running a job of
// each (stale without one); queue unlock releases one only while the
// token given holds it.
func TestQueueLocksAndUnlock(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	k := e.client.Keys()
	e.do("SADD", k.Queues(), "ser", "stale", "odd")
	e.do("SET", k.SerialLock("ser"), "0123456789abcdef0123456789abcdef", "PX", 60000)
	e.do("SET", k.SerialLock("stale"), "feedfacefeedfacefeedfacefeedface")
	e.do("HSET", k.SerialLock("odd"), "a", "b")
	id := "host1:4242-0:ser"
	e.do("SADD", k.Workers(), id)
	e.do("SET", k.Worker(id), `{"queue":"ser","run_at":"2026-11-28T10:00:00Z","payload":{"class":"SerialJob","args":[]}}`)

	code, out, errOut := e.queue("locks")
	if code != 0 || !strings.Contains(out, "host1:4242-0:ser (SerialJob)") || !strings.Contains(out, "stale  never") ||
		!strings.Contains(out, "stale: no worker runs a job of it") || !strings.Contains(out, "holds a hash") {
		t.Errorf("locks: %d %q\n%s", code, errOut, out)
	}
	if code, _, errOut := e.queue("unlock", "stale", "--token", "another"); code != ExitFailure || !strings.Contains(errOut, "not held by that token") {
		t.Errorf("unlock with another token: %d %q", code, errOut)
	}
	if code, out, errOut := e.queue("unlock", "stale", "--token", "feedfacefeedfacefeedfacefeedface"); code != 0 || out != "queue stale: lock released\n" {
		t.Errorf("unlock: %d %q %q", code, out, errOut)
	}
	for _, args := range [][]string{{"unlock", "stale"}, {"unlock", "--token", "x"}, {"locks", "extra"}} {
		if code, _, errOut := e.queue(args...); code != ExitUsage || !strings.HasPrefix(errOut, "resque-go: ") {
			t.Errorf("%v: %d %q", args, code, errOut)
		}
	}
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	if code := runCommand(context.Background(), queueCommand(), []string{"locks", "--redis", "redis://:sekrit@127.0.0.1:1/0"}, stdout, stderr); code != ExitFailure ||
		strings.Contains(stderr.String(), "sekrit") {
		t.Errorf("refused: %d %q", code, stderr.String())
	}
}
