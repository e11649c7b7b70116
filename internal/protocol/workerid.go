package protocol

import (
	"fmt"
	"strconv"
	"strings"
)

// WorkerID is a parsed worker id: <host>:<pid>[-<slot>]:<queues>.
type WorkerID struct {
	Host   string
	PID    int
	Slot   int // 0 when the id has no slot suffix
	Queues string
}

// String formats the id. resque-web splits ids on ":" and needs three parts,
// so Queues must be non-empty.
func (w WorkerID) String() string {
	pid := strconv.Itoa(w.PID)
	if w.Slot > 0 {
		pid += "-" + strconv.Itoa(w.Slot)
	}
	return w.Host + ":" + pid + ":" + w.Queues
}

// ParseWorkerID parses ids written by Ruby, PHP, node-resque and resque-go.
// Queue names may contain ":", so everything after the second ":" is Queues.
func ParseWorkerID(id string) (WorkerID, error) {
	host, rest, ok := strings.Cut(id, ":")
	if !ok || host == "" {
		return WorkerID{}, fmt.Errorf("protocol: worker id %q: want host:pid:queues", id)
	}
	pidPart, queues, ok := strings.Cut(rest, ":")
	if !ok || queues == "" {
		return WorkerID{}, fmt.Errorf("protocol: worker id %q: want host:pid:queues", id)
	}
	w := WorkerID{Host: host, Queues: queues}
	pidStr, slotStr, hasSlot := strings.Cut(pidPart, "-")
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 {
		return WorkerID{}, fmt.Errorf("protocol: worker id %q: pid %q is not a positive number", id, pidStr)
	}
	w.PID = pid
	if hasSlot {
		slot, err := strconv.Atoi(slotStr)
		if err != nil || slot <= 0 {
			return WorkerID{}, fmt.Errorf("protocol: worker id %q: slot %q is not a positive number", id, slotStr)
		}
		w.Slot = slot
	}
	return w, nil
}
