package worker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/worker"
)

// runExec runs one job through an exec handler, without Redis.
func runExec(t *testing.T, ctx context.Context, command string, opt worker.ExecOptions, job *worker.Job) error {
	t.Helper()
	if opt.Stderr == nil {
		opt.Stderr = &strings.Builder{}
	}
	if job == nil {
		job = &worker.Job{Queue: "q", Class: "C", Args: []byte(`[1]`), Payload: []byte(`{"class":"C","args":[1]}`), WorkerID: "testhost:1:q"}
	}
	return worker.ExecHandler(command, opt)(ctx, job)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The guard the command runs under keeps what sh -c gave it: the payload on
// stdin, $0, $#, $$ as the group leader, exit statuses (also from exit and
// exec inside the command, and after a signal the guard caught), death by a
// signal, and the shell's own messages.
func TestExecGuardKeepsShellSemantics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	ctx := context.Background()
	// $$ must lead the process group: field 5 of /proc/$$/stat.
	cmd := fmt.Sprintf(`{ cat; echo; z="$0|$#"; read -r s </proc/$$/stat; set -- ${s##*) }; echo "$z|$(($$ == $3))"; } > %q`, out)
	if err := runExec(t, ctx, cmd, worker.ExecOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, out), "{\"class\":\"C\",\"args\":[1]}\n/bin/sh|0|1\n"; got != want {
		t.Errorf("command saw %q, want %q", got, want)
	}
	for _, c := range []struct {
		cmd, msg string
	}{
		{`exit 3`, "command exited with status 3"},
		{`false; exit 4`, "command exited with status 4"},
		{`exec sh -c 'exit 5'`, "command exited with status 5"},
		{`kill -TERM $$; exit 7`, "command exited with status 7"},
		{`kill -TERM $$; sleep 0.1; exit 8`, "command exited with status 8"},
		{`exit 139`, "command exited with status 139"},
		{`no-such-command-here`, "command exited with status 127: /bin/sh: 1: no-such-command-here: not found"},
	} {
		err := runExec(t, ctx, c.cmd, worker.ExecOptions{}, nil)
		var we *worker.Error
		if !errors.As(err, &we) || we.Message != c.msg {
			t.Errorf("%s: %v, want %q", c.cmd, err, c.msg)
		}
	}
	// Killed by a signal: Ruby's wording, as when sh ran the command itself.
	err := runExec(t, ctx, `echo oops >&2; kill -KILL $(sh -c 'echo $PPID')`, worker.ExecOptions{}, nil)
	var we *worker.Error
	if !errors.As(err, &we) || !strings.HasPrefix(we.Message, "Child process received unhandled signal pid ") ||
		!strings.HasSuffix(we.Message, " SIGKILL (signal 9): oops") {
		t.Errorf("killed command: %v", err)
	}
	var retry *worker.RetryError
	if err := runExec(t, ctx, `exit 75`, worker.ExecOptions{}, nil); !errors.As(err, &retry) {
		t.Errorf("exit 75: %v, want a retry", err)
	}
	var discard *worker.DiscardError
	if err := runExec(t, ctx, `exit 76`, worker.ExecOptions{}, nil); !errors.As(err, &discard) {
		t.Errorf("exit 76: %v, want a discard", err)
	}
}

// A cancelled command still gets its grace period: the guard survives the
// group's SIGTERM and waits for the command to finish its cleanup.
func TestExecCancelKeepsGrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, started := filepath.Join(dir, "out"), filepath.Join(dir, "started")
	cmd := fmt.Sprintf(`trap 'echo term > %[1]q; sleep 0.3; echo cleaned >> %[1]q; exit 0' TERM; touch %[2]q; sleep 30 & wait`, out, started)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() { done <- runExec(t, ctx, cmd, worker.ExecOptions{KillGrace: 10 * time.Second}, nil) }()
	redistest.Eventually(t, 0, func() bool { _, err := os.Stat(started); return err == nil }, "command started")
	cancel(errors.New("test stop"))
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("handler did not return after cancel")
	}
	if err == nil || !strings.Contains(err.Error(), "test stop") {
		t.Errorf("handler returned %v", err)
	}
	if got := readFile(t, out); got != "term\ncleaned\n" {
		t.Errorf("the handler returned before the command's TERM cleanup ended: %q", got)
	}
}

