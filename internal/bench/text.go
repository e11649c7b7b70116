package bench

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Targets a worker runtime sharing one Redis should meet: Redis runs every
// command and script on one core, so its CPU per job caps a fleet's jobs/s;
// the reference is the minimal Resque loop of the same run.
const (
	targetCPURatio   = 1.25 // Redis CPU per no-op job, times the reference loop's
	targetIdleCmds   = 5    // Redis commands per second of one idle process
	targetPickupP50  = 0.5  // ms
	targetPickupP99  = 1.0  // ms
	targetRSS16Slots = 16   // MB for 16 slots
)

// checks compares what was measured with the targets above and, for the
// static scenarios, massChecks' bounds.
func (r *Report) checks() []Check {
	var out []Check
	for _, t := range r.Throughput {
		if t.Scenario == ScenarioLoop || t.Scenario == ScenarioExec || t.Scenario == ScenarioFork || t.VsLoop == nil {
			continue
		}
		out = append(out, Check{
			Target:   fmt.Sprintf("Redis CPU per no-op job <= %.2fx the loop's (%s)", targetCPURatio, t.Scenario),
			Measured: fmt.Sprintf("%.1f us vs %.1f us", t.Median.RedisCPU, t.Median.RedisCPU/t.VsLoop.RedisCPU),
			Value:    t.VsLoop.RedisCPU, Limit: targetCPURatio,
		})
	}
	for _, t := range r.Throughput {
		if t.Processes > 0 && t.Slots == 16 && t.Scenario != ScenarioExec && t.Scenario != ScenarioFork {
			out = append(out, Check{
				Target:   fmt.Sprintf("16 slots in <= %d MB RSS (%s, peak under load)", targetRSS16Slots, t.Scenario),
				Measured: fmt.Sprintf("%.1f MB", t.Median.PeakRSSMB), Value: t.Median.PeakRSSMB, Limit: targetRSS16Slots,
			})
		}
	}
	out = append(out, r.massChecks()...)
	for _, i := range r.Idle {
		v := i.Median.Commands + i.Median.Scripts
		out = append(out, Check{
			Target:   fmt.Sprintf("idle <= %d commands/s per process (%s)", targetIdleCmds, i.Config),
			Measured: fmt.Sprintf("%.1f/s", v), Value: v, Limit: targetIdleCmds,
		})
	}
	if l := r.Latency; l != nil {
		out = append(out,
			Check{Target: fmt.Sprintf("pickup latency p50 <= %.1f ms", targetPickupP50), Measured: fmt.Sprintf("%.3f ms", l.Median.P50), Value: l.Median.P50, Limit: targetPickupP50},
			Check{Target: fmt.Sprintf("pickup latency p99 <= %.1f ms", targetPickupP99), Measured: fmt.Sprintf("%.3f ms", l.Median.P99), Value: l.Median.P99, Limit: targetPickupP99})
	}
	for k := range out {
		out[k].OK = out[k].Value <= out[k].Limit
	}
	return out
}

// massChecks are the fairness bounds of mass queues, where both scenarios of
// a pair ran: serving sources fairly should cost little, so a static pool's
// jobs/s stays within 10% of the same workers on a plain queue, and many
// sources' (10,000 by default) within 20% of one source's. Value is the shortfall
// (1 - the ratio of jobs/s), so that it passes at or under Limit.
func (r *Report) massChecks() []Check {
	by := map[string]*Throughput{}
	for i := range r.Throughput {
		by[r.Throughput[i].Scenario] = &r.Throughput[i]
	}
	var out []Check
	pair := func(got, ref string, limit float64, what string) {
		g, f := by[got], by[ref]
		if g == nil || f == nil || f.Median.JobsPerSec == 0 {
			return
		}
		ratio := g.Median.JobsPerSec / f.Median.JobsPerSec
		out = append(out, Check{
			Target: fmt.Sprintf("%s (%s vs %s) >= %.2fx its jobs/s", what, got, ref, 1-limit),
			Measured: fmt.Sprintf("%.2fx (%.0f vs %.0f jobs/s; Redis CPU %.1f vs %.1f us)", ratio, g.Median.JobsPerSec, f.Median.JobsPerSec,
				g.Median.RedisCPU, f.Median.RedisCPU),
			Value: max(0, 1-ratio), Limit: limit,
		})
	}
	pair(ScenarioStatic, ScenarioSlots16, 0.10, "a static pool against a plain queue")
	pair(ScenarioLimits, ScenarioSlots16, 0.10, "one cap and one rate against none")
	for _, t := range r.Throughput {
		if strings.HasSuffix(t.Scenario, "-static") {
			pair(t.Scenario, strings.TrimSuffix(t.Scenario, "-static"), 0.10, "a static pool against a plain queue")
		}
	}
	pair(ScenarioStaticSources, ScenarioStatic, 0.20, fmt.Sprintf("%d sources against one", min(r.Settings.Sources, r.Settings.Jobs)))
	return out
}

