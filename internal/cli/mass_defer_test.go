package cli

import (
	"strings"
	"testing"
)

// `mass enqueue --unique-id U --deferrable-by S`: while U's job runs the
// job is parked (exit 0, "deferred" on stderr), a second one is refused
// (exit 3); --deferrable-by needs --unique-id and is never negative nor
// more than 100 years (exit 2).
func TestMassEnqueueDeferrable(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	enqueue := func(args ...string) (int, string, string) {
		return e.mass("", append([]string{"enqueue", "--source", "s1", "--name", "sync", "--class", "Sync"}, args...)...)
	}
	if code, _, errOut := enqueue("--unique-id", "u1", "--deferrable-by", "5"); code != ExitOK || errOut != "" {
		t.Fatalf("free uid: exit %d %q", code, errOut)
	}
	if code, _, errOut := enqueue("--unique-id", "u1", "--deferrable-by", "5"); code != ExitDuplicate {
		t.Fatalf("queued uid: exit %d %q", code, errOut)
	}
	e.do("SET", e.ns+":unique:u1:state", "running") // its job is running
	code, out, errOut := enqueue("--unique-id", "u1", "--deferrable-by", "5", "--args", `["later"]`)
	if code != ExitOK || !strings.HasPrefix(errOut, "deferred: ") || strings.TrimSpace(out) == "" {
		t.Fatalf("running uid: exit %d %q %q", code, out, errOut)
	}
	if got := e.strs("MGET", e.ns+":unique:u1:deferred"); len(got) != 1 || !strings.Contains(got[0], `"later"`) ||
		!strings.Contains(got[0], `"deferrableBy":5`) {
		t.Errorf("parked: %q", got)
	}
	if code, _, _ := enqueue("--unique-id", "u1", "--deferrable-by", "5"); code != ExitDuplicate {
		t.Errorf("a second deferral: exit %d, want %d", code, ExitDuplicate)
	}
	for _, args := range [][]string{{"--deferrable-by", "5"}, {"--unique-id", "u2", "--deferrable-by", "-1"},
		{"--unique-id", "u2", "--deferrable-by", "3153600001"}} {
		if code, _, errOut := enqueue(args...); code != ExitUsage || strings.Count(noHint(errOut), "\n") != 1 {
			t.Errorf("%v: exit %d %q, want %d and one line", args, code, errOut, ExitUsage)
		}
	}
}
