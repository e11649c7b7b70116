package protocol

import (
	"strconv"
	"strings"
)

// Process is resque-go's runtime record of one process:
// <ns>:resque-go:process:<host>:<pid>. No other Resque software reads or
// writes it; it expires on its own when the process stops refreshing it.
func (k Keys) Process(host string, pid int) string {
	return k.key("resque-go", "process", host, strconv.Itoa(pid))
}

// ProcessPattern matches every runtime record (for SCAN).
func (k Keys) ProcessPattern() string { return k.key("resque-go", "process", "*") }

// ParseProcess splits a runtime record key into host and pid.
func (k Keys) ParseProcess(key string) (host string, pid int, ok bool) {
	return k.parseHostPID("process", key)
}

// parseHostPID splits <ns>:resque-go:<kind>:<host>:<pid> into host and pid.
// Host names have no ":" (they are the first part of worker ids).
func (k Keys) parseHostPID(kind, key string) (host string, pid int, ok bool) {
	rest, ok := strings.CutPrefix(key, k.key("resque-go", kind, ""))
	if !ok {
		return "", 0, false
	}
	host, pidStr, ok := strings.Cut(rest, ":")
	if !ok || host == "" {
		return "", 0, false
	}
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 {
		return "", 0, false
	}
	return host, pid, true
}

// SchedulerRecord is the runtime record of one `resque-go scheduler`
// process: <ns>:resque-go:scheduler:<host>:<pid> (JSON, SchedulerInfo). It
// expires on its own when the process stops refreshing it.
func (k Keys) SchedulerRecord(host string, pid int) string {
	return k.key("resque-go", "scheduler", host, strconv.Itoa(pid))
}

// SchedulerPattern matches every scheduler record (for SCAN).
func (k Keys) SchedulerPattern() string { return k.key("resque-go", "scheduler", "*") }

// ParseSchedulerRecord splits a scheduler record key into host and pid.
func (k Keys) ParseSchedulerRecord(key string) (host string, pid int, ok bool) {
	return k.parseHostPID("scheduler", key)
}

// SchedulerPid is resque-v3's record of the host's scheduler process:
// scheduler_pid:<hostname> holds its pid, SET when it starts and deleted
// when it stops cleanly (resque-v3's SchedulerProcess). The v3 init
// process reads it to know that a scheduler runs on the host (it starts
// its own only when that pid is gone) and signals that pid: HUP to reload,
// USR1 to reopen logs, TERM when it shuts down.
func (k Keys) SchedulerPid(hostname string) string { return k.key("scheduler_pid", hostname) }

// KeepsSchedulerPid reports whether a scheduler keeps SchedulerPid: in the
// resque-v3 namespace, where v3 tooling reads it.
func (k Keys) KeepsSchedulerPid() bool { return k.Namespace() == V3Namespace }
