package cli

import (
	"strings"
	"testing"
)

// clear and remove --all delete nothing without --yes, as queue clear and
// delayed clear: one line saying what would go, and exit 2.
func TestFailedBulkDeletesNeedYes(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	raws := e.pushFailed()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"clear"}, "resque-go: clear deletes every failed entry (4 now): add --yes to confirm"},
		{[]string{"clear", "--class", "Mail"}, `resque-go: clear deletes every failed entry matching --class "Mail": add --yes to confirm`},
		{[]string{"remove", "--all"}, "resque-go: remove --all deletes every failed entry (4 now): add --yes to confirm"},
		{[]string{"remove", "--all", "--queue", "q", "--exception", "E"}, `resque-go: remove --all deletes every failed entry matching --queue "q" --exception "E": add --yes to confirm`},
	} {
		code, out, errOut := e.failed(tc.args[0], tc.args[1:]...)
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		if code != ExitUsage || out != "" || len(lines) != 2 || lines[0] != tc.want || !strings.HasPrefix(lines[1], "Run 'resque-go failed ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errOut, tc.want)
		}
		if n := len(e.list(e.client.Keys().Failed())); n != len(raws) {
			t.Fatalf("%v without --yes: %d entries left of %d", tc.args, n, len(raws))
		}
	}
	if code, out, errOut := e.failed("remove", "--all", "--yes"); code != ExitOK || !strings.Contains(out, "removed 4") {
		t.Errorf("remove --all --yes: exit %d: %s%s", code, out, errOut)
	}
}
