package statsio

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/stats"
)

// Collect reads the whole cluster: one pipeline for the global counters and
// the queue and worker sets, SCANs for the queuestat counters and runtime
// records, and one pipeline for everything those point at. hostFilter, when
// not "", keeps only that host's counters, workers and runtime records (the
// global counters and queue lengths have no host and stay whole).
//
// The reads are not one atomic view: a job that moves between them may be
// counted twice or not at all, as in any Resque dashboard.
func Collect(ctx context.Context, client *rdb.Client, hostFilter string) (*stats.Snapshot, error) {
	k := client.Keys()
	ov, err := client.StatsOverview(ctx)
	bad, _ := rdb.BadKeys(err)
	if err != nil && bad == nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	statKeys, err := client.ScanKeys(ctx, k.QueueStatPattern())
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	procKeys, err := client.ScanKeys(ctx, k.ProcessPattern())
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	schedKeys, err := client.ScanKeys(ctx, k.SchedulerPattern())
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	paused, err := client.PausedQueueNames(ctx)
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	slices.Sort(paused)
	keep := func(host string) bool { return hostFilter == "" || host == hostFilter }

	c := collector{snap: &stats.Snapshot{Time: ov.Now.UTC(), HostFilter: hostFilter}}
	c.planQueues(k, ov.Queues, statKeys, keep)
	c.planWorkers(k, ov.Workers, keep)
	for _, key := range procKeys {
		if host, _, ok := k.ParseProcess(key); ok && keep(host) {
			c.procKeys = append(c.procKeys, key)
		}
	}

	for _, key := range schedKeys {
		if host, _, ok := k.ParseSchedulerRecord(key); ok && keep(host) {
			c.schedKeys = append(c.schedKeys, key)
		}
	}

	gets := slices.Concat(c.statKeys, c.recordKeys, c.startedKeys, c.procKeys, c.schedKeys)
	lens, vals, err := client.BatchRead(ctx, c.queueKeys, gets)
	more, _ := rdb.BadKeys(err)
	if err != nil && more == nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	bad = append(bad, more...)
	statVals, vals := vals[:len(c.statKeys)], vals[len(c.statKeys):]
	recVals, vals := vals[:len(c.recordKeys)], vals[len(c.recordKeys):]
	startedVals, vals := vals[:len(c.startedKeys)], vals[len(c.startedKeys):]
	procVals, schedVals := vals[:len(c.procKeys)], vals[len(c.procKeys):]

	s := c.snap
	s.Totals = stats.Totals{Processed: ov.Processed, Failed: ov.Failed, Retries: ov.Retries,
		FailedList: ov.FailedLen, RetriesList: ov.RetriesLen}
	c.fillQueues(lens, statVals)
	s.PausedQueues = append([]string{}, paused...)
	for i := range s.Queues {
		_, s.Queues[i].Paused = slices.BinarySearch(paused, s.Queues[i].Name)
	}
	c.fillProblems(k, bad)
	for _, a := range ov.SetAside {
		s.SetAside = append(s.SetAside, stats.SetAsideKey{Key: a.Key, What: a.What, At: a.At})
	}
	c.fillHosts(procVals)
	c.fillSchedulers(schedVals)
	c.fillWorkers(ov, recVals, startedVals)
	c.countBusySlots()
	s.Totals.Queues, s.Totals.Workers = len(s.Queues), len(s.Workers)
	for _, q := range s.Queues {
		s.Totals.Pending += q.Pending
	}
	for _, w := range s.Workers {
		if w.State == stats.StateWorking {
			s.Totals.Working++
		}
	}
	for _, h := range s.Hosts {
		s.Totals.Processes += len(h.Processes)
	}
	return s, nil
}

// collector holds the keys one Collect reads and what they map back to.
type collector struct {
	snap *stats.Snapshot

	queues    []string // sorted queue names
	queueKeys []string // queue:<q>, parallel to queues

	statKeys []string // queuestat keys kept, and what each one is
	statOf   []statRef

	workerIDs   []parsedWorker
	recordKeys  []string // worker:<id>, parallel to workerIDs
	startedKeys []string // worker:<id>:started, parallel to workerIDs

	procKeys  []string
	schedKeys []string
}

// fillSchedulers decodes the scheduler records, sorted by host and pid; a
// record that vanished or does not decode is skipped.
func (c *collector) fillSchedulers(vals [][]byte) {
	c.snap.Schedulers = []stats.SchedulerInfo{}
	for _, v := range vals {
		var in stats.SchedulerInfo
		if v == nil || json.Unmarshal(v, &in) != nil {
			continue
		}
		c.snap.Schedulers = append(c.snap.Schedulers, in)
	}
	slices.SortFunc(c.snap.Schedulers, func(a, b stats.SchedulerInfo) int {
		if a.Host != b.Host {
			return strings.Compare(a.Host, b.Host)
		}
		return a.PID - b.PID
	})
}