// Job processes do not see resque-go's secrets, only the documented
// variables and the rest of the worker's environment.
func TestExecEnvHidesSecrets(t *testing.T) {
	t.Setenv("REDIS_URL", "redis://:hunter2-url@127.0.0.1:1/0")
	t.Setenv("REDIS_BACKEND", "redis://:hunter2-backend@127.0.0.1:1/0")
	t.Setenv("RESQUE_HTTP_TOKEN", "hunter2-token")
	t.Setenv("REDIS_SENTINEL_PASSWORD", "hunter2-sentinel")
	t.Setenv("RESQUE_METRICS_TOKEN", "hunter2-metrics")
	t.Setenv("RESQUE_JOB_ID", "stale-outer-id")
	t.Setenv("RESQUE_GO_TEST_KEEP", "kept")
	out := filepath.Join(t.TempDir(), "env")
	job := &worker.Job{Queue: "q", Class: "C", Args: []byte(`[]`), Payload: []byte(`{"class":"C","args":[]}`), WorkerID: "testhost:1:q"}
	if err := runExec(t, context.Background(), fmt.Sprintf(`env > %q`, out), worker.ExecOptions{}, job); err != nil {
		t.Fatal(err)
	}
	env := readFile(t, out)
	if strings.Contains(env, "hunter2") {
		t.Errorf("a secret reached the job:\n%s", env)
	}
	for _, v := range []string{"RESQUE_GO_TEST_KEEP=kept", "PATH=", "RESQUE_CLASS=C", "RESQUE_QUEUE=q", "RESQUE_WORKER=testhost:1:q", "RESQUE_ARGS=[]", "RESQUE_RESULT="} {
		if !strings.Contains("\n"+env, "\n"+v) {
			t.Errorf("%s missing from the job's environment:\n%s", v, env)
		}
	}
	if strings.Contains(env, "RESQUE_JOB_ID=") {
		t.Errorf("an outer RESQUE_JOB_ID reached a job without an id:\n%s", env)
	}
}

// $RESQUE_RESULT files: each job's is named in the handler's own directory
// and removed after the job; the files and directories of dead workers
// (unlocked, not new) are swept, those in use are not.
func TestExecResultFilesDoNotPileUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := time.Now().Add(-2 * time.Minute)
	age := func(p string, mtime time.Time) string {
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk := func(name string, mtime time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return age(p, mtime)
	}
	mkdir := func(name string, mtime time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "7.json"), []byte(`{"discard": true}`), 0o600); err != nil {
			t.Fatal(err)
		}
		return age(p, mtime)
	}
	lock := func(p string) {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
			t.Fatal(err)
		}
	}
	dead := mk("resque-go-result-111.json", old)
	young := mk("resque-go-result-222.json", time.Now())
	inUse := mk("resque-go-result-333.json", old)
	other := mk("unrelated.json", old)
	deadDir := mkdir("resque-go-results-111", old)
	youngDir := mkdir("resque-go-results-222", time.Now())
	inUseDir := mkdir("resque-go-results-333", old)
	otherDir := mkdir("unrelated", old)
	lock(inUse)
	lock(inUseDir)
	seen := filepath.Join(t.TempDir(), "seen")
	h := worker.ExecHandler(fmt.Sprintf(`echo "$RESQUE_RESULT" > %q; echo '{"discard": true}' > "$RESQUE_RESULT"`, seen), worker.ExecOptions{ResultDir: dir})
	job := &worker.Job{Queue: "q", Class: "C", Payload: []byte(`{"class":"C"}`), WorkerID: "testhost:1:q"}
	names := map[string]bool{}
	var ownDir string
	for i := 0; i < 4; i++ {
		var discard *worker.DiscardError
		if err := h(context.Background(), job); !errors.As(err, &discard) {
			t.Fatalf("job %d: the result file was not honoured: %v", i, err)
		}
		own := strings.TrimSpace(readFile(t, seen))
		if names[own] {
			t.Errorf("job %d was given %s again", i, own)
		}
		names[own] = true
		ownDir = filepath.Dir(own)
		if filepath.Dir(ownDir) != dir || !strings.HasPrefix(filepath.Base(ownDir), "resque-go-results-") {
			t.Errorf("result file %s is not in a resque-go-results- directory of ResultDir", own)
		}
		if _, err := os.Stat(own); !os.IsNotExist(err) {
			t.Errorf("the job's result file is still there: %v", err)
		}
		if i == 1 {
			// A tmp cleaner removed the handler's directory: the next job
			// gets a new one and its reply still counts.
			if err := os.RemoveAll(ownDir); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := os.Stat(ownDir); err != nil {
		t.Errorf("the handler's directory is gone while it runs: %v", err)
	}
	if err := os.Chtimes(ownDir, old, old); err != nil {
		t.Fatal(err)
	}
	// A second handler (another worker on the host) sweeps at its first
	// job; the first one's directory is locked while its process lives.
	h2 := worker.ExecHandler(":", worker.ExecOptions{ResultDir: dir})
	if err := h2(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{dead: false, young: true, inUse: true, other: true,
		deadDir: false, youngDir: true, inUseDir: true, otherDir: true, ownDir: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
