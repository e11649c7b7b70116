package stats

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Render writes s as aligned tables: queues (a row per host and a total row
// per queue), workers, hosts and processes from the runtime records, and the
// global counters. Ages ("5s") are relative to s.Time, so the output depends
// on the snapshot alone. It is written with one Write call, so a terminal
// redraw does not flicker.
func Render(w io.Writer, s *Snapshot) error {
	var b bytes.Buffer
	b.WriteString("resque-go stats at " + FormatTime(s.Time))
	if s.HostFilter != "" {
		b.WriteString(" (host " + s.HostFilter + ")")
	}
	b.WriteString("\n\n")
	renderQueues(&b, s)
	renderWorkers(&b, s)
	renderHosts(&b, s)
	renderSchedulers(&b, s)
	renderTotals(&b, s)
	renderProblems(&b, s)
	renderSetAside(&b, s)
	_, err := w.Write(b.Bytes())
	return err
}

func renderQueues(b *bytes.Buffer, s *Snapshot) {
	b.WriteString("QUEUES\n")
	if len(s.Queues) == 0 {
		b.WriteString("(none)\n")
		writePaused(b, s)
		b.WriteByte('\n')
		return
	}
	t := newTable("QUEUE", "HOST", ">PENDING", ">DEQUEUED", ">PROCESSED", ">FAILED", ">RETRIES", ">AVG WAIT", ">AVG RUN")
	for _, q := range s.Queues {
		name := q.Name
		for _, h := range q.Hosts {
			t.add(append([]string{name, h.Host, ""}, counterCells(h.QueueCounters)...)...)
			name = ""
		}
		pending := num(q.Pending)
		if q.Problem != "" {
			pending = unreadable
		}
		total := "total"
		if q.Paused {
			total = "total (paused)"
		}
		t.add(append([]string{name, total, pending}, counterCells(q.QueueCounters)...)...)
	}
	t.write(b)
	writePaused(b, s)
	b.WriteByte('\n')
}

// writePaused names the paused queues, if any.
func writePaused(b *bytes.Buffer, s *Snapshot) {
	if len(s.PausedQueues) > 0 {
		fmt.Fprintf(b, "paused: %s\n", strings.Join(s.PausedQueues, ", "))
	}
}

func counterCells(c QueueCounters) []string {
	return []string{num(c.Dequeued), num(c.Processed), num(c.Failed), num(c.Retries),
		millis(c.AvgQueueTimeMs, c.Dequeued), millis(c.AvgProcessingTimeMs, c.Processed+c.Failed+c.Retries)}
}

func renderWorkers(b *bytes.Buffer, s *Snapshot) {
	b.WriteString("WORKERS\n")
	if len(s.Workers) == 0 {
		b.WriteString("(none)\n\n")
		return
	}
	t := newTable("WORKER", "STATE", "QUEUE", "CLASS", ">RUNNING", ">UP", ">HEARTBEAT", ">RSS", ">CPU%")
	for _, w := range s.Workers {
		running, class := "", ""
		if w.State == StateWorking {
			running = age(s.Time, w.RunAt, protocol.RunAtLayout, time.RFC3339)
			class = dash(w.Class)
		}
		rss, cpu := "-", "-"
		if w.RSSBytes != nil {
			rss = bytesIEC(*w.RSSBytes)
		}
		if w.CPUPercent != nil {
			cpu = pct(*w.CPUPercent)
		}
		t.add(w.ID, w.State, w.Queue, class, running,
			age(s.Time, w.Started, protocol.StartedLayout),
			age(s.Time, w.Heartbeat, time.RFC3339), rss, cpu)
	}
	t.write(b)
	b.WriteByte('\n')
}

func renderHosts(b *bytes.Buffer, s *Snapshot) {
	b.WriteString("HOSTS (resque-go runtime records)\n")
	if len(s.Hosts) == 0 {
		b.WriteString("(none)\n\n")
		return
	}
	t := newTable("HOST", ">PROCS", ">SLOTS", ">RSS", ">CPU%", ">MEM%", ">LOAD1", ">LOAD5", ">LOAD15", ">UPDATED")
	for _, h := range s.Hosts {
		t.add(h.Host, strconv.Itoa(len(h.Processes)), slots(h.SlotsBusy, h.SlotsTotal), bytesIEC(h.RSSBytes),
			pct(h.HostCPUPercent), pct(h.MemUsedPercent), loadAvg(h.Load1), loadAvg(h.Load5), loadAvg(h.Load15),
			since(s.Time, h.UpdatedAt))
	}
	t.write(b)
	b.WriteByte('\n')

	b.WriteString("PROCESSES\n")
	t = newTable("HOST", ">PID", ">SLOTS", ">RSS", ">CPU%", ">GOROUTINES", ">INTERVAL", ">UP", ">UPDATED")
	for _, h := range s.Hosts {
		for _, p := range h.Processes {
			t.add(p.Host, strconv.Itoa(p.PID), slots(p.SlotsBusy, p.SlotsTotal), bytesIEC(p.RSSBytes),
				pct(p.CPUPercent), strconv.Itoa(p.Goroutines), seconds(p.HeartbeatIntervalS),
				since(s.Time, p.StartedAt), since(s.Time, p.UpdatedAt))
		}
	}
	t.write(b)
	b.WriteByte('\n')
	renderWrongType(b, s)
}

// renderWrongType lists the queues processes skip because their key holds
// another type; nothing when there are none.
func renderWrongType(b *bytes.Buffer, s *Snapshot) {
	var t *table
	for _, h := range s.Hosts {
		for _, p := range h.Processes {
			if len(p.WrongTypeQueues) == 0 {
				continue
			}
			if t == nil {
				b.WriteString("SKIPPED QUEUES (their key holds another type: fix or delete the key)\n")
				t = newTable("HOST", ">PID", "QUEUES")
			}
			t.add(p.Host, strconv.Itoa(p.PID), strings.Join(p.WrongTypeQueues, ","))
		}
	}
	if t != nil {
		t.write(b)
		b.WriteByte('\n')
	}
}

// renderSchedulers shows the scheduler records; nothing when there are none.
func renderSchedulers(b *bytes.Buffer, s *Snapshot) {
	if len(s.Schedulers) == 0 {
		return
	}
	b.WriteString("SCHEDULERS\n")
	t := newTable("HOST", ">PID", "MASTER", ">SCHEDULES", ">DUE", "NEXT PLAN SLOT", ">PROMOTED", ">PLANS FIRED", ">SCHEDULES FIRED", ">LAST PASS", ">UP")
	for _, in := range s.Schedulers {
		master, next := "no", "-"
		if in.Master {
			master = "yes"
		}
		if !in.NextPlanSlot.IsZero() {
			next = FormatTime(in.NextPlanSlot)
		}
		t.add(in.Host, strconv.Itoa(in.PID), master, strconv.Itoa(in.Schedules), num(in.DueItems), next,
			num(in.Promoted), num(in.PlansFired), num(in.SchedulesFired), since(s.Time, in.LastPass), since(s.Time, in.Started))
	}
	t.write(b)
	b.WriteByte('\n')
}

// unreadable stands for a number whose key is listed under PROBLEMS.
const unreadable = "?"

func renderTotals(b *bytes.Buffer, s *Snapshot) {
	b.WriteString("TOTALS\n")
	tt := s.Totals
	// counter is n, or unreadable when Collect could not read its key
	counter := func(n int64, total string) string {
		if s.UnreadTotals[total] {
			return unreadable
		}
		return num(n)
	}
	t := newTable("", ">")
	t.add("processed", counter(tt.Processed, "processed"))
	t.add("failed", counter(tt.Failed, "failed"))
	t.add("retries", counter(tt.Retries, "retries"))
	t.add("failed list", counter(tt.FailedList, "failed_list"))
	t.add("retries list", counter(tt.RetriesList, "retries_list"))
	t.add("pending", num(tt.Pending))
	t.add("queues", strconv.Itoa(tt.Queues))
	t.add("workers", strconv.Itoa(tt.Workers))
	t.add("working", strconv.Itoa(tt.Working))
	t.add("processes", strconv.Itoa(tt.Processes))
	t.rows = t.rows[1:] // no header line
	t.write(b)
}

// renderProblems lists the keys that could not be read; nothing when none.
func renderProblems(b *bytes.Buffer, s *Snapshot) {
	if len(s.Problems) == 0 {
		return
	}
	b.WriteString("\nPROBLEMS (shown as " + unreadable + " above; the rest is whole)\n")
	t := newTable("KEY", "PROBLEM")
	for _, p := range s.Problems {
		t.add(p.Key, p.Problem)
	}
	t.write(b)
}

// renderSetAside lists the keys workers set aside; nothing when none.
func renderSetAside(b *bytes.Buffer, s *Snapshot) {
	if len(s.SetAside) == 0 {
		return
	}
	b.WriteString("\nKEYS SET ASIDE (written by hand: fix or delete each; shown for a day after it was last met)\n")
	t := newTable("KEY", ">LAST MET", "WHAT WAS NOT DONE")
	for _, k := range s.SetAside {
		t.add(k.Key, FormatAgo(s.Time, k.At), k.What)
	}
	t.write(b)
}

// table is a block of left- or right-aligned columns two spaces apart. A
// heading starting with ">" marks a right-aligned column.
type table struct {
	right []bool
	rows  [][]string
}

func newTable(head ...string) *table {
	t := &table{right: make([]bool, len(head))}
	cells := make([]string, len(head))
	for i, h := range head {
		cells[i], t.right[i] = strings.TrimPrefix(h, ">"), strings.HasPrefix(h, ">")
	}
	t.rows = append(t.rows, cells)
	return t
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(b *bytes.Buffer) {
	widths := make([]int, len(t.right))
	for _, r := range t.rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range t.rows {
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				line.WriteString("  ")
			}
			if t.right[i] {
				line.WriteString(pad + c)
			} else {
				line.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
}

func num(n int64) string { return strconv.FormatInt(n, 10) }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// millis shows an average in ms, or "-" when nothing was counted.
func millis(avg float64, n int64) string {
	if n <= 0 {
		return "-"
	}
	if avg >= 1000 {
		return strconv.FormatFloat(avg/1000, 'f', 2, 64) + "s"
	}
	return strconv.FormatFloat(avg, 'f', 1, 64) + "ms"
}

func pct(f float64) string     { return FormatPercent(f) }
func loadAvg(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

func seconds(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) + "s" }

func slots(busy, total int) string { return strconv.Itoa(busy) + "/" + strconv.Itoa(total) }

// FormatPercent shows a percentage with one decimal.
func FormatPercent(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

func bytesIEC(n uint64) string { return FormatBytes(n) }

// FormatBytes shows a byte count in KiB, MiB or GiB with one decimal.
func FormatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}

// age shows how long before now the time in v was, trying each layout; a
// value none of them reads is shown as it is, an empty one as "-".
func age(now time.Time, v string, layouts ...string) string {
	if v == "" {
		return "-"
	}
	for _, l := range layouts {
		if t, err := time.Parse(l, v); err == nil {
			return since(now, t)
		}
	}
	return v
}

// since formats now-t in at most two units: 42s, 5m07s, 2h03m, 3d04h ("0s"
// for a time in the future, which a skewed clock can give).
func since(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return FormatDuration(now.Sub(t))
}

// FormatTime is how resque-go's text output shows a time: in UTC, to the
// second, "2026-11-28 14:05:03 UTC"; "-" for the zero time.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// FormatAgo is how resque-go's text output shows how long before now t
// was: "3m12s ago" ("in 3m12s" for a time after now); "-" for the zero time.
func FormatAgo(now, t time.Time) string {
	switch {
	case t.IsZero():
		return "-"
	case t.After(now):
		return "in " + FormatDuration(t.Sub(now))
	}
	return FormatDuration(now.Sub(t)) + " ago"
}

// FormatDuration shows d in at most two units: 42s, 5m07s, 2h03m, 3d04h
// (0s for a negative d, which a skewed clock can give).
func FormatDuration(d time.Duration) string {
	secs := int64(max(0, d).Round(time.Second) / time.Second)
	switch {
	case secs < 60:
		return fmt.Sprintf("%ds", secs)
	case secs < 3600:
		return fmt.Sprintf("%dm%02ds", secs/60, secs%60)
	case secs < 86400:
		return fmt.Sprintf("%dh%02dm", secs/3600, secs%3600/60)
	default:
		return fmt.Sprintf("%dd%02dh", secs/86400, secs%86400/3600)
	}
}
