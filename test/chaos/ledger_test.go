package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// jobRun is one line of the ledger: a run of a job that reached its end.
type jobRun struct {
	attempt, pid int
	outcome, id  string
	start, end   int64 // Unix milliseconds
}

// row is one line of the ledger table.
type row struct {
	label                                                 string
	pushed, ran, retriedRan, failed, dirty, dupRuns, lost int
	note                                                  string
}

// duplicate is a run of a job attempt that ran more than once.
type duplicate struct {
	key     string
	attempt int
	pids    []int // worker pids of every run of it, oldest first
	cause   string
}

// ledger accounts for every job of a run.
type ledger struct {
	cfg     config
	faults  faults
	elapsed time.Duration
	drain   drainState

	rows   []*row
	byName map[string]*row
	dups   []duplicate

	uniqueAccepted, uniqueDeferred, uniqueRefused int
	resent, resentDup                             int // producer: enqueues sent again after an error; jobs pushed twice so
	unknownRan, unknownAbsent                     int // enqueue outcome unknown (error, then refused)
	interrupted                                   int
	violations                                    []string
	planTwice, planMissed                         int
	prunes                                        map[int][]time.Time // worker pid -> when its job was recovered
	outages                                       []outage
	lost                                          []string
	problems                                      []string

	mass        massRecord
	massBatches int // batches the run's plan has
	sampled     *massSampler
	massEnd     massEnd
}

func (l *ledger) problem(format string, args ...any) {
	l.problems = append(l.problems, fmt.Sprintf(format, args...))
}

// account reads the handler files, the failed list and the producer's
// record, and builds the ledger.
func account(s *scenario, prod *producer, c *rdb.Client, drain drainState) *ledger {
	massMix := "; all succeed"
	if s.cfg.MassRetry {
		massMix = "; some Retry, some Fail"
	}
	l := &ledger{cfg: s.cfg, faults: s.faults, drain: drain, byName: map[string]*row{},
		prunes: readPrunes(filepath.Join(s.dir, "pool.log")), outages: s.outages}
	for _, r := range []struct{ class, label string }{
		{classOk, "Ok"}, {classSlow, "Slow (1-3 s)"}, {classFail, "Fail (every attempt)"},
		{classRetry, "Retry (fails once)"}, {classDelayed, "Delayed (enqueue in 1-5 s)"},
		{classSerial, "Serial (one at a time over 2 processes)"}, {classUnique, "Unique (3 enqueues per uid)"},
		{massStatic, fmt.Sprintf("Static mass jobs (pool %s, %d busy sources and one-job sources%s)", staticPool, len(staticSources), massMix)},
		{massBatch, fmt.Sprintf("Batch mass jobs (pool %s, 2 units x 2; %d batches of %d sources%s)", batchPool, len(prod.batches), len(batchSources), massMix)},
	} {
		l.addRow(r.class, r.label)
	}
	l.massBatches, l.sampled = len(prod.batches), s.sampler
	runs := readRuns(s.t, filepath.Join(s.dir, ledgerFile))
	started := countLines(filepath.Join(s.dir, startedFile))
	ended := 0
	for _, rs := range runs {
		ended += len(rs)
	}
	l.interrupted = started - ended
	l.violations = readLines(filepath.Join(s.dir, violationsFile))
	failed := readFailed(s.t, c)
	s.mu.Lock()
	killed := s.killed
	s.mu.Unlock()

	prod.mu.Lock()
	l.resent = prod.retried
	l.mass = prod.mass
	keys := make([]string, 0, len(prod.pushed))
	for k := range prod.pushed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		l.job(key, prod.pushed[key], runs[key], failed[key], killed)
		delete(runs, key)
		delete(failed, key)
	}
	prod.mu.Unlock()
	l.plans(s, runs, failed, killed)
	var err error
	if l.massEnd, err = readMassEnd(c, prod); err != nil {
		l.problem("mass queues: reading the end state: %v", err)
	}
	for key := range runs {
		l.problem("job %s ran but was never pushed", key)
	}
	for key := range failed {
		l.problem("job %s is in failed but was never pushed", key)
	}
	l.checkEnd()
	return l
}

