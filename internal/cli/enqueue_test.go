package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

func TestEnqueueArgsMustBeAnArrayOrObject(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--args", "5"}, ExitUsage, "--args '[5]'"},
		{[]string{"--args", `"x"`}, ExitUsage, `--args '["x"]'`},
		{[]string{"--args", "null"}, ExitUsage, "--args '[null]'"},
		{[]string{"--args", `{"a":1}`, "--plain"}, ExitUsage, `--args '[{"a":1}]'`},
		{[]string{"--args", "[1,"}, ExitUsage, "not valid JSON"},
		{[]string{"--args", `{"a":1}`}, ExitOK, `"args":{"a":1}`},
		{[]string{"--args", `[{"a":1}]`, "--plain"}, ExitOK, `{"class":"Job","args":[{"a":1}]}`},
		{[]string{"--args", " [5] "}, ExitOK, `"args":[5]`},
		{[]string{"--args", ""}, ExitOK, `"args":[]`},
	} {
		out, errOut := newSyncBuffer(), newSyncBuffer()
		code := runCommand(context.Background(), enqueueCommand(), append(append(e.redisArgs(), "--queue", "mail", "--class", "Job"), tc.args...), out, errOut)
		if code != tc.code || !strings.Contains(out.String()+errOut.String(), tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, out.String(), errOut.String(), tc.code, tc.want)
		}
	}
	if n, err := e.client.Len(context.Background(), e.client.Keys().Queue("mail")); err != nil || n != 4 {
		t.Errorf("queue has %d jobs (%v), want the 4 accepted ones", n, err)
	}
}

// enqueue --at/--in write the delayed item resque-scheduler's enqueue_at
// writes ({"class","args","queue"}, no id); --with-id adds id and
// queue_time; --plain --with-id is a usage error.
func TestEnqueueDelayedIsResqueSchedulerShaped(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--at", "1795299965", "--args", `["to-high"]`}, ExitOK, `{"class":"Job","args":["to-high"],"queue":"mail"}` + "\n"},
		{[]string{"--in", "10m", "--args", `["in-600"]`}, ExitOK, `{"class":"Job","args":["in-600"],"queue":"mail"}` + "\n"},
		{[]string{"--at", "1795299965", "--args", `[1]`, "--with-id"}, ExitOK, `{"class":"Job","args":[1],"queue":"mail","id":"`},
		{[]string{"--at", "1795299965", "--plain", "--with-id"}, ExitUsage, "--with-id"},
	} {
		out, errOut := newSyncBuffer(), newSyncBuffer()
		code := runCommand(context.Background(), enqueueCommand(), append(append(e.redisArgs(), "--queue", "mail", "--class", "Job"), tc.args...), out, errOut)
		got := out.String() + errOut.String()
		if code != tc.code || !strings.HasPrefix(got, tc.want) && !strings.Contains(got, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, out.String(), errOut.String(), tc.code, tc.want)
		}
		if tc.code == ExitOK && !strings.HasPrefix(out.String(), tc.want) {
			t.Errorf("%q: printed %q, want %q", tc.args, out.String(), tc.want)
		}
	}
	item := `{"class":"Job","args":["to-high"],"queue":"mail"}`
	if n, err := e.client.Len(context.Background(), e.client.Keys().Delayed(1795299965)); err != nil || n != 2 {
		t.Errorf("bucket has %d items (%v)", n, err)
	}
	if n, err := e.client.Do(context.Background(), "SCARD", e.client.Keys().Timestamps([]byte(item))); err != nil || n.(int64) != 1 {
		t.Errorf("timestamps:%s has %v members (%v)", item, n, err)
	}
}

// --at, --in and --deferrable-by past their bounds (protocol.MaxDelay,
// MaxTimestamp) are refused with exit 2 and one line naming the value;
// the bounds themselves are accepted; nothing refused is written.
func TestEnqueueTimesBounded(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--at", "253402300800"}, ExitUsage, `--at "253402300800": out of range`},
		{[]string{"--at", "10000-01-01T00:00:00Z"}, ExitUsage, `--at "10000-01-01T00:00:00Z"`},
		{[]string{"--at", "-1"}, ExitUsage, `--at "-1": out of range`},
		{[]string{"--in", "876001h"}, ExitUsage, `--in "876001h": out of range`},
		{[]string{"--unique-id", "D", "--deferrable-by", "9000000000000000000"}, ExitUsage, `--deferrable-by "9000000000000000000"`},
		{[]string{"--unique-id", "D", "--deferrable-by", "3153600001"}, ExitUsage, `--deferrable-by "3153600001"`},
		{[]string{"--at", "253402300799"}, ExitOK, ""},
		{[]string{"--in", "876000h"}, ExitOK, ""},
		{[]string{"--unique-id", "E", "--deferrable-by", "3153600000"}, ExitOK, ""},
	} {
		out, errOut := newSyncBuffer(), newSyncBuffer()
		code := runCommand(context.Background(), enqueueCommand(), append(append(e.redisArgs(), "--queue", "mail", "--class", "Job"), tc.args...), out, errOut)
		lines := strings.Count(strings.TrimRight(noHint(errOut.String()), "\n"), "\n") + 1
		if code != tc.code || !strings.Contains(errOut.String(), tc.want) || code == ExitUsage && lines != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and one line with %q", tc.args, code, out.String(), errOut.String(), tc.code, tc.want)
		}
	}
	k := e.client.Keys()
	if n, err := e.client.Len(context.Background(), k.Queue("mail")); err != nil || n != 1 {
		t.Errorf("queue has %d jobs (%v), want the unique one", n, err)
	}
	if n, err := redis.Int(e.client.Do(context.Background(), "ZCARD", k.DelayedSchedule())); err != nil || n != 2 {
		t.Errorf("delayed schedule has %d timestamps (%v), want the 2 accepted", n, err)
	}
}
