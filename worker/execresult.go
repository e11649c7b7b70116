package worker

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// $RESQUE_RESULT files: one per job, created where ExecOptions.ResultDir
// says. The process that created one holds a shared flock on it until the
// job is over and then removes it. A worker killed mid-job cannot remove
// its file, but its lock dies with it, so a later sweep (any exec handler's
// first job, then hourly) can tell a dead worker's file from a live one's
// without trusting pids, which other pid namespaces sharing the directory
// may reuse.
const (
	resultPrefix = "resque-go-result-"
	resultSuffix = ".json"
	// resultMinAge keeps a sweep away from a file created an instant ago,
	// before its creator could lock it.
	resultMinAge = time.Minute
	// resultSweepEvery is how often a long-running handler sweeps again.
	resultSweepEvery = time.Hour
)

// createResultFile creates and locks a job's result file in dir.
func createResultFile(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, resultPrefix+"*"+resultSuffix)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// removeResultFile removes the file before giving up its lock, so a sweep
// never removes a file that is still in use.
func removeResultFile(f *os.File) {
	_ = os.Remove(f.Name())
	_ = f.Close()
}

// resultSweeper removes the result files of dead workers from dir.
type resultSweeper struct {
	dir  string
	mu   sync.Mutex
	last time.Time
}

// maybe sweeps if the last sweep is older than resultSweepEvery (or none
// ran yet).
func (s *resultSweeper) maybe() {
	s.mu.Lock()
	due := s.last.IsZero() || time.Since(s.last) >= resultSweepEvery
	if due {
		s.last = time.Now()
	}
	s.mu.Unlock()
	if due {
		sweepResults(s.dir, time.Now())
	}
}

// sweepResults removes the result files in dir that nobody holds a lock on
// and that are older than resultMinAge; it returns how many it removed.
// Errors only mean a file stays for the next sweep.
func sweepResults(dir string, now time.Time) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, resultPrefix) || !strings.HasSuffix(name, resultSuffix) {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < resultMinAge {
			continue
		}
		if removeIfUnlocked(filepath.Join(dir, name)) {
			n++
		}
	}
	return n
}

func removeIfUnlocked(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false // a live worker's job still uses it
	}
	return os.Remove(path) == nil
}
