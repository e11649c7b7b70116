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
