package bench

import (
	"bytes"
	"os"
	"strconv"
)

// peakRSS reads a running process's peak resident set, VmHWM in
// /proc/<pid>/status, in bytes. wait4's ru_maxrss cannot serve on Linux:
// a child started by vfork and exec (os/exec) reports there the larger of
// its own peak and its parent's resident set at the exec, so a bench
// process that had grown (100,000 staged jobs) showed as the workers'
// peak.
func peakRSS(pid int) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(v), []byte(" kB"))), 10, 64)
			if err != nil {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}
