package stats

import (
	"encoding/json"
	"io"
	"math"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Snapshot is one reading of a Resque cluster. WriteJSON writes it as
// `resque-go stats --json` prints it; those field names are stable: fields
// may be added, never renamed. Slices are [] rather than null when empty.
type Snapshot struct {
	// Time is the Redis server's clock when the snapshot was read; the ages
	// Render shows are relative to it.
	Time time.Time `json:"time"`
	// HostFilter is the host the snapshot was restricted to ("" = all).
	HostFilter string  `json:"host_filter"`
	Totals     Totals  `json:"totals"`
	Queues     []Queue `json:"queues"`
	// PausedQueues are the queues with a pause key (`queue pause`,
	// resque-pause, resque-queue-control), sorted, whether or not they are
	// in Queues.
	PausedQueues []string `json:"paused_queues"`
	// Workers are every registered worker id (Ruby, PHP, Node, resque-go).
	Workers []Worker `json:"workers"`
	// Hosts groups the runtime records of resque-go processes by host.
	Hosts []Host `json:"hosts"`
	// Schedulers are the runtime records of `resque-go scheduler`
	// processes (and pool-run ones), by host and pid.
	Schedulers []SchedulerInfo `json:"schedulers"`
	// Problems names the keys that could not be read: a counter that is not
	// an integer, a key of another type (written by hand). Each reads as
	// absent (0, empty) above; the rest of the snapshot is whole.
	Problems []KeyProblem `json:"problems"`
	// SetAside are the keys written by hand (of another type, or holding
	// a value no resque-go process writes) that workers' steps set aside
	// in the last day, by key: fix or delete each.
	SetAside []SetAsideKey `json:"set_aside"`

	// UnreadTotals are the Totals (by JSON name: "processed", "failed",
	// "retries", "failed_list", "retries_list") whose key is listed under
	// Problems; Render shows them as "?".
	UnreadTotals map[string]bool `json:"-"`
}

// SetAsideKey is a key a worker's step set aside: what it did not do
// because of the key, and when it last met it.
type SetAsideKey struct {
	Key  string    `json:"key"`
	What string    `json:"what"`
	At   time.Time `json:"-"`
}

// KeyProblem is a key client.Snapshot could not read, and why.
type KeyProblem struct {
	Key     string `json:"key"`
	Problem string `json:"problem"`
}

// Totals are the cluster-wide numbers. Processed, Failed and Retries are the
// global stat:* counters and FailedList and RetriesList the lengths of the
// failed and retries lists: none of them is per host, so HostFilter leaves
// them alone, as it does Pending. Workers, Working and Processes count what
// the filter kept.
type Totals struct {
	Processed   int64 `json:"processed"` // stat:processed: successes and failures (Ruby semantics)
	Failed      int64 `json:"failed"`    // stat:failed
	Retries     int64 `json:"retries"`   // stat:retries
	FailedList  int64 `json:"failed_list"`
	RetriesList int64 `json:"retries_list"`
	Pending     int64 `json:"pending"` // jobs waiting in every queue
	Queues      int   `json:"queues"`
	Workers     int   `json:"workers"`
	Working     int   `json:"working"`
	Processes   int   `json:"processes"` // runtime records
}

// QueueCounters are the queuestat:<host>:<stat>:<queue> counters of one
// queue on one host, or summed over hosts.
type QueueCounters struct {
	Dequeued  int64 `json:"dequeued"`
	Processed int64 `json:"processed"` // successes only (resque-v3 layout)
	Failed    int64 `json:"failed"`
	Retries   int64 `json:"retries"`
	// QueueTimeMs and ProcessingTimeMs are the summed milliseconds.
	QueueTimeMs      int64 `json:"queue_time_ms"`
	ProcessingTimeMs int64 `json:"processing_time_ms"`
	// AvgQueueTimeMs is QueueTimeMs / Dequeued. Payloads without queue_time
	// (Ruby's) count as dequeued but add no wait, so they pull it down.
	AvgQueueTimeMs float64 `json:"avg_queue_time_ms"`
	// AvgProcessingTimeMs is ProcessingTimeMs / (Processed + Failed + Retries).
	AvgProcessingTimeMs float64 `json:"avg_processing_time_ms"`
}

// Queue is one queue: its pending length and counters summed over Hosts.
type Queue struct {
	Name    string `json:"name"`
	Pending int64  `json:"pending"`
	// Problem, when set, says why queue:<name> could not be read (it holds
	// another type); Pending is then 0.
	Problem string `json:"problem,omitempty"`
	// Paused: the queue's pause key is set; workers take none of its jobs.
	Paused bool `json:"paused"`
	QueueCounters
	Hosts []QueueHost `json:"hosts"`
}

// QueueHost is one queue's counters on one host.
type QueueHost struct {
	Host string `json:"host"`
	QueueCounters
}

// Worker is one registered worker id. Host, PID, Slot and Queues come from
// the id; they are empty for an id that is not host:pid:queues.
type Worker struct {
	ID     string `json:"id"`
	Host   string `json:"host"`
	PID    int    `json:"pid"`
	Slot   int    `json:"slot"`
	Queues string `json:"queues"`
	// State is "working" while worker:<id> exists, else "idle".
	State string `json:"state"`
	// Queue, Class and RunAt describe the running job ("" when idle). Class
	// is the wrapped job_class for Rails ActiveJob payloads.
	Queue string `json:"queue"`
	Class string `json:"class"`
	RunAt string `json:"run_at"`
	// RunAt, Started and Heartbeat are as stored (Ruby's formats); "" when
	// absent. WriteJSON gives them in RFC 3339, the stored text in *_raw.
	Started   string `json:"started"`
	Heartbeat string `json:"heartbeat"`
	// HeartbeatIntervalS is set for resque-go workers only.
	HeartbeatIntervalS float64 `json:"heartbeat_interval_s"`
	// RSSBytes and CPUPercent are the worker's process's, from its runtime
	// record; null when it has none (other runtimes, or a dead process).
	RSSBytes   *uint64  `json:"rss_bytes"`
	CPUPercent *float64 `json:"cpu_percent"`
}

// Host is one host's resque-go processes. The host-wide numbers come from
// its most recently updated record.
type Host struct {
	Host           string    `json:"host"`
	UpdatedAt      time.Time `json:"updated_at"`
	HostCPUPercent float64   `json:"host_cpu_percent"`
	MemUsedPercent float64   `json:"mem_used_percent"`
	Load1          float64   `json:"load1"`
	Load5          float64   `json:"load5"`
	Load15         float64   `json:"load15"`
	// SlotsBusy, SlotsTotal and RSSBytes are summed over Processes. A
	// process's slots_busy is counted from its workers' worker:<id> records
	// (the working workers above) when its record lists worker ids, not
	// taken from the record, which is refreshed once per heartbeat.
	SlotsBusy  int      `json:"slots_busy"`
	SlotsTotal int      `json:"slots_total"`
	RSSBytes   uint64   `json:"rss_bytes"`
	Processes  []Record `json:"processes"`
}

// WriteJSON writes s as indented JSON and a newline, as every --json output
// of resque-go: times in UTC, RFC 3339 to the second (null for none), a
// worker's stored times also as stored (run_at_raw, started_raw,
// heartbeat_raw), and averages and percentages rounded as Render shows
// them.
func WriteJSON(w io.Writer, s *Snapshot) error {
	b, err := json.MarshalIndent(snapshotView(s), "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// The JSON views below embed the type they show and shadow the fields
// WriteJSON writes differently; every other field is written as it is.

type snapshotJSON struct {
	Snapshot
	Time       *string         `json:"time"`
	Queues     []queueJSON     `json:"queues"`
	Workers    []workerJSON    `json:"workers"`
	Hosts      []hostJSON      `json:"hosts"`
	Schedulers []schedulerJSON `json:"schedulers"`
	Problems   []KeyProblem    `json:"problems"` // after what they mark
	SetAside   []setAsideJSON  `json:"set_aside"`
}

type setAsideJSON struct {
	SetAsideKey
	At *string `json:"at"`
}

type queueJSON struct {
	Queue
	AvgQueueTimeMs      float64         `json:"avg_queue_time_ms"`
	AvgProcessingTimeMs float64         `json:"avg_processing_time_ms"`
	Hosts               []queueHostJSON `json:"hosts"`
}

type queueHostJSON struct {
	QueueHost
	AvgQueueTimeMs      float64 `json:"avg_queue_time_ms"`
	AvgProcessingTimeMs float64 `json:"avg_processing_time_ms"`
}

type workerJSON struct {
	Worker
	RunAt        *string  `json:"run_at"`
	RunAtRaw     string   `json:"run_at_raw"`
	Started      *string  `json:"started"`
	StartedRaw   string   `json:"started_raw"`
	Heartbeat    *string  `json:"heartbeat"`
	HeartbeatRaw string   `json:"heartbeat_raw"`
	CPUPercent   *float64 `json:"cpu_percent"`
}

type hostJSON struct {
	Host
	UpdatedAt      *string      `json:"updated_at"`
	HostCPUPercent float64      `json:"host_cpu_percent"`
	MemUsedPercent float64      `json:"mem_used_percent"`
	Load1          float64      `json:"load1"`
	Load5          float64      `json:"load5"`
	Load15         float64      `json:"load15"`
	Processes      []recordJSON `json:"processes"`
}

type recordJSON struct {
	Record
	StartedAt      *string `json:"started_at"`
	UpdatedAt      *string `json:"updated_at"`
	CPUPercent     float64 `json:"cpu_percent"`
	HostCPUPercent float64 `json:"host_cpu_percent"`
	MemUsedPercent float64 `json:"mem_used_percent"`
	Load1          float64 `json:"load1"`
	Load5          float64 `json:"load5"`
	Load15         float64 `json:"load15"`
}

type schedulerJSON struct {
	SchedulerInfo
	Started      *string `json:"started"`
	LastPass     *string `json:"last_pass"`
	NextPlanSlot *string `json:"next_plan_slot"`
}

func snapshotView(s *Snapshot) snapshotJSON {
	v := snapshotJSON{Snapshot: *s, Time: jsonTime(s.Time), Queues: []queueJSON{}, Workers: []workerJSON{},
		Hosts: []hostJSON{}, Schedulers: []schedulerJSON{}, Problems: s.Problems}
	if v.Problems == nil {
		v.Problems = []KeyProblem{}
	}
	v.SetAside = []setAsideJSON{}
	for _, k := range s.SetAside {
		v.SetAside = append(v.SetAside, setAsideJSON{SetAsideKey: k, At: jsonTime(k.At)})
	}
	for _, q := range s.Queues {
		qv := queueJSON{Queue: q, AvgQueueTimeMs: round(q.AvgQueueTimeMs, 1), AvgProcessingTimeMs: round(q.AvgProcessingTimeMs, 1),
			Hosts: []queueHostJSON{}}
		for _, h := range q.Hosts {
			qv.Hosts = append(qv.Hosts, queueHostJSON{QueueHost: h, AvgQueueTimeMs: round(h.AvgQueueTimeMs, 1),
				AvgProcessingTimeMs: round(h.AvgProcessingTimeMs, 1)})
		}
		v.Queues = append(v.Queues, qv)
	}
	for _, w := range s.Workers {
		wv := workerJSON{Worker: w, RunAt: jsonTime(protocol.ParseStoredTime(w.RunAt)), RunAtRaw: w.RunAt,
			Started: jsonTime(protocol.ParseStoredTime(w.Started)), StartedRaw: w.Started,
			Heartbeat: jsonTime(protocol.ParseStoredTime(w.Heartbeat)), HeartbeatRaw: w.Heartbeat}
		if w.CPUPercent != nil {
			cpu := round(*w.CPUPercent, 1)
			wv.CPUPercent = &cpu
		}
		v.Workers = append(v.Workers, wv)
	}
	for _, h := range s.Hosts {
		hv := hostJSON{Host: h, UpdatedAt: jsonTime(h.UpdatedAt), HostCPUPercent: round(h.HostCPUPercent, 1),
			MemUsedPercent: round(h.MemUsedPercent, 1), Load1: round(h.Load1, 2), Load5: round(h.Load5, 2), Load15: round(h.Load15, 2),
			Processes: []recordJSON{}}
		for _, p := range h.Processes {
			hv.Processes = append(hv.Processes, recordJSON{Record: p, StartedAt: jsonTime(p.StartedAt), UpdatedAt: jsonTime(p.UpdatedAt),
				CPUPercent: round(p.CPUPercent, 1), HostCPUPercent: round(p.HostCPUPercent, 1), MemUsedPercent: round(p.MemUsedPercent, 1),
				Load1: round(p.Load1, 2), Load5: round(p.Load5, 2), Load15: round(p.Load15, 2)})
		}
		v.Hosts = append(v.Hosts, hv)
	}
	for _, in := range s.Schedulers {
		v.Schedulers = append(v.Schedulers, schedulerJSON{SchedulerInfo: in, Started: jsonTime(in.Started),
			LastPass: jsonTime(in.LastPass), NextPlanSlot: jsonTime(in.NextPlanSlot)})
	}
	return v
}

// jsonTime is t in UTC, RFC 3339 to the second; nil for no time.
func jsonTime(t time.Time) *string {
	if t.IsZero() || t.Unix() <= 0 {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

// round is f to n decimals, as Render shows it (NaN and infinities as 0).
func round(f float64, n int) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	p := math.Pow10(n)
	return math.Round(f*p) / p
}