// definitions says what each figure means; the text report prints them
// and the JSON carries them.
func definitions(cfg Config) map[string]string {
	return map[string]string{
		"jobs_per_sec": "jobs finished / wall time. The jobs are prefilled in a staging list while the workers start, " +
			"register and go idle; one RENAME makes it the queue. The window runs from just before the RENAME to the poll " +
			"(LLEN of the queue and GET stat:processed, every 1/200 of the time so far, 2-20 ms) that sees the queue empty " +
			"and every job counted.",
		"redis_cpu_us_per_job":             "Redis process CPU over the window (INFO cpu: used_cpu_sys + used_cpu_user) / jobs.",
		"redis_main_thread_cpu_us_per_job": "the same for Redis's main thread only (used_cpu_sys_main_thread + used_cpu_user_main_thread; Redis >= 6.2).",
		"commands_per_job": "Redis commands executed / jobs (INFO commandstats calls), commands that scripts run included, " +
			"script calls (EVAL, EVALSHA, FCALL) themselves not; the bench's own commands are subtracted.",
		"scripts_per_job": "EVAL/EVALSHA/FCALL calls / jobs.",
		"round_trips_per_job": "client requests Redis read / jobs (INFO stats total_reads_processed, less the bench's own): " +
			"a single command, a script call, or a pipeline sent in one write each count once.",
		"worker_cpu_us_per_job": "CPU (user + system) of the worker processes over their whole life (wait4 rusage) / jobs; " +
			"for the loop, the bench process's own CPU over the window (the loop plus the bench's polling).",
		"peak_rss_mb": "largest peak resident set of one worker process (on Linux VmHWM from /proc/<pid>/status, read when the " +
			"drain is over, before the worker is stopped: wait4's ru_maxrss of a child started by vfork and exec " +
			"counts its parent's resident set too; elsewhere ru_maxrss). " +
			"resque-go scenarios run as child processes (`resque-go bench worker`: `work` with a no-op Go handler for Noop, " +
			"with its stats publisher and delayed mover), so this is a real worker's footprint; the loop runs inside the bench: none.",
		"per_command": "each command's calls and Redis time (commandstats usec) per job; a script's time includes the commands it runs.",
		"idle": fmt.Sprintf("one worker process per configuration, registered and settled for %s, then watched for %s: "+
			"commands, script calls and round trips per second as above.", cfg.Settle, cfg.Idle),
		"latency": fmt.Sprintf("an in-process worker with %d slots, idle; %d jobs enqueued one at a time (SADD + RPUSH, one round trip) at %g/s, "+
			"each carrying its enqueue time; the handler records now - enqueue time (the RPUSH round trip included).",
			cfg.LatencySlots, cfg.LatencyJobs, cfg.LatencyRate),
		"spread": "each figure is the median over the runs; with more than one run a second row gives min-max. " +
			"The throughput scenarios run in rounds (each once a round, in order), so a machine that drifts moves them alike.",
		"static": fmt.Sprintf("the static scenarios drain a mass queue's static pool (`work --mass static:%s --interval %s`: "+
			"its workers poll the ring): the jobs are dealt round-robin into the sources' FIFOs and the sources are put on a "+
			"staging copy of the ring first; the window starts when one RENAME makes it the ring (as the allocator would have "+
			"placed them: the window holds the claims).", staticPool, staticPoll),
	}
}

