package bench

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"
)

// monitor is the bench's one connection for watching the server. It counts
// every command and round trip it sends, so that its own traffic can be
// taken out of the server's statistics between two snapshots.
type monitor struct {
	c     *conn
	own   map[string]int64 // commands sent, by commandstats name
	reads int64            // round trips sent
}

func newMonitor(ctx context.Context, url string) (*monitor, error) {
	c, err := dial(ctx, url)
	if err != nil {
		return nil, err
	}
	return &monitor{c: c, own: map[string]int64{}}, nil
}

func (m *monitor) close() { m.c.close() }

// cmdStat is one command's line of INFO commandstats.
type cmdStat struct {
	Calls int64
	Usec  int64
}

// snapshot is the server's counters at one instant, with the monitor's own
// traffic up to that instant.
type snapshot struct {
	at           time.Time
	cpu, mainCPU float64 // seconds: used_cpu_sys+used_cpu_user, and of the main thread
	hasMain      bool
	reads        int64 // total_reads_processed
	cmds         map[string]cmdStat
	processed    int64 // <ns>:stat:processed
	ownCmds      map[string]int64
	ownReads     int64
	hasReads     bool
}

// snapshot reads INFO commandstats, cpu and stats and the processed counter
// in one MULTI/EXEC (one round trip, nothing of other clients in between).
// processedKey may be "" (then processed is 0).
func (m *monitor) snapshot(processedKey string) (snapshot, error) {
	c := m.c
	c.send("MULTI")
	c.send("INFO", "commandstats")
	c.send("INFO", "cpu")
	c.send("INFO", "stats")
	if processedKey != "" {
		c.send("GET", processedKey)
	}
	c.send("EXEC")
	if err := c.flush(); err != nil {
		return snapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	// What Redis has counted of ours when INFO commandstats runs: every
	// earlier command and this MULTI; this round trip is already read.
	m.own["multi"]++
	m.reads++
	s := snapshot{ownCmds: maps.Clone(m.own), ownReads: m.reads}
	m.own["info"] += 3
	m.own["exec"]++
	if processedKey != "" {
		m.own["get"]++
	}
	queued := 4
	if processedKey != "" {
		queued = 5
	}
	for range queued {
		if _, err := c.receive(); err != nil {
			return snapshot{}, fmt.Errorf("snapshot: %w", err)
		}
	}
	v, err := c.receive()
	s.at = time.Now()
	if err != nil {
		return snapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	replies, ok := v.([]any)
	if !ok || len(replies) != queued-1 {
		return snapshot{}, fmt.Errorf("snapshot: unexpected EXEC reply %T", v)
	}
	for i, section := range replies[:3] {
		text, ok := section.(string)
		if !ok {
			return snapshot{}, fmt.Errorf("snapshot: INFO reply %d is %T", i, section)
		}
		s.parseInfo(text)
	}
	if processedKey != "" && replies[3] != nil {
		if s.processed, err = integer(replies[3], nil); err != nil {
			return snapshot{}, fmt.Errorf("snapshot: processed counter: %w", err)
		}
	}
	return s, nil
}

// parseInfo reads the fields the bench uses from INFO text.
func (s *snapshot) parseInfo(text string) {
	if s.cmds == nil {
		s.cmds = map[string]cmdStat{}
	}
	var sys, user, msys, muser float64
	var haveMainSys, haveMainUser bool
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		key, val, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok || strings.HasPrefix(key, "#") {
			continue
		}
		switch {
		case strings.HasPrefix(key, "cmdstat_"):
			s.cmds[strings.TrimPrefix(key, "cmdstat_")] = parseCmdStat(val)
		case key == "used_cpu_sys":
			sys, _ = strconv.ParseFloat(val, 64)
		case key == "used_cpu_user":
			user, _ = strconv.ParseFloat(val, 64)
		case key == "used_cpu_sys_main_thread":
			msys, _ = strconv.ParseFloat(val, 64)
			haveMainSys = true
		case key == "used_cpu_user_main_thread":
			muser, _ = strconv.ParseFloat(val, 64)
			haveMainUser = true
		case key == "total_reads_processed":
			s.reads, _ = strconv.ParseInt(val, 10, 64)
			s.hasReads = true
		}
	}
	if sys != 0 || user != 0 {
		s.cpu = sys + user
	}
	if haveMainSys && haveMainUser {
		s.mainCPU, s.hasMain = msys+muser, true
	}
}

// parseCmdStat reads "calls=3,usec=12,usec_per_call=4.00,...".
func parseCmdStat(val string) cmdStat {
	var st cmdStat
	for _, kv := range strings.Split(val, ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "calls":
			st.Calls, _ = strconv.ParseInt(v, 10, 64)
		case "usec":
			st.Usec, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return st
}

// poll reads a list's length and a counter in one round trip.
func (m *monitor) poll(listKey, counterKey string) (length, counter int64, err error) {
	c := m.c
	c.send("LLEN", listKey)
	c.send("GET", counterKey)
	m.own["llen"]++
	m.own["get"]++
	m.reads++
	if err := c.flush(); err != nil {
		return 0, 0, fmt.Errorf("poll: %w", err)
	}
	length, err = integer(c.receive())
	counter, err2 := integer(c.receive())
	if err == nil {
		err = err2
	}
	if err != nil {
		return 0, 0, fmt.Errorf("poll: %w", err)
	}
	return length, counter, nil
}

// do runs one command on the monitor connection, counted as the bench's own.
func (m *monitor) do(name string, args ...string) (any, error) {
	m.own[strings.ToLower(name)]++
	m.reads++
	return m.c.do(append([]string{name}, args...)...)
}

// scriptCommands are what commandstats counts as running a script; the
// commands a script runs are counted under their own names as well.
var scriptCommands = map[string]bool{
	"eval": true, "evalsha": true, "eval_ro": true, "evalsha_ro": true, "fcall": true, "fcall_ro": true,
}

// delta is what the server did between two snapshots, less the monitor's
// own commands and round trips.
type delta struct {
	seconds  float64
	cpu      float64 // seconds
	mainCPU  float64
	hasMain  bool
	reads    int64
	hasReads bool
	cmds     map[string]cmdStat // every command with calls > 0, scripts included
	jobs     int64              // processed counter difference
}

func diff(a, b snapshot) delta {
	d := delta{
		seconds:  b.at.Sub(a.at).Seconds(),
		cpu:      b.cpu - a.cpu,
		mainCPU:  b.mainCPU - a.mainCPU,
		hasMain:  a.hasMain && b.hasMain,
		reads:    (b.reads - a.reads) - (b.ownReads - a.ownReads),
		hasReads: a.hasReads && b.hasReads,
		cmds:     map[string]cmdStat{},
		jobs:     b.processed - a.processed,
	}
	for name, bs := range b.cmds {
		as := a.cmds[name]
		calls := bs.Calls - as.Calls - (b.ownCmds[name] - a.ownCmds[name])
		usec := bs.Usec - as.Usec
		if calls > 0 {
			d.cmds[name] = cmdStat{Calls: calls, Usec: usec}
		}
	}
	return d
}

// commands is the number of commands executed (those run by scripts too),
// and scripts the number of script calls.
func (d delta) commands() (commands, scripts int64) {
	for name, st := range d.cmds {
		if scriptCommands[name] {
			scripts += st.Calls
		} else {
			commands += st.Calls
		}
	}
	return commands, scripts
}
