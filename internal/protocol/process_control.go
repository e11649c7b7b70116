package protocol

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ProcessControlTTL is how long a stored process request lives: long
// enough for a process whose subscription dropped to reconnect and read
// it, short enough that a request never meets a later process that reused
// the pid.
const ProcessControlTTL = 10 * time.Minute

// Process requests (resque-go process quiet|resume|stop). They are the
// signals of `resque-go work` sent through Redis: quiet is USR2 (no new
// job; running jobs go on; the process keeps heartbeating), resume is
// CONT, stop is QUIT (running jobs finish, then the process exits).
const (
	ActionQuiet  = "quiet"
	ActionResume = "resume"
	ActionStop   = "stop"
)

// ProcessControl is a request to one resque-go process, named by its host
// and pid. ID tells requests apart: a process applies a stored request it
// already applied from the channel only once.
type ProcessControl struct {
	Host   string
	PID    int
	Action string
	ID     string
}

// Target is the process as "host:pid".
func (r ProcessControl) Target() string { return ProcessTarget(r.Host, r.PID) }

// ProcessTarget writes a process as "host:pid", the first two parts of its
// worker ids.
func ProcessTarget(host string, pid int) string { return host + ":" + strconv.Itoa(pid) }

// ProcessControlKey is where the last request to a process is stored (a
// string "<action> <id>", with ProcessControlTTL): the process reads it
// when its subscription to ProcessControlChannel (re)connects.
func (k Keys) ProcessControlKey(host string, pid int) string {
	return k.key("resque-go", "control", host, strconv.Itoa(pid))
}

// ProcessControlChannel is the Pub/Sub channel of process requests
// (message "<action> <id> <host>:<pid>"). A resque-go worker process
// listens to it on the connection it subscribes to CancelChannel with.
func (k Keys) ProcessControlChannel() string { return k.key("resque-go", "control") }

// ErrBadProcessControl is a process request that cannot be read.
var ErrBadProcessControl = errors.New("protocol: bad process request")

// ValidAction reports whether a is one of the process request actions.
func ValidAction(a string) bool { return a == ActionQuiet || a == ActionResume || a == ActionStop }

// EncodeProcessControl writes r as a ProcessControlChannel message.
func EncodeProcessControl(r ProcessControl) string {
	return r.Action + " " + r.ID + " " + r.Target()
}

// DecodeProcessControl reads a ProcessControlChannel message.
func DecodeProcessControl(msg []byte) (ProcessControl, error) {
	action, rest, ok1 := strings.Cut(string(msg), " ")
	id, target, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || id == "" || !ValidAction(action) {
		return ProcessControl{}, ErrBadProcessControl
	}
	host, pid, err := ParseProcessTarget(target)
	if err != nil || strings.Contains(target, " ") {
		return ProcessControl{}, ErrBadProcessControl
	}
	return ProcessControl{Host: host, PID: pid, Action: action, ID: id}, nil
}

// DecodeStoredProcessControl reads the value of ProcessControlKey(host, pid).
func DecodeStoredProcessControl(host string, pid int, v []byte) (ProcessControl, error) {
	return DecodeProcessControl([]byte(string(v) + " " + ProcessTarget(host, pid)))
}

// ParseProcessTarget reads a process as an operator names it: "host:pid",
// or any of its worker ids (host:pid-slot:queues, host:pid:queues).
func ParseProcessTarget(s string) (host string, pid int, err error) {
	if id, err := ParseWorkerID(s); err == nil {
		return id.Host, id.PID, nil
	}
	host, pidStr, ok := strings.Cut(s, ":")
	if ok && host != "" {
		pidStr, _, _ = strings.Cut(pidStr, "-") // host:pid-slot
		if pid, err := strconv.Atoi(pidStr); err == nil && pid > 0 {
			return host, pid, nil
		}
	}
	return "", 0, fmt.Errorf("protocol: process %q: want host:pid or a worker id (host:pid-slot:queues)", s)
}