func (l *ledger) addRow(name, label string) *row {
	r := &row{label: label}
	l.rows = append(l.rows, r)
	l.byName[name] = r
	return r
}

// job accounts for one pushed key.
func (l *ledger) job(key string, p *pushed, runs []jobRun, fails []string, killed map[int][]death) {
	if p.spec.class == classUnique {
		switch {
		case p.confirmed && p.deferred:
			l.uniqueDeferred++
		case p.confirmed:
			l.uniqueAccepted++
		case p.refused:
			l.uniqueRefused++
		}
	}
	if !p.confirmed {
		switch {
		case !p.ambiguous && len(runs)+len(fails) > 0:
			l.problem("job %s ran or failed though its enqueue was refused", key)
		case p.ambiguous && len(runs)+len(fails) > 0:
			l.unknownRan++
		case p.ambiguous:
			l.unknownAbsent++
		}
		return
	}
	r := l.byName[p.spec.row()]
	r.pushed++
	l.fate(r, key, p.spec.class, runs, fails)
	r.dupRuns += l.duplicates(key, runs, killed)
	ids := map[string]bool{}
	for _, run := range runs {
		ids[run.id] = true
	}
	if len(ids) > 1 || len(fails) > 1 {
		if p.ambiguous {
			l.resentDup++
		} else {
			l.problem("job %s was pushed once but ran as %d jobs (%d failed entries)", key, len(ids), len(fails))
		}
	}
}

// fate finds where job key ended: ran (after a retry for Retry), in
// failed after its attempts (Fail), in failed as a DirtyExit (recovered
// from dead workers too often), or lost.
func (l *ledger) fate(r *row, key, class string, runs []jobRun, fails []string) {
	dirty, execFailed := 0, 0
	for _, f := range fails {
		if strings.Contains(f, "DirtyExit") {
			dirty++
		} else {
			execFailed++
		}
	}
	okAttempt := 0
	for _, run := range runs {
		if run.outcome == "ok" && (okAttempt == 0 || run.attempt < okAttempt) {
			okAttempt = run.attempt
		}
	}
	switch {
	case class == classFail && execFailed > 0:
		r.failed++
		if n := attemptsRun(runs, "fail"); n != 3 {
			l.problem("job %s is in failed after %d distinct attempts, want 3", key, n)
		}
	case class != classFail && okAttempt > 0:
		r.ran++
		if class == classRetry {
			if okAttempt < 2 {
				l.problem("job %s succeeded at its first attempt", key)
			}
			r.retriedRan++
		}
	case dirty > 0:
		r.dirty++
	default:
		r.lost++
		l.lost = append(l.lost, key)
	}
	if execFailed > 0 && class != classFail {
		l.problem("job %s failed: %s", key, fails[0])
	}
}

func attemptsRun(runs []jobRun, outcome string) int {
	seen := map[int]bool{}
	for _, r := range runs {
		if r.outcome == outcome {
			seen[r.attempt] = true
		}
	}
	return len(seen)
}

