package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// FailedEntry is one entry of the failed list, decoded tolerantly: Ruby,
// php-resque, node-resque and resque-go write different key orders and time
// formats.
type FailedEntry struct {
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

// ParseFailedEntry decodes an entry; an entry that is not a JSON object is returned
// with Unreadable set rather than an error, so listing never fails on
// garbage. Each field is decoded on its own: one of an unexpected type
// (a number, an object) is shown as its JSON text and costs nothing else.
func ParseFailedEntry(index int64, raw []byte) FailedEntry {
	e := FailedEntry{Index: index, Raw: raw}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(raw, &f); err != nil || f == nil {
		if err == nil {
			err = errors.New("not a JSON object")
		}
		e.Unreadable, e.Error = true, "unreadable entry: "+err.Error()
		return e
	}
	e.FailedAt, e.Exception, e.Error = textField(f["failed_at"]), textField(f["exception"]), textField(f["error"])
	e.Worker, e.Queue = textField(f["worker"]), textField(f["queue"])
	e.ProcessedBy, e.RetriedBy, e.RetriedAt = textField(f["processed_by"]), textField(f["retried_by"]), textField(f["retried_at"])
	if p := bytes.TrimSpace(f["payload"]); len(p) > 0 && !bytes.Equal(p, []byte("null")) {
		e.Payload = p
	}
	// backtrace: an array of lines, or (some writers) one string
	if err := json.Unmarshal(f["backtrace"], &e.Backtrace); err != nil {
		if s := textField(f["backtrace"]); s != "" {
			e.Backtrace = strings.Split(s, "\n")
		}
	}
	if p, err := DecodePayload(e.PayloadBytes()); err == nil {
		e.Class = p.Class
	}
	return e
}

// textField is a field's string value; null or absent is "", any other JSON
// value its text.
func textField(v json.RawMessage) string {
	var s string
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return ""
	}
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// Retryable reports whether the entry carries a payload and names a
// queue, or its payload is a mass-queue job that names none (IsMassJob: it
// is retried through unassigned).
func (e FailedEntry) Retryable() bool {
	return !e.Unreadable && len(e.Payload) > 0 && (e.Queue != "" || IsMassJob(e.PayloadBytes()))
}

// PayloadBytes is the job as it was queued: the payload object itself, or
// the original text of a payload that was recorded as a JSON string.
func (e FailedEntry) PayloadBytes() []byte {
	p := bytes.TrimSpace(e.Payload)
	if len(p) > 0 && p[0] == '"' {
		var s string
		if json.Unmarshal(p, &s) == nil {
			return UnembedPayload(s)
		}
	}
	return p
}