type statRef struct{ host, stat, queue string }

type parsedWorker struct {
	id     string
	parsed protocol.WorkerID // zero for an id that does not parse
}

// queueStats are the six counter names Collect reads; other words in the
// stat position are not ours and are skipped.
var queueStats = []string{
	protocol.QueueStatDequeued, protocol.QueueStatQueueTime, protocol.QueueStatProcessed,
	protocol.QueueStatProcessingTime, protocol.QueueStatFailed, protocol.QueueStatRetries,
}

// planQueues lists every queue in the queues set or in a queuestat key (a
// queue removed from the set may still have counters) and the counters kept.
func (c *collector) planQueues(k protocol.Keys, set, statKeys []string, keep func(string) bool) {
	names := map[string]bool{}
	for _, q := range set {
		names[q] = true
	}
	for _, key := range statKeys {
		host, stat, queue, ok := k.ParseQueueStat(key)
		if !ok || host == "" || queue == "" || !slices.Contains(queueStats, stat) {
			continue
		}
		names[queue] = true
		if keep(host) {
			c.statKeys = append(c.statKeys, key)
			c.statOf = append(c.statOf, statRef{host, stat, queue})
		}
	}
	for q := range names {
		c.queues = append(c.queues, q)
	}
	slices.Sort(c.queues)
	for _, q := range c.queues {
		c.queueKeys = append(c.queueKeys, k.Queue(q))
	}
}

func (c *collector) planWorkers(k protocol.Keys, ids []string, keep func(string) bool) {
	for _, id := range ids {
		w, err := protocol.ParseWorkerID(id)
		if err != nil {
			w = protocol.WorkerID{} // an odd id: shown, but with no host it matches no filter
		}
		if !keep(w.Host) {
			continue
		}
		c.workerIDs = append(c.workerIDs, parsedWorker{id: id, parsed: w})
	}
	slices.SortFunc(c.workerIDs, func(a, b parsedWorker) int {
		return cmp.Or(cmp.Compare(a.parsed.Host, b.parsed.Host), cmp.Compare(a.parsed.PID, b.parsed.PID),
			cmp.Compare(a.parsed.Slot, b.parsed.Slot), cmp.Compare(a.id, b.id))
	})
	for _, w := range c.workerIDs {
		c.recordKeys = append(c.recordKeys, k.Worker(w.id))
		c.startedKeys = append(c.startedKeys, k.WorkerStarted(w.id))
	}
}

func (c *collector) fillQueues(lens []int64, statVals [][]byte) {
	perHost := map[string]map[string]*stats.QueueCounters{} // queue -> host -> counters
	for i, ref := range c.statOf {
		n, err := strconv.ParseInt(string(statVals[i]), 10, 64)
		if err != nil {
			continue // absent since the SCAN, or not a counter: not ours to judge
		}
		hosts := perHost[ref.queue]
		if hosts == nil {
			hosts = map[string]*stats.QueueCounters{}
			perHost[ref.queue] = hosts
		}
		qc := hosts[ref.host]
		if qc == nil {
			qc = &stats.QueueCounters{}
			hosts[ref.host] = qc
		}
		switch ref.stat {
		case protocol.QueueStatDequeued:
			qc.Dequeued += n
		case protocol.QueueStatQueueTime:
			qc.QueueTimeMs += n
		case protocol.QueueStatProcessed:
			qc.Processed += n
		case protocol.QueueStatProcessingTime:
			qc.ProcessingTimeMs += n
		case protocol.QueueStatFailed:
			qc.Failed += n
		case protocol.QueueStatRetries:
			qc.Retries += n
		}
	}
	s := c.snap
	s.Queues = make([]stats.Queue, len(c.queues))
	for i, name := range c.queues {
		q := stats.Queue{Name: name, Pending: lens[i], Hosts: []stats.QueueHost{}}
		for host, qc := range perHost[name] {
			qc.Averages()
			q.Hosts = append(q.Hosts, stats.QueueHost{Host: host, QueueCounters: *qc})
			q.Add(qc)
		}
		slices.SortFunc(q.Hosts, func(a, b stats.QueueHost) int { return cmp.Compare(a.Host, b.Host) })
		q.Averages()
		s.Queues[i] = q
	}
}

// fillProblems lists the keys that could not be read and marks the queues
// whose key is one of them.
func (c *collector) fillProblems(k protocol.Keys, bad []rdb.KeyProblem) {
	s := c.snap
	s.Problems = make([]stats.KeyProblem, len(bad))
	byKey := map[string]string{}
	for i, p := range bad {
		s.Problems[i] = stats.KeyProblem{Key: p.Key, Problem: p.Problem}
		byKey[p.Key] = p.Problem
	}
	for i := range s.Queues {
		s.Queues[i].Problem = byKey[c.queueKeys[i]]
	}
	s.UnreadTotals = map[string]bool{}
	for total, key := range map[string]string{"processed": k.StatProcessed(), "failed": k.StatFailed(),
		"retries": k.StatRetries(), "failed_list": k.Failed(), "retries_list": k.Retries()} {
		if _, ok := byKey[key]; ok {
			s.UnreadTotals[total] = true
		}
	}
}