// duplicates lists the attempts of key that ran more than once and
// returns how many extra runs there were. A run may be followed by
// another of the same attempt only when the test killed its worker (or
// the worker's manager) after the run ended and before the next began:
// its end was never recorded. Anything else is a problem.
func (l *ledger) duplicates(key string, runs []jobRun, killed map[int][]death) int {
	type attemptOf struct {
		id      string
		attempt int
	}
	groups := map[attemptOf][]jobRun{}
	var order []attemptOf
	for _, r := range runs {
		a := attemptOf{r.id, r.attempt}
		if groups[a] == nil {
			order = append(order, a)
		}
		groups[a] = append(groups[a], r)
	}
	extra := 0
	for _, a := range order {
		g := groups[a]
		if len(g) < 2 {
			continue
		}
		extra += len(g) - 1
		var pids []int
		for _, r := range g {
			pids = append(pids, r.pid)
		}
		cause := ""
		for i, r := range g[:len(g)-1] {
			d, ok := killedBetween(killed[r.pid], r.end, g[i+1].start)
			if !ok {
				cause = "UNEXPLAINED: worker not killed"
				if at, ok := prunedBetween(l.prunes[r.pid], r.start, g[i+1].start); ok {
					if burst, ok := cutOffBefore(l.outages, at); ok {
						// the documented at-least-once case (README: failure
						// modes): listed with its cause, not a problem
						cause = fmt.Sprintf("live worker cut off from Redis (outages over %s, more than 3 heartbeats) pruned as dead", burst.Round(100*time.Millisecond))
						break
					}
					cause = "NOT ALLOWED: live worker pruned as dead (stale heartbeat) without a long outage, job run again"
				}
				l.problem("job %s attempt %d ran %d times (workers %v, runs %s): worker %d was not killed between %s and %s; %s",
					key, a.attempt, len(g), pids, spans(g), r.pid, clock(r.end), clock(g[i+1].start), cause)
				break
			}
			if cause == "" {
				cause = d.cause
			}
		}
		l.dups = append(l.dups, duplicate{key: key, attempt: a.attempt, pids: pids, cause: cause})
	}
	return extra
}

// killedBetween finds a death of a worker after end (less a second: a
// handler may outlive its worker's death by a moment) and before next (a
// moment of slack for the clocks of two processes).
func killedBetween(deaths []death, end, next int64) (death, bool) {
	for _, d := range deaths {
		at := d.at.UnixMilli()
		if at >= end-1000 && at <= next+50 {
			return d, true
		}
	}
	return death{}, false
}

// prunedBetween reports whether a process pruned the worker's ids with a
// job on them between from and to (the log has whole seconds).
func prunedBetween(prunes []time.Time, from, to int64) (time.Time, bool) {
	for _, at := range prunes {
		if ms := at.UnixMilli(); ms >= from-1000 && ms <= to+1000 {
			return at, true
		}
	}
	return time.Time{}, false
}

// readPrunes reads the "pruned dead worker" events of the workers' and
// managers' JSON logs that requeued a job: dead worker pid -> when.
func readPrunes(path string) map[int][]time.Time {
	out := map[int][]time.Time{}
	for _, line := range readLines(path) {
		if !strings.Contains(line, `"pruned dead worker"`) {
			continue
		}
		var e struct {
			ID     string    `json:"dead_worker_id"`
			Result string    `json:"result"`
			Time   time.Time `json:"time"`
		}
		if json.Unmarshal([]byte(line), &e) != nil || e.Result != "requeued" {
			continue
		}
		if w, err := protocol.ParseWorkerID(e.ID); err == nil {
			out[w.PID] = append(out[w.PID], e.Time)
		}
	}
	return out
}

func spans(g []jobRun) string {
	var parts []string
	for _, r := range g {
		parts = append(parts, fmt.Sprintf("%d:%s-%s", r.pid, clock(r.start), clock(r.end)))
	}
	return strings.Join(parts, " ")
}

func clock(ms int64) string { return time.UnixMilli(ms).Format("15:04:05.000") }

// plans checks that each plan fired every slot from its first to the one
// it stood at when the schedulers stopped, once each, and that each
// fired job ran.
func (l *ledger) plans(s *scenario, runs map[string][]jobRun, failed map[string][]string, killed map[int][]death) {
	ids := make([]string, 0, len(plans))
	for id := range plans {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		every := plans[id]
		r := l.addRow("plan-"+id, fmt.Sprintf("Plan %s (every %s, catch-up)", id, every))
		slots := int((s.planEnd[id] - s.planStart[id]) / int64(every/time.Second))
		r.pushed = slots
		fired := 0
		for key, rs := range runs {
			if !strings.HasPrefix(key, "plan-"+id+"/") {
				continue
			}
			fired++
			l.fate(r, key, classPlan, rs, failed[key])
			r.dupRuns += l.duplicates(key, rs, killed)
			delete(runs, key)
			delete(failed, key)
		}
		for key, fs := range failed {
			if strings.HasPrefix(key, "plan-"+id+"/") {
				fired++
				l.fate(r, key, classPlan, nil, fs)
				delete(failed, key)
			}
		}
		r.note = fmt.Sprintf("%d slots, %d jobs fired", slots, fired)
		switch {
		case fired > slots:
			l.planTwice += fired - slots
			l.problem("plan %s fired %d jobs for %d slots", id, fired, slots)
		case fired < slots:
			l.planMissed += slots - fired
			r.lost += slots - fired
			l.lost = append(l.lost, fmt.Sprintf("plan %s: %d slots", id, slots-fired))
		}
	}
}

