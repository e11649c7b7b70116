package bench

import (
	"encoding/json"
	"io"
	"slices"
)

// Report is everything one Run measured.
type Report struct {
	Machine     Machine           `json:"machine"`
	Settings    Settings          `json:"settings"`
	Throughput  []Throughput      `json:"throughput"`
	Idle        []Idle            `json:"idle"`
	Latency     *Latency          `json:"latency,omitempty"`
	Checks      []Check           `json:"checks"`
	Definitions map[string]string `json:"definitions"`
}

// Machine is where the bench ran.
type Machine struct {
	CPUs         int    `json:"nproc"`
	GOMAXPROCS   int    `json:"gomaxprocs"`
	CPUModel     string `json:"cpu_model"`
	OS           string `json:"os"`
	GoVersion    string `json:"go_version"`
	Version      string `json:"resque_go_version"`
	Redis        string `json:"redis"` // redis-server --version, or INFO server's version
	RedisVersion string `json:"redis_version"`
	RedisStarted bool   `json:"redis_started_by_bench"`
}

// Settings are the knobs a Run used.
type Settings struct {
	Scenarios     []string `json:"scenarios"`
	Jobs          int      `json:"jobs"`
	Runs          int      `json:"runs"`
	Procs         int      `json:"procs"`
	Sources       int      `json:"sources"`
	ExecJobs      int      `json:"exec_jobs"`
	ExecCommand   string   `json:"exec_command"`
	IdleSeconds   float64  `json:"idle_seconds"`
	SettleSeconds float64  `json:"settle_seconds"`
	LatencyJobs   int      `json:"latency_jobs"`
	LatencyRate   float64  `json:"latency_rate"`
	LatencySlots  int      `json:"latency_slots"`
	Payload       string   `json:"payload"`
}

func settingsOf(c Config) Settings {
	return Settings{Scenarios: c.Scenarios, Jobs: c.Jobs, Runs: c.Runs, Procs: c.Procs, Sources: c.Sources, ExecJobs: c.ExecJobs,
		ExecCommand: c.ExecCommand, IdleSeconds: c.Idle.Seconds(), SettleSeconds: c.Settle.Seconds(),
		LatencyJobs: c.LatencyJobs, LatencyRate: c.LatencyRate, LatencySlots: c.LatencySlots, Payload: NoopPayload}
}

// Metrics are one throughput run's per-job figures (see Definitions).
type Metrics struct {
	JobsPerSec   float64 `json:"jobs_per_sec"`
	RedisCPU     float64 `json:"redis_cpu_us_per_job"`
	RedisMainCPU float64 `json:"redis_main_thread_cpu_us_per_job"`
	Commands     float64 `json:"commands_per_job"`
	Scripts      float64 `json:"scripts_per_job"`
	RoundTrips   float64 `json:"round_trips_per_job"`
	WorkerCPU    float64 `json:"worker_cpu_us_per_job"`
	PeakRSSMB    float64 `json:"peak_rss_mb"`
}

// CommandCost is one Redis command's calls and Redis time per job (or per
// second, for idle workers).
type CommandCost struct {
	Calls float64 `json:"calls"`
	Usec  float64 `json:"usec"`
}

// ThroughputRun is one throughput run.
type ThroughputRun struct {
	Metrics
	Jobs       int64                  `json:"jobs"`
	Seconds    float64                `json:"seconds"`
	PerCommand map[string]CommandCost `json:"per_command"`
}

// Throughput is one throughput scenario over its runs.
type Throughput struct {
	Scenario    string          `json:"scenario"`
	Description string          `json:"description"`
	Processes   int             `json:"processes"` // 0: the in-process reference loop
	Slots       int             `json:"slots_per_process"`
	Jobs        int             `json:"jobs_per_run"`
	Runs        []ThroughputRun `json:"runs"`
	// Median, Min and Max are taken over the runs, metric by metric.
	Median Metrics `json:"median"`
	Min    Metrics `json:"min"`
	Max    Metrics `json:"max"`
	// PerCommand is each command's median calls and Redis time per job.
	PerCommand map[string]CommandCost `json:"per_command"`
	// VsLoop divides this scenario's medians by the reference loop's.
	VsLoop *Ratios `json:"vs_loop,omitempty"`
}

// Ratios compare a scenario with the reference loop (medians).
type Ratios struct {
	RedisCPU   float64 `json:"redis_cpu_us_per_job"`
	JobsPerSec float64 `json:"jobs_per_sec"`
	Commands   float64 `json:"commands_per_job"`
	RoundTrips float64 `json:"round_trips_per_job"`
}

// IdleMetrics are one idle run's per-second figures.
type IdleMetrics struct {
	Commands   float64 `json:"commands_per_sec"`
	Scripts    float64 `json:"scripts_per_sec"`
	RoundTrips float64 `json:"round_trips_per_sec"`
	PeakRSSMB  float64 `json:"peak_rss_mb"`
}

// IdleRun is one idle run.
type IdleRun struct {
	IdleMetrics
	PerCommand map[string]float64 `json:"per_command"` // calls per second
}

// Idle is one idle worker configuration over its runs.
type Idle struct {
	Config     string             `json:"config"`
	Slots      int                `json:"slots"`
	Queues     int                `json:"queues"`
	Seconds    float64            `json:"seconds"`
	Runs       []IdleRun          `json:"runs"`
	Median     IdleMetrics        `json:"median"`
	Min        IdleMetrics        `json:"min"`
	Max        IdleMetrics        `json:"max"`
	PerCommand map[string]float64 `json:"per_command"` // median calls per second
}