// fillHosts decodes the runtime records and groups them by host. A record
// that expired since the SCAN or does not decode is skipped.
func (c *collector) fillHosts(vals [][]byte) {
	byHost := map[string]*stats.Host{}
	for _, v := range vals {
		if v == nil {
			continue
		}
		r, err := protocol.ParseProcessRecord(v)
		if err != nil || r.Host == "" {
			continue
		}
		h := byHost[r.Host]
		if h == nil {
			h = &stats.Host{Host: r.Host}
			byHost[r.Host] = h
		}
		h.Processes = append(h.Processes, stats.Record(r))
		h.SlotsBusy += r.SlotsBusy
		h.SlotsTotal += r.SlotsTotal
		h.RSSBytes += r.RSSBytes
		if len(h.Processes) == 1 || r.UpdatedAt.After(h.UpdatedAt) {
			h.UpdatedAt = r.UpdatedAt
			h.HostCPUPercent, h.MemUsedPercent = r.HostCPUPercent, r.MemUsedPercent
			h.Load1, h.Load5, h.Load15 = r.Load1, r.Load5, r.Load15
		}
	}
	s := c.snap
	s.Hosts = []stats.Host{}
	for _, h := range byHost {
		slices.SortFunc(h.Processes, func(a, b stats.Record) int { return cmp.Compare(a.PID, b.PID) })
		s.Hosts = append(s.Hosts, *h)
	}
	slices.SortFunc(s.Hosts, func(a, b stats.Host) int { return cmp.Compare(a.Host, b.Host) })
}

// fillWorkers builds the worker rows and joins each with its process's
// runtime record by host and pid.
func (c *collector) fillWorkers(ov rdb.StatsOverview, recVals, startedVals [][]byte) {
	type hostPID struct {
		host string
		pid  int
	}
	procs := map[hostPID]*stats.Record{}
	for hi := range c.snap.Hosts {
		h := &c.snap.Hosts[hi]
		for pi := range h.Processes {
			procs[hostPID{h.Host, h.Processes[pi].PID}] = &h.Processes[pi]
		}
	}
	s := c.snap
	s.Workers = make([]stats.Worker, len(c.workerIDs))
	for i, pw := range c.workerIDs {
		p := pw.parsed
		w := stats.Worker{ID: pw.id, Host: p.Host, PID: p.PID, Slot: p.Slot, Queues: p.Queues,
			State: stats.StateIdle, Started: string(startedVals[i]), Heartbeat: ov.Heartbeats[pw.id]}
		if iv, err := strconv.ParseFloat(ov.Intervals[pw.id], 64); err == nil {
			w.HeartbeatIntervalS = iv
		}
		if recVals[i] != nil {
			w.State = stats.StateWorking
			w.Queue, w.Class, w.RunAt = currentJob(recVals[i])
		}
		if r := procs[hostPID{p.Host, p.PID}]; r != nil && p.Host != "" {
			rss, cpu := r.RSSBytes, r.CPUPercent
			w.RSSBytes, w.CPUPercent = &rss, &cpu
		}
		s.Workers[i] = w
	}
}

// countBusySlots counts the busy slots of each runtime record that lists its
// worker ids from those workers' worker:<id> records, read with them. The
// record's own slots_busy is refreshed once per heartbeat interval while
// worker:<id> is written as each job starts and removed as it ends, so the
// record alone could show 0/4 next to four working workers. Records
// without worker ids keep their count.
func (c *collector) countBusySlots() {
	s := c.snap
	working := map[string]bool{}
	for _, w := range s.Workers {
		if w.State == stats.StateWorking {
			working[w.ID] = true
		}
	}
	for hi := range s.Hosts {
		h := &s.Hosts[hi]
		h.SlotsBusy = 0
		for pi := range h.Processes {
			p := &h.Processes[pi]
			if len(p.WorkerIDs) > 0 {
				busy := 0
				for _, id := range p.WorkerIDs {
					if working[id] {
						busy++
					}
				}
				if p.SlotsTotal > 0 {
					busy = min(busy, p.SlotsTotal)
				}
				p.SlotsBusy = busy
			}
			h.SlotsBusy += p.SlotsBusy
		}
	}
}

// currentJob reads queue, class and run_at from a worker:<id> value. What
// does not decode stays "": the worker is still shown as working.
func currentJob(rec []byte) (queue, class, runAt string) {
	r, err := protocol.ParseWorkerRecord(rec)
	if err != nil && r.Queue == "" && r.Payload == nil {
		return "", "", ""
	}
	if p, err := protocol.DecodePayload(r.Payload); err == nil {
		class = cmp.Or(p.HandlerClass(), p.Class)
	}
	return r.Queue, class, r.RunAt
}