// checkEnd turns the end state into problems.
func (l *ledger) checkEnd() {
	if len(l.lost) > 0 {
		l.problem("lost: %v", l.lost)
	}
	if n := len(l.drain.stranded); n > 0 {
		byQueue := map[string][]string{}
		for key, q := range l.drain.stranded {
			byQueue[q] = append(byQueue[q], key)
		}
		for _, ks := range byQueue {
			slices.Sort(ks)
		}
		l.problem("PRODUCT BUG: %d mass jobs stranded in queues no worker serves (their retry with a backoff went through "+
			"the delayed queue, whose mover pushed it to queue:<the job's list name> instead of back to its mass list): %v", n, byQueue)
	}
	if len(l.violations) > 0 {
		l.problem("serial jobs overlapped %d times: %v", len(l.violations), l.violations)
	}
	d := l.drain
	if len(d.leftover) > 0 {
		l.problem("not drained: %v", d.leftover)
	}
	if len(d.deadIDs) > 0 {
		l.problem("worker ids of dead processes registered: %v", d.deadIDs)
	}
	if d.workersEnd != 0 {
		l.problem("%d worker ids registered after every process stopped", d.workersEnd)
	}
	if len(d.afterStop) > 0 {
		l.problem("keys left once everything stopped: %v", d.afterStop)
	}
	m := l.massEnd
	if len(m.keysLeft) > 0 {
		l.problem("mass queues: keys left once everything stopped (batches, backlogs, FIFOs, allocation failures): %v", m.keysLeft)
	}
	if len(m.holdersLive) > 0 {
		l.problem("mass queues: holders entries still current once every worker stopped (a leaked running entry): %v", m.holdersLive)
	}
	if len(m.strayUncommit) > 0 {
		l.problem("mass queues: uncommitted batch lists left that the producer did not abandon: %v", m.strayUncommit)
	}
	if l.mass.committed != l.massBatches {
		l.problem("mass queues: %d batches committed, %d planned", l.mass.committed, l.massBatches)
	}
}

