package cli

import (
	"context"
	"strings"
	"testing"
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
