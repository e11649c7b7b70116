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