// WriteText writes the report as aligned text tables.
func (r *Report) WriteText(w io.Writer) error {
	p := &printer{w: w}
	m := r.Machine
	p.line("resque-go bench: Redis cost per job")
	p.line("machine   %d CPUs (GOMAXPROCS %d), %s, %s, %s, resque-go %s", m.CPUs, m.GOMAXPROCS, m.CPUModel, m.OS, m.GoVersion, m.Version)
	where := "given with --redis"
	if m.RedisStarted {
		where = "started by the bench, persistence off"
	}
	p.line("redis     %s (%s)", m.Redis, where)
	s := r.Settings
	p.line("settings  %d jobs per run of %s, %d %s per scenario", s.Jobs, s.Payload, s.Runs, plural(s.Runs, "run"))

	if len(r.Throughput) > 0 {
		p.line("")
		t := &table{}
		t.add("THROUGHPUT", "JOBS/S", "REDIS us/JOB", "MAIN us/JOB", "CMDS/JOB", "SCRIPTS/JOB", "RT/JOB", "WORKER us/JOB", "RSS MB", "CPU vs LOOP", "JOBS/S vs LOOP")
		for _, th := range r.Throughput {
			ratios := []string{"-", "-"}
			if th.VsLoop != nil {
				ratios = []string{fmt.Sprintf("%.2fx", th.VsLoop.RedisCPU), fmt.Sprintf("%.2fx", th.VsLoop.JobsPerSec)}
			}
			t.add(append(append([]string{th.Scenario}, metricCells(th.Median, th.Processes == 0)...), ratios...)...)
			if len(th.Runs) > 1 {
				t.add(append(append([]string{"  min-max"}, metricRangeCells(th.Min, th.Max, th.Processes == 0)...), "", "")...)
			}
		}
		t.write(w)
		for _, th := range r.Throughput {
			p.line("  %-6s %s (%d jobs)", th.Scenario, th.Description, th.Jobs)
		}

		p.line("")
		p.line("REDIS COMMANDS PER JOB (median calls [Redis us per job], costliest first; a script's time includes the commands it runs)")
		for _, th := range r.Throughput {
			p.line("  %-6s %s", th.Scenario, perCommandText(th.PerCommand))
		}
	}

	if len(r.Idle) > 0 {
		p.line("")
		t := &table{}
		t.add(fmt.Sprintf("IDLE (1 process, %gs)", r.Settings.IdleSeconds), "CMDS/S", "SCRIPTS/S", "RT/S", "RSS MB", "")
		for _, i := range r.Idle {
			t.add(i.Config, f2(i.Median.Commands), f2(i.Median.Scripts), f2(i.Median.RoundTrips), f1(i.Median.PeakRSSMB), "")
			if len(i.Runs) > 1 {
				t.add("  min-max", rng(f2, i.Min.Commands, i.Max.Commands), rng(f2, i.Min.Scripts, i.Max.Scripts),
					rng(f2, i.Min.RoundTrips, i.Max.RoundTrips), rng(f1, i.Min.PeakRSSMB, i.Max.PeakRSSMB), "")
			}
		}
		t.write(w)
		p.line("IDLE COMMANDS PER SECOND (median)")
		for _, i := range r.Idle {
			p.line("  %-20s %s", i.Config, perSecondText(i.PerCommand))
		}
	}

	if l := r.Latency; l != nil {
		p.line("")
		t := &table{}
		t.add(fmt.Sprintf("PICKUP LATENCY (%d slots idle, %d jobs at %g/s)", l.Slots, l.Jobs, l.Rate), "P50 ms", "P99 ms", "MAX ms")
		t.add("in-process worker", f3(l.Median.P50), f3(l.Median.P99), f3(l.Median.Max))
		if len(l.Runs) > 1 {
			t.add("  min-max", rng(f3, l.Min.P50, l.Max.P50), rng(f3, l.Min.P99, l.Max.P99), rng(f3, l.Min.Max, l.Max.Max))
		}
		t.write(w)
	}

	if len(r.Checks) > 0 {
		p.line("")
		t := &table{}
		t.add("TARGETS", "MEASURED", "")
		for _, c := range r.Checks {
			verdict := "ok"
			if !c.OK {
				verdict = "OVER"
			}
			t.add(c.Target, c.Measured, verdict)
		}
		t.write(w)
	}

	p.line("")
	p.line("DEFINITIONS")
	var keys []string
	if len(r.Throughput) > 0 {
		keys = append(keys, "jobs_per_sec", "redis_cpu_us_per_job", "redis_main_thread_cpu_us_per_job", "commands_per_job",
			"scripts_per_job", "round_trips_per_job", "worker_cpu_us_per_job", "peak_rss_mb", "per_command")
	}
	if len(r.Idle) > 0 {
		keys = append(keys, "idle")
	}
	if r.Latency != nil {
		keys = append(keys, "latency")
	}
	for _, k := range append(keys, "spread") {
		for i, l := range wrap(k+": "+r.Definitions[k], 100) {
			if i == 0 {
				p.line("  %s", l)
			} else {
				p.line("      %s", l)
			}
		}
	}
	return p.err
}

