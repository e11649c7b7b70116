package worker_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/resque-go/resque-go/worker"
)

// A fork-mode child inherits its result descriptor without close-on-exec;
// the processes its job starts must not get it (they could keep the parent
// waiting for the result, or write to it). Not parallel: while the test
// clears the flag, any process this test binary starts would inherit it.
func TestRunChildResultNotInherited(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	fd := -1
	rc, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Control(func(f uintptr) {
		fd = int(f)
		_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, f, syscall.F_SETFD, 0)
	}); err != nil {
		t.Fatal(err)
	}
	var fds []string
	reg := worker.NewRegistry()
	reg.Register("Ls", func(ctx context.Context, j *worker.Job) error {
		out, err := exec.Command("ls", "/proc/self/fd").Output()
		fds = strings.Fields(string(out))
		return err
	})
	if code := worker.RunChild(context.Background(), reg, "q", "testhost:1:q", strings.NewReader(`{"class":"Ls","args":[]}`), w); code != 0 {
		t.Fatalf("RunChild = %d", code)
	}
	for _, f := range fds {
		if f == strconv.Itoa(fd) {
			t.Errorf("the job's process inherited the result descriptor %d: %v", fd, fds)
		}
	}
	if len(fds) == 0 {
		t.Error("the job saw no descriptors at all")
	}
}
