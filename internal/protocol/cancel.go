package protocol

import (
	"errors"
	"strings"
	"time"
)

// CancelTTL is how long a stored cancel request lives: long enough for a
// worker whose subscription dropped to reconnect and read it, short enough
// that nothing accumulates. A request names one claim, so one read late
// does nothing.
const CancelTTL = 10 * time.Minute

// Cancel is a request to cancel the job of one claim: the slot's worker id
// and its claim sequence (ClaimSeqs), so that it never reaches the next job
// of that slot. Retry lets the job's retry policy apply to its failure.
type Cancel struct {
	WorkerID string
	Seq      string
	Retry    bool
}

// CancelKey is where a cancel request for a slot is stored (a string
// "<seq> <retry>", with CancelTTL): a worker reads it when its subscription
// to CancelChannel (re)connects.
func (k Keys) CancelKey(workerID string) string { return k.key("resque-go", "cancel", workerID) }

// CancelChannel is the Pub/Sub channel of cancel requests (message
// "<seq> <retry> <worker id>"): every resque-go worker process subscribes
// to it with one connection. The namespace is in its name because channels
// are shared by every database of a server.
func (k Keys) CancelChannel() string { return k.key("resque-go", "cancel") }

// ErrBadCancel is a cancel message or stored value that cannot be read.
var ErrBadCancel = errors.New("protocol: bad cancel request")

// DecodeCancelMessage reads a CancelChannel message.
func DecodeCancelMessage(msg []byte) (Cancel, error) {
	seq, rest, ok1 := strings.Cut(string(msg), " ")
	retry, wid, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || seq == "" || wid == "" || (retry != "0" && retry != "1") {
		return Cancel{}, ErrBadCancel
	}
	return Cancel{WorkerID: wid, Seq: seq, Retry: retry == "1"}, nil
}

// DecodeStoredCancel reads the value of CancelKey(workerID).
func DecodeStoredCancel(workerID string, v []byte) (Cancel, error) {
	return DecodeCancelMessage(append(append(v, ' '), workerID...))
}

// CancelFlag is the retry flag as a cancel message writes it.
func CancelFlag(retry bool) string {
	if retry {
		return "1"
	}
	return "0"
}
