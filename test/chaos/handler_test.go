package chaos

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// The workers run every job as `handler.sh`, which starts this test binary
// with handlerEnv=1 and dirEnv naming the run's directory.
const (
	handlerEnv = "CHAOS_HANDLER"
	dirEnv     = "CHAOS_DIR"
)

// Files of a run's directory the handlers append to, one line per event,
// with O_APPEND (a small write is one atomic append).
const (
	// ledgerFile: "<key> <attempt> <worker pid> <outcome> <job id>
	// <start> <end>" when a run ends (outcome ok, fail or retry; times in
	// Unix milliseconds).
	ledgerFile = "ledger"
	// startedFile: "<key> <attempt> <worker pid> <job id> <start>" when a
	// run starts; a start with no end is a run cut short by a kill.
	startedFile = "started"
	// violationsFile: "<key> <worker pid>" for a Serial job that found
	// another Serial job running.
	violationsFile = "violations"
	serialLockFile = "serial.lock"
)

// Job classes: what the handler does with each.
const (
	classOk      = "Ok"      // succeeds
	classSlow    = "Slow"    // sleeps 1-3 s, succeeds
	classFail    = "Fail"    // fails at every attempt: ends in failed
	classRetry   = "Retry"   // asks for a retry (exit 75) at its first attempt, then succeeds
	classDelayed = "Delayed" // enqueued with In, succeeds
	classSerial  = "Serial"  // on the serial queue: checks that no other Serial job runs
	classUnique  = "Unique"  // enqueued with a unique id, sleeps a little, succeeds
	classPlan    = "Plan"    // fired by a plan, succeeds
)

// handle runs one job: the payload on stdin, args [key, sleep ms].
func handle() int {
	dir := os.Getenv(dirEnv)
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos handler:", err)
		return 1
	}
	var p struct {
		Class     string            `json:"class"`
		Args      []json.RawMessage `json:"args"`
		ID        string            `json:"id"`
		FailCount int               `json:"failCount"`
	}
	var key string
	var sleepMS int
	if err := json.Unmarshal(raw, &p); err != nil || len(p.Args) != 2 ||
		json.Unmarshal(p.Args[0], &key) != nil || json.Unmarshal(p.Args[1], &sleepMS) != nil {
		fmt.Fprintf(os.Stderr, "chaos handler: unexpected payload %s\n", raw)
		return 1
	}
	if p.Class == classPlan {
		key += "/" + p.ID // every fire of a plan is a job of its own
	}
	pid := 0
	if w, err := protocol.ParseWorkerID(os.Getenv("RESQUE_WORKER")); err == nil {
		pid = w.PID
	}
	attempt := p.FailCount + 1
	began := time.Now().UnixMilli()
	appendLine(dir, startedFile, fmt.Sprintf("%s %d %d %s %d", key, attempt, pid, p.ID, began))
	if p.Class == classSerial {
		lock, ok := serialLock(dir)
		if !ok {
			appendLine(dir, violationsFile, fmt.Sprintf("%s %d", key, pid))
		}
		defer runtime.KeepAlive(lock) // its finalizer would close it
	}
	time.Sleep(time.Duration(sleepMS) * time.Millisecond)
	outcome, code := "ok", 0
	switch {
	case p.Class == classFail:
		outcome, code = "fail", 1
	case p.Class == classRetry && attempt == 1:
		outcome, code = "retry", 75
	}
	appendLine(dir, ledgerFile, fmt.Sprintf("%s %d %d %s %s %d %d", key, attempt, pid, outcome, p.ID, began, time.Now().UnixMilli()))
	if code != 0 {
		fmt.Fprintf(os.Stderr, "chaos: %s attempt %d: %s\n", key, attempt, outcome)
	}
	return code
}

// serialLock takes an exclusive flock on the run's serial lock file,
// held until this process exits (a killed handler lets go of it too); false
// when another handler holds it.
func serialLock(dir string) (*os.File, bool) {
	f, err := os.OpenFile(filepath.Join(dir, serialLockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos handler:", err)
		return nil, true
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	return f, !errors.Is(err, syscall.EWOULDBLOCK)
}

func appendLine(dir, name, line string) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos handler:", err)
		return
	}
	defer f.Close()
	if _, err := f.Write([]byte(line + "\n")); err != nil {
		fmt.Fprintln(os.Stderr, "chaos handler:", err)
	}
}
