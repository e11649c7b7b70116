package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/resque-go/resque-go/client"
)

// The JSON shapes of the API (and the data of the pages). Every text that
// comes from a payload is valid UTF-8 here: invalid bytes read as U+FFFD.

type statsView struct {
	Processed     int64 `json:"processed"`
	Failed        int64 `json:"failed"`
	FailedEntries int64 `json:"failed_entries"`
	Pending       int64 `json:"pending"`
	Queues        int   `json:"queues"`
	Workers       int   `json:"workers"`
	Working       int   `json:"working"`
}

type queueView struct {
	Name       string     `json:"name"`
	Size       int64      `json:"size"`
	Oldest     *time.Time `json:"oldest"`
	AgeSeconds *int64     `json:"age_seconds"`
	// Paused is set on the Queues page and route, not in the overview.
	Paused bool `json:"paused"`
}

// setAsideView is a key a worker set aside: what was not done because of
// it and when it was last met.
type setAsideView struct {
	Key        string     `json:"key"`
	What       string     `json:"what"`
	At         *time.Time `json:"at"`
	AgeSeconds *int64     `json:"age_seconds"`
}

type jobView struct {
	Queue      string          `json:"queue,omitempty"`
	Class      string          `json:"class"`
	ID         string          `json:"id,omitempty"`
	Args       json.RawMessage `json:"args"`
	EnqueuedAt *time.Time      `json:"enqueued_at"`
	Invalid    string          `json:"invalid,omitempty"`
	// Payload is the payload as JSON when it is JSON, else as a string.
	Payload json.RawMessage `json:"payload"`
}

type workerView struct {
	ID             string     `json:"id"`
	Host           string     `json:"host"`
	PID            int        `json:"pid"`
	Queues         []string   `json:"queues"`
	Started        *time.Time `json:"started"`
	Heartbeat      *time.Time `json:"heartbeat"`
	Job            *jobView   `json:"job"`
	RunAt          *time.Time `json:"run_at"`
	RunningSeconds *int64     `json:"running_seconds"`
	// Runtime is "resque-go", "ruby", "php", "node" or "" (unknown).
	Runtime string `json:"runtime"`
}

type redisView struct {
	Version          string `json:"version"`
	Mode             string `json:"mode"`
	Role             string `json:"role"`
	UptimeSeconds    int64  `json:"uptime_seconds"`
	ConnectedClients int64  `json:"connected_clients"`
	UsedMemory       int64  `json:"used_memory"`
	PeakMemory       int64  `json:"peak_memory"`
	MaxMemory        int64  `json:"max_memory"`
	MaxMemoryPolicy  string `json:"max_memory_policy"`
	OpsPerSec        int64  `json:"ops_per_sec"`
}

type overviewView struct {
	Time    time.Time    `json:"time"`
	Stats   statsView    `json:"stats"`
	Queues  []queueView  `json:"queues"`
	Workers []workerView `json:"workers"`
	// Processes are the resque-go processes of the workers (hosts.go);
	// Schedulers the scheduler processes.
	Processes  []processView   `json:"processes"`
	Schedulers []schedulerView `json:"schedulers"`
	Redis      redisView       `json:"redis"`
	// SetAside are the keys written by hand that workers set aside in the
	// last day (client.Stats.SetAside).
	SetAside []setAsideView `json:"set_aside"`
	// Error is what went wrong reading Redis; the rest is then empty.
	Error string `json:"error,omitempty"`
}

type failedView struct {
	Index int64 `json:"index"`
	// Digest identifies the entry by its bytes: actions on one entry give
	// it with the index and act only on an entry with these bytes.
	Digest      string     `json:"digest"`
	FailedAt    *time.Time `json:"failed_at"`
	Queue       string     `json:"queue"`
	Class       string     `json:"class"`
	Exception   string     `json:"exception"`
	Error       string     `json:"error"`
	Backtrace   []string   `json:"backtrace"`
	Worker      string     `json:"worker"`
	ProcessedBy string     `json:"processed_by,omitempty"`
	RetriedAt   *time.Time `json:"retried_at"`
	Retried     bool       `json:"retried"`
	Unreadable  bool       `json:"unreadable,omitempty"`
	Job         jobView    `json:"job"`
}

type auditView = client.AuditEntry

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func agePtr(now, t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	s := int64(now.Sub(t) / time.Second)
	return &s
}

// clean makes s valid UTF-8.
func clean(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// rawJSON is b when it is valid JSON, else b as a JSON string.
func rawJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	if utf8.Valid(b) && json.Valid(b) {
		return json.RawMessage(b)
	}
	s, _ := json.Marshal(clean(string(b)))
	return s
}

func newJobView(j client.Job) jobView {
	v := jobView{Queue: clean(j.Queue), Class: clean(j.Class), ID: clean(j.ID), EnqueuedAt: timePtr(j.EnqueuedAt),
		Invalid: clean(j.Invalid), Payload: rawJSON(j.Payload), Args: rawJSON(j.Args)}
	if j.Args == nil {
		v.Args = json.RawMessage("null")
	}
	return v
}

func digestOf(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16])
}

func newFailedView(f client.FailedJob) failedView {
	bt := make([]string, len(f.Backtrace))
	for i, l := range f.Backtrace {
		bt[i] = clean(l)
	}
	v := failedView{Index: f.Index, Digest: digestOf(f.Raw), FailedAt: timePtr(f.FailedAt), Queue: clean(f.Job.Queue),
		Class: clean(f.Job.Class), Exception: clean(f.Exception), Error: clean(f.Error), Backtrace: bt,
		Worker: clean(f.Worker), ProcessedBy: clean(f.ProcessedBy), RetriedAt: timePtr(f.RetriedAt), Retried: f.Retried,
		Unreadable: f.Unreadable, Job: newJobView(f.Job)}
	if f.Unreadable {
		v.Job.Payload = rawJSON(f.Raw)
	}
	return v
}

func newWorkerView(now time.Time, w client.WorkerInfo) workerView {
	v := workerView{ID: clean(w.ID), Host: clean(w.Host), PID: w.PID, Queues: w.Queues, Started: timePtr(w.Started),
		Heartbeat: timePtr(w.Heartbeat), Runtime: w.Runtime}
	for i, q := range v.Queues {
		v.Queues[i] = clean(q)
	}
	if v.Queues == nil {
		v.Queues = []string{}
	}
	if w.Job != nil {
		j := newJobView(*w.Job)
		v.Job, v.RunAt, v.RunningSeconds = &j, timePtr(w.RunAt), agePtr(now, w.RunAt)
	}
	return v
}

func newQueueView(now time.Time, q client.QueueDetail) queueView {
	return queueView{Name: clean(q.Name), Size: q.Size, Oldest: timePtr(q.Oldest), AgeSeconds: agePtr(now, q.Oldest)}
}

// pretty is JSON indented for reading, or the text as it is when it is not
// JSON; at most max bytes of it (the rest is said to be cut).
func pretty(b []byte, max int) string {
	var buf bytes.Buffer
	if json.Valid(b) && json.Indent(&buf, b, "", "  ") == nil {
		b = buf.Bytes()
	}
	s := clean(string(b))
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return s[:cut] + "\n… (" + humanBytes(int64(len(s))) + " in all; the API returns it whole)"
	}
	return s
}

// clip is s on one line, at most n runes.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(clean(s)), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
