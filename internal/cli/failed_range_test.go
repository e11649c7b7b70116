package cli

import (
	"strings"
	"testing"
)

// failed show 7 on a short list says how long the list is (exit 2),
// before reading or changing anything.
func TestFailedIndexOutOfRange(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	for _, sub := range []string{"show", "retry", "remove"} {
		code, _, errOut := e.failed(sub, "0")
		if code != ExitUsage || !strings.Contains(errOut, "no entry 0: the failed list is empty") {
			t.Errorf("%s 0 on an empty list: exit %d, stderr %q", sub, code, errOut)
		}
	}
	e.pushFailed()
	for _, sub := range []string{"show", "retry", "remove"} {
		code, _, errOut := e.failed(sub, "0", "7")
		if code != ExitUsage || noHint(errOut) != "resque-go: no entry 7: the failed list has 4 entries (0-3)\n" {
			t.Errorf("%s 0 7: exit %d, stderr %q", sub, code, errOut)
		}
	}
	if n := len(e.list(e.client.Keys().Failed())); n != 4 {
		t.Errorf("failed has %d entries, want 4 untouched", n)
	}
}
