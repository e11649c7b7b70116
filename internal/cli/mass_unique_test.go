package cli

import (
	"context"
	"strings"
	"testing"
)

// `mass batch push` refuses a unique job whose uid is queued or running
// with exit code 3 and one line naming the uid (and, for stdin, the line:
// the lines before it are in the batch, it and those after are not); a
// queue job's uid and a batch job's uid refuse each other.
func TestMassBatchPushUnique(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	enqueue := func(uid string) (int, string) {
		out, errOut := newSyncBuffer(), newSyncBuffer()
		code := runCommand(context.Background(), enqueueCommand(), append(e.redisArgs(), "--queue", "mail", "--class", "Job", "--unique-id", uid), out, errOut)
		return code, errOut.String()
	}
	oneLine := func(what, s string, want ...string) {
		t.Helper()
		if strings.Count(noHint(s), "\n") != 1 {
			t.Errorf("%s: not one line: %q", what, s)
		}
		for _, w := range want {
			if !strings.Contains(s, w) {
				t.Errorf("%s: %q lacks %q", what, s, w)
			}
		}
	}
	b1 := strings.TrimSpace(e.massOK("", "batch", "create", "--source", "s1", "--name", "imp"))
	b2 := strings.TrimSpace(e.massOK("", "batch", "create", "--source", "s2", "--name", "imp"))
	e.massOK("", "batch", "push", "--class", "Imp", "--unique-id", "u1", b1)

	code, _, errOut := e.mass("", "batch", "push", "--class", "Imp", "--unique-id", "u1", b2)
	if code != ExitDuplicate {
		t.Fatalf("second push of u1: exit %d, %s", code, errOut)
	}
	oneLine("duplicate --unique-id", errOut, `unique id "u1" is already queued or running`, "nothing pushed to "+b2)

	if code, errOut := enqueue("u1"); code != ExitDuplicate {
		t.Errorf("enqueue of a uid queued in a batch: exit %d, %s", code, errOut)
	}
	if code, errOut := enqueue("q1"); code != ExitOK {
		t.Fatalf("enqueue: exit %d, %s", code, errOut)
	}
	code, _, errOut = e.mass("", "batch", "push", "--class", "Imp", "--unique-id", "q1", b2)
	if code != ExitDuplicate || !strings.Contains(errOut, `"q1"`) {
		t.Errorf("batch push of a uid queued in a queue: exit %d, %s", code, errOut)
	}

	stdin := `{"class":"Imp","args":[1],"unique":{"uid":"u2"}}` + "\n\n" +
		`{"class":"Imp","args":[2]}` + "\n" +
		`{"class":"Imp","args":[3],"unique":{"uid":"q1"}}` + "\n" +
		`{"class":"Imp","args":[4],"unique":{"uid":"u4"}}` + "\n"
	code, _, errOut = e.mass(stdin, "batch", "push", b2)
	if code != ExitDuplicate {
		t.Fatalf("stdin push: exit %d, %s", code, errOut)
	}
	oneLine("stdin duplicate", errOut, "stdin line 4", `unique id "q1"`, "the lines before it (2 jobs) are in batch "+b2)
	if got := e.strs("LRANGE", e.ns+":uncommitted:"+b2, 0, -1); len(got) != 2 || !strings.Contains(got[0], `"args":[2]`) {
		t.Errorf("batch holds %q, want lines 1 and 3", got)
	}
	if code, errOut := enqueue("u4"); code != ExitOK {
		t.Errorf("the line after the refused one took its uid: enqueue u4: exit %d, %s", code, errOut)
	}

	// deferral is refused as bad input, the lines before pushed
	code, _, errOut = e.mass(`{"class":"Imp","args":[5]}`+"\n"+`{"class":"Imp","unique":{"uid":"u6","deferrableBy":3}}`+"\n", "batch", "push", b2)
	if code != ExitUsage {
		t.Fatalf("deferrable line: exit %d, %s", code, errOut)
	}
	oneLine("deferrable line", errOut, "stdin line 2", "deferrableBy", "the lines before it (1 job) are in batch")
	if n := len(e.strs("LRANGE", e.ns+":uncommitted:"+b2, 0, -1)); n != 3 {
		t.Errorf("batch holds %d jobs, want 3", n)
	}
	if code, _, errOut := e.mass("", "batch", "push", "--unique-id", "u7", b2); code != ExitUsage {
		t.Errorf("--unique-id without --class: exit %d, %s", code, errOut)
	}

	e.massOK("", "batch", "commit", b2)
	if v := e.strs("MGET", e.ns+":unique:u2:state"); v[0] != "queued" {
		t.Errorf("after commit: u2 %q", v[0])
	}
}