// table is the ledger as Markdown tables.
func (l *ledger) table() string {
	var b strings.Builder
	f := l.faults
	fmt.Fprintf(&b, "Chaos ledger: %d enqueues and %d plan slots, %s of faults, %s in all (seed %d)\n\n",
		l.cfg.Jobs, l.planSlots(), l.cfg.Duration, l.elapsed.Round(time.Second), l.cfg.Seed)
	b.WriteString("| jobs | pushed | ran | retried, then ran | in failed | failed as DirtyExit | duplicate runs | lost |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	var tot row
	for _, r := range l.rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d |\n", r.label, r.pushed, r.ran, r.retriedRan, r.failed, r.dirty, r.dupRuns, r.lost)
		tot.pushed += r.pushed
		tot.ran += r.ran
		tot.retriedRan += r.retriedRan
		tot.failed += r.failed
		tot.dirty += r.dirty
		tot.dupRuns += r.dupRuns
		tot.lost += r.lost
	}
	fmt.Fprintf(&b, "| **total** | %d | %d | %d | %d | %d | %d | **%d** |\n\n", tot.pushed, tot.ran, tot.retriedRan, tot.failed, tot.dirty, tot.dupRuns, tot.lost)

	b.WriteString("| fault | count |\n|---|---:|\n")
	fmt.Fprintf(&b, "| kill -9 of a worker process (pool child) | %d |\n", f.WorkerKills)
	fmt.Fprintf(&b, "| kill -9 of the pool's scheduler child | %d |\n", f.SchedChildKills)
	fmt.Fprintf(&b, "| kill -9 of the standalone `resque-go scheduler` (restarted after 0.2-2 s) | %d |\n", f.SchedulerKills)
	fmt.Fprintf(&b, "| kill -9 of the pool manager (restarted at once; its %d children got TERM) | %d |\n", f.OrphanedChildren, f.ManagerKills)
	fmt.Fprintf(&b, "| kill -9 of redis-server, restarted on its append-only file (appendfsync always; down %.1f s in all) | %d |\n", f.RedisDown.Seconds(), f.RedisRestarts)
	fmt.Fprintf(&b, "| failover of the primary to its replica (Redis FAILOVER: writes paused until the replica caught up, %.1f s in all; proxy retargeted, connections cut) | %d |\n", f.FailoverPause.Seconds(), f.Failovers)
	if f.FailoversAborted > 0 {
		fmt.Fprintf(&b, "| failovers skipped (the replica was not in sync, or FAILOVER did not complete) | %d |\n", f.FailoversAborted)
	}
	fmt.Fprintf(&b, "| all connections cut at the proxy (%d connection sides) | %d |\n", f.CutSides, f.Cuts)
	fmt.Fprintf(&b, "| black holes at the proxy, 2-%s each (%.0f s in all), then cut | %d |\n", l.cfg.MaxHole, f.HoleTime.Seconds(), f.Holes)
	if f.Skipped > 0 {
		fmt.Fprintf(&b, "| kills skipped (no such process up at that moment) | %d |\n", f.Skipped)
	}
	b.WriteString("\n| check | result |\n|---|---|\n")
	fmt.Fprintf(&b, "| unique enqueues: accepted / parked (deferrable) / refused as duplicates | %d / %d / %d |\n", l.uniqueAccepted, l.uniqueDeferred, l.uniqueRefused)
	fmt.Fprintf(&b, "| producer: enqueues sent again after an error / jobs written twice by that | %d / %d |\n", l.resent, l.resentDup)
	if l.unknownRan+l.unknownAbsent > 0 {
		fmt.Fprintf(&b, "| unique enqueues whose outcome is unknown (error, then refused): ran / not written | %d / %d |\n", l.unknownRan, l.unknownAbsent)
	}
	fmt.Fprintf(&b, "| mass: batches committed / commits sent again after an error (of which the first try had been applied) / batches abandoned after a failed push | %d / %d (%d) / %d |\n",
		l.mass.committed, l.mass.commitResent, l.mass.lostCommitKnow, len(l.mass.abandoned))
	if m := l.sampled; m != nil {
		fmt.Fprintf(&b, "| mass, sampled every 0.5 s during the run: batches seen waiting in a backlog / batches seen on a dead unit | %d / %d |\n", len(m.backlog), len(m.deadUnits))
	}
	fmt.Fprintf(&b, "| mass at the end: batches, backlogs, FIFOs and allocation failures left / holders entries still current (holders hashes left) / uncommitted lists left (abandoned) | %d / %d (%d) / %d |\n",
		len(l.massEnd.keysLeft), len(l.massEnd.holdersLive), l.massEnd.holderKeys, len(l.massEnd.uncommitted))
	if l.cfg.MassRetry {
		fmt.Fprintf(&b, "| mass jobs stranded after a retry in a queue no worker serves (queue:static:queue:*, queue:committed:*) | %d |\n", len(l.drain.stranded))
	}
	fmt.Fprintf(&b, "| runs cut short by a kill (started, never ended) | %d |\n", l.interrupted)
	fmt.Fprintf(&b, "| duplicate runs (an attempt that ran twice) | %d%s |\n", len(l.dups), l.dupCauses())
	fmt.Fprintf(&b, "| serial jobs overlapping | %d |\n", len(l.violations))
	fmt.Fprintf(&b, "| plan slots fired twice / missed | %d / %d |\n", l.planTwice, l.planMissed)
	fmt.Fprintf(&b, "| worker ids of dead processes registered (pool running) | %d |\n", len(l.drain.deadIDs))
	fmt.Fprintf(&b, "| `unique:*` and `queuedata:*:lock` keys left at the end | %d |\n", len(l.drain.afterStop))
	fmt.Fprintf(&b, "| drain after the faults (queues and delayed queue empty) | %.0f s |\n", l.drain.took.Seconds())
	fmt.Fprintf(&b, "| **lost** | **%d** |\n", len(l.lost))
	if len(l.dups) > 0 {
		b.WriteString("\nDuplicate runs (job, attempt: worker pids, oldest first; cause):\n")
		for i, d := range l.dups {
			if i == 30 {
				fmt.Fprintf(&b, "... and %d more\n", len(l.dups)-i)
				break
			}
			fmt.Fprintf(&b, "- %s, attempt %d: %v; %s\n", d.key, d.attempt, d.pids, d.cause)
		}
	}
	return b.String()
}

