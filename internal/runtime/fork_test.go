package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

const childEnv = "RESQUE_GO_TEST_FORK_CHILD"

// forkClasses are the handlers the child process has.
func forkClasses() *worker.Registry {
	reg := worker.NewRegistry()
	reg.Register("Ok", func(ctx context.Context, j *worker.Job) error {
		if j.Queue != "q" || !strings.Contains(j.WorkerID, ":q") {
			return errors.New("child did not get queue and worker id")
		}
		return nil
	})
	reg.Register("Fails", func(ctx context.Context, j *worker.Job) error {
		return &worker.Error{Exception: "ArgumentError", Message: "bad <arg>", Backtrace: []string{"child.go:1"}}
	})
	reg.Register("Later", func(ctx context.Context, j *worker.Job) error {
		return worker.Retry(errors.New("later"), 7*time.Second)
	})
	reg.Register("Suicide", func(ctx context.Context, j *worker.Job) error {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	})
	reg.Register("Panics", func(ctx context.Context, j *worker.Job) error { panic("child panic") })
	reg.Register("Blocks", func(ctx context.Context, j *worker.Job) error { <-ctx.Done(); return ctx.Err() })
	reg.Register("Limited", func(ctx context.Context, j *worker.Job) error { return worker.RateLimited(30 * time.Second) })
	// for BenchmarkForkOverhead
	reg.Register("Noop", func(ctx context.Context, j *worker.Job) error { return nil })
	reg.Register("Sleep5ms", func(ctx context.Context, j *worker.Job) error { time.Sleep(5 * time.Millisecond); return nil })
	return reg
}

func childMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	return worker.RunChild(ctx, forkClasses(), os.Getenv("RESQUE_QUEUE"), os.Getenv("RESQUE_WORKER"), os.Stdin, os.NewFile(3, "result"))
}

// Fork mode: each job runs in a child process; its outcome, errors and
// retry requests come back; a child killed by a signal is a DirtyExit. The
// same with processes started ahead of their jobs (Prestart).
func TestForkMode(t *testing.T) {
	t.Parallel()
	for _, prestart := range []bool{false, true} {
		t.Run(fmt.Sprintf("prestart=%v", prestart), func(t *testing.T) {
			t.Parallel()
			testForkMode(t, prestart)
		})
	}
}

func testForkMode(t *testing.T, prestart bool) {
	e := newEnv(t)
	for _, c := range forkClasses().Classes() {
		e.reg.Register(c, func(ctx context.Context, j *worker.Job) error {
			return errors.New("the parent must not run jobs in fork mode")
		})
	}
	fixed := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var rec recorder
	e.push("q", `{"class":"Ok","args":[]}`, `{"class":"Fails","args":[]}`, `{"class":"Later","args":[]}`,
		`{"class":"Suicide","args":[]}`, `{"class":"Panics","args":[]}`)
	e.start(runtime.Config{Queues: "q", Concurrency: 2, OnFinish: rec.add, Now: func() time.Time { return fixed },
		Retry:      worker.RetryPolicy{MaxAttempts: 2},
		ClassRetry: map[string]worker.RetryPolicy{"Fails": {MaxAttempts: 1}, "Suicide": {MaxAttempts: 1}, "Panics": {MaxAttempts: 1}},
		Fork:       &worker.ForkConfig{Command: []string{os.Args[0]}, Env: []string{childEnv + "=1"}, Prestart: prestart}})
	done := rec.waitN(t, 5)
	got := map[string]runtime.Finished{}
	for _, f := range done {
		got[f.Class] = f
	}
	check := func(class, outcome, exc, msg string) {
		t.Helper()
		f := got[class]
		if f.Outcome != outcome || f.Exception != exc || !strings.Contains(f.Error, msg) {
			t.Errorf("%s: %s %s %q; want %s %s %q", class, f.Outcome, f.Exception, f.Error, outcome, exc, msg)
		}
	}
	check("Ok", "ok", "", "")
	check("Fails", "fail", "ArgumentError", "bad <arg>")
	check("Later", "retry", "Error", "later")
	check("Suicide", "fail", protocol.ExcDirtyExit, "Child process received unhandled signal pid ")
	check("Panics", "fail", "ResqueGo::Panic", "child panic")
	if !strings.HasSuffix(got["Suicide"].Error, "SIGKILL (signal 9)") {
		t.Errorf("DirtyExit wording %q differs from Ruby's", got["Suicide"].Error)
	}
	if items := e.list(e.client.Keys().Delayed(fixed.Unix() + 7)); len(items) != 1 {
		t.Errorf("the child's 7 s retry request was not honoured: %v", items)
	}
	for _, s := range e.list(e.client.Keys().Failed()) {
		if f := decodeFailed(t, s); f.Exception == "ArgumentError" && strings.Join(f.Backtrace, "") != "child.go:1" {
			t.Errorf("child backtrace lost: %+v", f)
		}
	}
}
