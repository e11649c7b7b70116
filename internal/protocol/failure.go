package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Exception names resque-go writes into failed entries.
const (
	ExcBadPayload     = "ResqueGo::BadPayload"
	ExcNoHandler      = "ResqueGo::NoHandler"
	ExcTimeout        = "ResqueGo::Timeout"
	ExcPanic          = "ResqueGo::Panic"
	ExcExecFailed     = "ResqueGo::ExecFailed"
	ExcDirtyExit      = "Resque::DirtyExit"
	ExcPruneDirtyExit = "Resque::PruneDeadWorkerDirtyExit"
	ExcCancelled      = "ResqueGo::Cancelled"
	// ExcWrongType: a key a job or a schedule entry needs (its queue, its
	// delayed bucket, its plan or plan slot) holds another type, a key
	// written by hand; the error names the key.
	ExcWrongType = "ResqueGo::WrongType"
	// ExcBadSchedule: a member of delayed_queue_schedule or plan_schedule
	// that is not a Unix time in seconds was taken off the schedule.
	ExcBadSchedule     = "ResqueGo::BadSchedule"
	RetriedByNoRetry   = "no retry"
	DirtyExitStillBusy = "Job still being processed"
)

// RetriedToQueue is the retried_by of a retries entry whose job went back to
// queue q as it was (a Ruby-shaped job has no id to name).
func RetriedToQueue(q string) string { return "queue:" + q }

// Failure is one entry of the failed (or retries) list.
type Failure struct {
	FailedAt    time.Time
	Payload     []byte // raw payload; embedded as is when it is a JSON object
	Exception   string
	Error       string
	Backtrace   []string
	Worker      string
	Queue       string
	ProcessedBy string
	RetriedBy   string // "" means "no retry"
}

// Encode writes the entry with Ruby Resque's key order, then the resque-v3
// fields processed_by and retried_by. backtrace is always an array.
func (f Failure) Encode() []byte {
	var b bytes.Buffer
	b.WriteString(`{"failed_at":`)
	b.Write(MarshalString(FormatFailedAt(f.FailedAt)))
	b.WriteString(`,"payload":`)
	b.Write(EmbedPayload(f.Payload))
	b.WriteString(`,"exception":`)
	b.Write(MarshalString(f.Exception))
	b.WriteString(`,"error":`)
	b.Write(MarshalString(f.Error))
	b.WriteString(`,"backtrace":[`)
	for i, line := range f.Backtrace {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(MarshalString(line))
	}
	b.WriteString(`],"worker":`)
	b.Write(MarshalString(f.Worker))
	b.WriteString(`,"queue":`)
	b.Write(MarshalString(f.Queue))
	b.WriteString(`,"processed_by":`)
	b.Write(MarshalString(f.ProcessedBy))
	b.WriteString(`,"retried_by":`)
	rb := f.RetriedBy
	if rb == "" {
		rb = RetriedByNoRetry
	}
	b.Write(MarshalString(rb))
	b.WriteByte('}')
	return b.Bytes()
}

// WorkerRecord is the decoded value of worker:<id>.
type WorkerRecord struct {
	Queue string
	// Source is the list the job came from (Source.List); "" for a queue.
	Source string
	RunAt  string
	// Payload is the raw payload the worker held. When the record embedded a
	// non-object payload as a JSON string, this is the original text.
	Payload []byte
}

// EncodeWorkerRecord writes {"queue","run_at","payload"} in Ruby's key order.
// The claim script builds the same bytes in Lua; this is used by tests and
// tools.
func EncodeWorkerRecord(queue string, runAt time.Time, payload []byte) []byte {
	return EncodeSourceRecord(QueueSource(queue), runAt, payload)
}

// EncodeSourceRecord is EncodeWorkerRecord for a job from any source.
func EncodeSourceRecord(src Source, runAt time.Time, payload []byte) []byte {
	queue := src.Queue
	var b bytes.Buffer
	b.WriteString(`{"queue":`)
	b.Write(MarshalString(queue))
	b.WriteString(`,"run_at":`)
	b.Write(MarshalString(FormatRunAt(runAt)))
	b.WriteString(`,"payload":`)
	b.Write(EmbedPayload(payload))
	b.WriteString(RecordSourceSuffix(src))
	b.WriteByte('}')
	return b.Bytes()
}

// RecordHead is a worker record up to its payload, for a job from src
// claimed at runAt (FormatRunAt): {"queue":"<q>","run_at":"<runAt>","payload":
func RecordHead(src Source, runAt string) string {
	return `{"queue":` + string(MarshalString(src.Queue)) + `,"run_at":` + string(MarshalString(runAt)) + `,"payload":`
}

// SourceOf is the source a record's job came from.
// A record naming no valid list is a queue's.
func (r WorkerRecord) SourceOf() Source {
	if !ValidList(r.Source) {
		return QueueSource(r.Queue)
	}
	return Source{Queue: r.Queue, List: r.Source}
}

// ParseWorkerRecord decodes worker:<id> as written by Ruby, PHP, node-resque
// or resque-go.
func ParseWorkerRecord(v []byte) (WorkerRecord, error) {
	var r struct {
		Queue   string          `json:"queue"`
		Source  string          `json:"source"`
		RunAt   json.RawMessage `json:"run_at"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(v, &r); err != nil {
		return WorkerRecord{}, fmt.Errorf("protocol: worker record is not JSON: %w", err)
	}
	rec := WorkerRecord{Queue: r.Queue, Source: r.Source, Payload: []byte(r.Payload)}
	_ = json.Unmarshal(r.RunAt, &rec.RunAt) // node writes a string too; anything else is ignored
	if len(r.Payload) > 0 && r.Payload[0] == '"' {
		var s string
		if err := json.Unmarshal(r.Payload, &s); err == nil {
			rec.Payload = UnembedPayload(s)
		}
	}
	if rec.Queue == "" {
		return rec, fmt.Errorf("protocol: worker record has no queue")
	}
	return rec, nil
}
