package worker

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// $RESQUE_RESULT files. An exec handler names one per job inside a
// directory of its own (resultDir), created at its first job in
// ExecOptions.ResultDir and held with a shared flock for the rest of the
// process's life. The job's file is named, not created: a command that
// writes a reply creates it, and the worker reads and removes it after the
// job. So a job that leaves no reply costs one failed open, where creating,
// locking and removing a file per job cost 70-190 µs of the worker's CPU on
// ext4 (BenchmarkExecOverhead). Names are never reused, so a process a job
// left running cannot write into a later job's reply; what it writes late
// is removed by the handler's next sweep.
//
// A worker killed mid-job cannot remove its directory, but its lock dies
// with it, so a later sweep (any exec handler's first job, then hourly) can
// tell a dead worker's directory from a live one's without trusting pids,
// which other pid namespaces sharing the directory may reuse. A fork-mode
// child runs one job and exits: it creates, locks and removes a single file
// (resultPrefix...resultSuffix) instead, which the same sweep removes when
// its creator died; so did every job before resultDir existed.
const (
	resultDirPrefix = "resque-go-results-"
	resultPrefix    = "resque-go-result-"
	resultSuffix    = ".json"
	// resultMinAge keeps a sweep away from a file or directory created an
	// instant ago, before its creator could lock it.
	resultMinAge = time.Minute
	// resultSweepEvery is how often a long-running handler sweeps again.
	resultSweepEvery = time.Hour
)

// resultDir is an exec handler's directory of job result files.
type resultDir struct {
	parent string
	mu     sync.Mutex
	path   string   // "" until the first job, or after creating it failed
	lock   *os.File // the directory, flock'ed (shared) while path is in use
	next   uint64
	active map[string]bool // names of the jobs running now
}

// name returns the path a job's reply goes to, creating the directory when
// there is none yet or it was removed (by a tmp cleaner, say).
func (d *resultDir) name() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.path != "" {
		if _, err := os.Stat(d.path); err != nil {
			d.lock.Close()
			d.path, d.lock = "", nil
		}
	}
	if d.path == "" {
		path, lock, err := createLockedDir(d.parent)
		if err != nil {
			return "", err
		}
		d.path, d.lock = path, lock
		d.active = make(map[string]bool)
	}
	d.next++
	name := strconv.FormatUint(d.next, 10) + resultSuffix
	d.active[name] = true
	return filepath.Join(d.path, name), nil
}

// done reads the reply a job left at path (nil when it wrote none) and
// removes the file.
func (d *resultDir) done(path string) []byte {
	b, err := os.ReadFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		_ = os.Remove(path)
	}
	d.mu.Lock()
	delete(d.active, filepath.Base(path))
	d.mu.Unlock()
	return b
}

// sweepOwn removes what processes of finished jobs wrote late: every file
// in the directory that no running job owns.
func (d *resultDir) sweepOwn() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.path == "" {
		return 0
	}
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if !d.active[e.Name()] && os.RemoveAll(filepath.Join(d.path, e.Name())) == nil {
			n++
		}
	}
	return n
}

func createLockedDir(parent string) (string, *os.File, error) {
	path, err := os.MkdirTemp(parent, resultDirPrefix)
	if err != nil {
		return "", nil, err
	}
	f, err := os.Open(path)
	if err == nil {
		if err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
			f.Close()
		}
	}
	if err != nil {
		_ = os.Remove(path)
		return "", nil, err
	}
	return path, f, nil
}

// createResultFile creates and locks a job's result file in dir (a
// fork-mode child's, which runs one job).
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

// resultSweeper removes the result files and directories of dead workers
// from dir, and the late writes in its handler's own directory (own; nil
// for the fork-mode parent, whose children make single files).
type resultSweeper struct {
	dir  string
	own  *resultDir
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
		if s.own != nil {
			s.own.sweepOwn()
		}
	}
}

// sweepResults removes the result files and directories in dir that nobody
// holds a lock on and that are older than resultMinAge; it returns how many
// it removed. Errors only mean one stays for the next sweep.
func sweepResults(dir string, now time.Time) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		isFile := e.Type().IsRegular() && strings.HasPrefix(name, resultPrefix) && strings.HasSuffix(name, resultSuffix)
		isDir := e.IsDir() && strings.HasPrefix(name, resultDirPrefix)
		if !isFile && !isDir {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < resultMinAge {
			continue
		}
		if removeIfUnlocked(filepath.Join(dir, name), isDir) {
			n++
		}
	}
	return n
}

func removeIfUnlocked(path string, isDir bool) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false // a live worker's job still uses it
	}
	if isDir {
		return os.RemoveAll(path) == nil
	}
	return os.Remove(path) == nil
}
