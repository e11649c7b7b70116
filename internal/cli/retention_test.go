package cli

import (
	"context"
	"strings"
	"testing"
)

// A bad retention flag is one line naming it, exit 2, on work and
// scheduler alike.
func TestRetentionFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-q", "a", "--failed-max-age", "3 parsecs"}, `resque-go: --failed-max-age "3 parsecs": want an age such as 30d, 2w or 12h`},
		{[]string{"-q", "a", "--retries-max", "-1"}, "resque-go: --retries-max -1: must not be negative (0: no limit)"},
		{[]string{"-q", "a", "--failed-archive", "x.jsonl"}, `resque-go: --failed-archive "x.jsonl": give --failed-max`},
	} {
		for _, name := range []string{"work", "scheduler"} {
			args := tc.args
			c := workCmd()
			if name == "scheduler" {
				c, args = schedulerCommand(), args[2:]
			}
			out, errOut := newSyncBuffer(), newSyncBuffer()
			code := runCommand(context.Background(), c, args, out, errOut)
			first, _, _ := strings.Cut(errOut.String(), "\n")
			if code != ExitUsage || !strings.HasPrefix(first, tc.want) {
				t.Errorf("%s %v: exit %d, stderr %q; want exit 2 and %q", name, args, code, errOut.String(), tc.want)
			}
		}
	}
}