func (l *ledger) planSlots() int {
	n := 0
	for id := range plans {
		if r := l.byName["plan-"+id]; r != nil {
			n += r.pushed
		}
	}
	return n
}

func (l *ledger) dupCauses() string {
	causes := map[string]int{}
	for _, d := range l.dups {
		causes[d.cause]++
	}
	var parts []string
	for c, n := range causes {
		parts = append(parts, fmt.Sprintf("%d %s", n, c))
	}
	slices.Sort(parts)
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// report prints the table (to stdout with -v, else to the test log) and
// fails the test on every problem.
func (l *ledger) report(t *testing.T) {
	t.Helper()
	if testing.Verbose() {
		fmt.Println(l.table())
	} else {
		t.Log("\n" + l.table())
	}
	if path := os.Getenv("CHAOS_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(l.table()), 0o644); err != nil {
			t.Error(err)
		}
	}
	for _, p := range l.problems {
		t.Error(p)
	}
	if len(l.problems) > 0 && os.Getenv("CHAOS_KEEP") != "1" {
		t.Log("run again with CHAOS_KEEP=1 to keep the logs (pool.log, scheduler.log, faults.log) and the ledger files")
	}
}

// readRuns reads the ledger file: key -> runs in the order they ended.
func readRuns(t *testing.T, path string) map[string][]jobRun {
	runs := map[string][]jobRun{}
	for _, line := range readLines(path) {
		f := strings.Fields(line)
		if len(f) != 7 {
			t.Errorf("ledger line %q: want key attempt pid outcome id start end", line)
			continue
		}
		attempt, _ := strconv.Atoi(f[1])
		pid, _ := strconv.Atoi(f[2])
		start, _ := strconv.ParseInt(f[5], 10, 64)
		end, _ := strconv.ParseInt(f[6], 10, 64)
		runs[f[0]] = append(runs[f[0]], jobRun{attempt: attempt, pid: pid, outcome: f[3], id: f[4], start: start, end: end})
	}
	return runs
}

func readLines(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			out = append(out, line)
		}
	}
	return out
}

func countLines(path string) int { return len(readLines(path)) }

// readFailed reads the failed list: job key -> exception and error of
// each entry.
func readFailed(t *testing.T, c *rdb.Client) map[string][]string {
	entries, err := strList(c.Do(context.Background(), "LRANGE", c.Keys().Failed(), 0, -1))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, e := range entries {
		var f struct {
			Exception string `json:"exception"`
			Error     string `json:"error"`
			Payload   struct {
				Class string            `json:"class"`
				Args  []json.RawMessage `json:"args"`
				ID    string            `json:"id"`
			} `json:"payload"`
		}
		var key string
		if json.Unmarshal([]byte(e), &f) != nil || len(f.Payload.Args) == 0 || json.Unmarshal(f.Payload.Args[0], &key) != nil {
			t.Errorf("unexpected failed entry %s", e)
			continue
		}
		if f.Payload.Class == classPlan {
			key += "/" + f.Payload.ID
		}
		out[key] = append(out[key], f.Exception+": "+f.Error)
	}
	return out
}