// wrap breaks text into lines of at most width characters at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}

func f0(v float64) string { return fmt.Sprintf("%.0f", v) }
func f1(v float64) string { return fmt.Sprintf("%.1f", v) }
func f2(v float64) string { return fmt.Sprintf("%.2f", v) }
func f3(v float64) string { return fmt.Sprintf("%.3f", v) }

func rng(f func(float64) string, lo, hi float64) string { return f(lo) + "-" + f(hi) }

// metricCells formats a throughput row; inProcess leaves out peak RSS.
func metricCells(m Metrics, inProcess bool) []string {
	rss := f1(m.PeakRSSMB)
	if inProcess {
		rss = "-"
	}
	return []string{f0(m.JobsPerSec), f1(m.RedisCPU), f1(m.RedisMainCPU), f2(m.Commands), f2(m.Scripts), f2(m.RoundTrips), f1(m.WorkerCPU), rss}
}

func metricRangeCells(lo, hi Metrics, inProcess bool) []string {
	rss := rng(f1, lo.PeakRSSMB, hi.PeakRSSMB)
	if inProcess {
		rss = "-"
	}
	return []string{rng(f0, lo.JobsPerSec, hi.JobsPerSec), rng(f1, lo.RedisCPU, hi.RedisCPU), rng(f1, lo.RedisMainCPU, hi.RedisMainCPU),
		rng(f2, lo.Commands, hi.Commands), rng(f2, lo.Scripts, hi.Scripts), rng(f2, lo.RoundTrips, hi.RoundTrips),
		rng(f1, lo.WorkerCPU, hi.WorkerCPU), rss}
}

// perCommandText lists commands by Redis time (most first), then calls,
// then name.
func perCommandText(m map[string]CommandCost) string {
	names := keysOf(m)
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(m[b].Usec, m[a].Usec); c != 0 {
			return c
		}
		if c := cmp.Compare(m[b].Calls, m[a].Calls); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(names))
	for _, n := range names {
		if m[n].Calls < 0.005 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.2f [%.1f]", n, m[n].Calls, m[n].Usec))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "  ")
}

func perSecondText(m map[string]float64) string {
	names := keysOf(m)
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(m[b], m[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.2f", n, m[n]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "  ")
}

// printer writes lines and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) line(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
	}
}

// table aligns cells: the first column left, the others right.
type table struct{ rows [][]string }

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) {
	var widths []int
	for _, row := range t.rows {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, row := range t.rows {
		var b strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			switch {
			case i == 0:
				b.WriteString(c + pad)
			default:
				b.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
