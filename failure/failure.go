// Package failure holds the failed list's types: an Entry decoded
// tolerantly from Resque's layout (Parse), the Filter that selects entries
// and the errors of an entry that moved or cannot be retried. A program
// lists, retries and removes failed jobs through package client (Failed,
// FailedWhere, RetryFailed, RemoveFailed, ClearFailed ...), where every
// change to one entry re-checks its bytes in the same atomic step.
package failure

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Entry is one failed entry, decoded tolerantly: its fields as Resque
// writes them, and the entry's bytes in the list.
type Entry struct {
	Index       int64           `json:"index"`
	FailedAt    string          `json:"failed_at"`
	Payload     json.RawMessage `json:"payload"`
	Class       string          `json:"class"`
	Exception   string          `json:"exception"`
	Error       string          `json:"error"`
	Backtrace   []string        `json:"backtrace"`
	Worker      string          `json:"worker"`
	Queue       string          `json:"queue"`
	ProcessedBy string          `json:"processed_by,omitempty"`
	RetriedBy   string          `json:"retried_by,omitempty"`
	RetriedAt   string          `json:"retried_at,omitempty"`
	// Raw is the entry's bytes in the list.
	Raw []byte `json:"-"`
	// Unreadable is set when the entry is not a JSON object.
	Unreadable bool `json:"unreadable,omitempty"`
}

// Parse decodes an entry at index of the failed list. An entry that is not
// a JSON object is returned with Unreadable set rather than an error, so
// listing never fails on garbage; a field of an unexpected type (a number,
// an object) is shown as its JSON text and costs nothing else.
func Parse(index int64, raw []byte) Entry { return Entry(protocol.ParseFailedEntry(index, raw)) }

// Retryable reports whether the entry carries a payload and names a
// queue, or its payload is a mass-queue job that names none (it is
// retried through the mass queue's unassigned list).
func (e Entry) Retryable() bool { return protocol.FailedEntry(e).Retryable() }

// PayloadBytes is the job as it was queued: the payload object itself, or
// the original text of a payload that was recorded as a JSON string.
func (e Entry) PayloadBytes() []byte { return protocol.FailedEntry(e).PayloadBytes() }

// Filter selects entries; empty fields match everything.
type Filter struct {
	Queue     string
	Class     string
	Exception string // substring of the exception name
}

// Empty reports whether the filter selects every entry.
func (f Filter) Empty() bool { return f == Filter{} }

// Match reports whether e is selected.
func (f Filter) Match(e Entry) bool {
	return (f.Queue == "" || e.Queue == f.Queue) &&
		(f.Class == "" || e.Class == f.Class) &&
		(f.Exception == "" || strings.Contains(e.Exception, f.Exception))
}

// ErrGone is returned when the selected entry is no longer in the list.
var ErrGone = errors.New("failure: entry is no longer in the failed list")

// ErrNotRetryable is returned for an entry without a queue or payload.
var ErrNotRetryable = errors.New("failure: entry has no queue or payload to retry")

// Result counts what a bulk operation did.
type Result struct {
	Done    int `json:"done"`    // entries retried or removed
	Gone    int `json:"gone"`    // selected entries that vanished meanwhile
	Skipped int `json:"skipped"` // entries that could not be retried
}