// LatencyMetrics are one latency run's percentiles, in milliseconds.
type LatencyMetrics struct {
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// Latency is the pickup latency scenario over its runs.
type Latency struct {
	Jobs   int              `json:"jobs"`
	Rate   float64          `json:"rate_per_sec"`
	Slots  int              `json:"slots"`
	Runs   []LatencyMetrics `json:"runs"`
	Median LatencyMetrics   `json:"median"`
	Min    LatencyMetrics   `json:"min"`
	Max    LatencyMetrics   `json:"max"`
}

// Check is one target (a bound on Redis CPU, memory, idle cost, pickup
// latency or mass-queue fairness) against what was measured.
type Check struct {
	Target   string  `json:"target"`
	Measured string  `json:"measured"`
	Value    float64 `json:"value"`
	Limit    float64 `json:"limit"`
	OK       bool    `json:"ok"`
}

// field picks one float64 of a metrics struct.
type field[T any] func(*T) *float64

var metricFields = []field[Metrics]{
	func(m *Metrics) *float64 { return &m.JobsPerSec },
	func(m *Metrics) *float64 { return &m.RedisCPU },
	func(m *Metrics) *float64 { return &m.RedisMainCPU },
	func(m *Metrics) *float64 { return &m.Commands },
	func(m *Metrics) *float64 { return &m.Scripts },
	func(m *Metrics) *float64 { return &m.RoundTrips },
	func(m *Metrics) *float64 { return &m.WorkerCPU },
	func(m *Metrics) *float64 { return &m.PeakRSSMB },
}

var idleFields = []field[IdleMetrics]{
	func(m *IdleMetrics) *float64 { return &m.Commands },
	func(m *IdleMetrics) *float64 { return &m.Scripts },
	func(m *IdleMetrics) *float64 { return &m.RoundTrips },
	func(m *IdleMetrics) *float64 { return &m.PeakRSSMB },
}

var latencyFields = []field[LatencyMetrics]{
	func(m *LatencyMetrics) *float64 { return &m.P50 },
	func(m *LatencyMetrics) *float64 { return &m.P99 },
	func(m *LatencyMetrics) *float64 { return &m.Max },
}

// summarize sets median, min and max of each field over runs.
func summarize[T any](runs []T, fields []field[T]) (med, lo, hi T) {
	for _, f := range fields {
		vals := make([]float64, len(runs))
		for i := range runs {
			vals[i] = *f(&runs[i])
		}
		*f(&med), *f(&lo), *f(&hi) = median(vals), slices.Min(vals), slices.Max(vals)
	}
	return med, lo, hi
}

// median of values (the mean of the middle two for an even count).
func median(vals []float64) float64 {
	if len(vals) == 0 {
		return 0
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (t *Throughput) summarize() {
	ms := make([]Metrics, len(t.Runs))
	for i, r := range t.Runs {
		ms[i] = r.Metrics
	}
	t.Median, t.Min, t.Max = summarize(ms, metricFields)
	t.PerCommand = map[string]CommandCost{}
	for _, name := range commandNames(t.Runs, func(r ThroughputRun) []string { return keysOf(r.PerCommand) }) {
		var calls, usec []float64
		for _, r := range t.Runs {
			calls = append(calls, r.PerCommand[name].Calls)
			usec = append(usec, r.PerCommand[name].Usec)
		}
		t.PerCommand[name] = CommandCost{Calls: median(calls), Usec: median(usec)}
	}
}

func (i *Idle) summarize() {
	ms := make([]IdleMetrics, len(i.Runs))
	for k, r := range i.Runs {
		ms[k] = r.IdleMetrics
	}
	i.Median, i.Min, i.Max = summarize(ms, idleFields)
	i.PerCommand = map[string]float64{}
	for _, name := range commandNames(i.Runs, func(r IdleRun) []string { return keysOf(r.PerCommand) }) {
		var calls []float64
		for _, r := range i.Runs {
			calls = append(calls, r.PerCommand[name])
		}
		i.PerCommand[name] = median(calls)
	}
}

func (l *Latency) summarize() { l.Median, l.Min, l.Max = summarize(l.Runs, latencyFields) }

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// commandNames is the sorted union of the command names of runs.
func commandNames[R any](runs []R, names func(R) []string) []string {
	var out []string
	for _, r := range runs {
		for _, n := range names(r) {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// compareToLoop fills VsLoop of every scenario when the loop ran.
func (r *Report) compareToLoop() {
	i := slices.IndexFunc(r.Throughput, func(t Throughput) bool { return t.Scenario == ScenarioLoop })
	if i < 0 {
		return
	}
	ref := r.Throughput[i].Median
	ratio := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a / b
	}
	for k := range r.Throughput {
		m := r.Throughput[k].Median
		r.Throughput[k].VsLoop = &Ratios{
			RedisCPU:   ratio(m.RedisCPU, ref.RedisCPU),
			JobsPerSec: ratio(m.JobsPerSec, ref.JobsPerSec),
			Commands:   ratio(m.Commands, ref.Commands),
			RoundTrips: ratio(m.RoundTrips, ref.RoundTrips),
		}
	}
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
