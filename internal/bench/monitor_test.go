package bench

import (
	"context"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redistest"
)

// The monitor's own commands and round trips must not count as the
// workers': on a server nobody else uses, two snapshots with polls and
// commands in between differ by nothing.
func TestSnapshotSubtractsOwnTraffic(t *testing.T) {
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	m, err := newMonitor(context.Background(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	if _, err := m.snapshot("k:processed"); err != nil { // the first snapshot's own INFOs come before any window
		t.Fatal(err)
	}
	a, err := m.snapshot("k:processed")
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, _, err := m.poll("k:queue", "k:processed"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.do("SADD", "k:queues", "q"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.do("RENAME", "k:queues", "k:queues2"); err != nil {
		t.Fatal(err)
	}
	z, err := m.snapshot("k:processed")
	if err != nil {
		t.Fatal(err)
	}
	d := diff(a, z)
	if len(d.cmds) != 0 {
		t.Errorf("commands left after subtracting the monitor's own: %v", d.cmds)
	}
	if !d.hasReads || d.reads != 0 {
		t.Errorf("round trips left: %d (counted: %v)", d.reads, d.hasReads)
	}
	if !(d.seconds > 0) || d.jobs != 0 {
		t.Errorf("seconds %v, jobs %d", d.seconds, d.jobs)
	}
}

// Another client's commands, and those its script runs, are counted.
func TestSnapshotCountsOthers(t *testing.T) {
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	m, err := newMonitor(context.Background(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	other, err := dial(context.Background(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer other.close()
	a, err := m.snapshot("p")
	if err != nil {
		t.Fatal(err)
	}
	other.send("INCR", "p")
	other.send("EVAL", "redis.call('INCR', KEYS[1]); return redis.call('INCR', KEYS[1])", "1", "p")
	if err := other.flush(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := other.receive(); err != nil {
			t.Fatal(err)
		}
	}
	z, err := m.snapshot("p")
	if err != nil {
		t.Fatal(err)
	}
	d := diff(a, z)
	cmds, scripts := d.commands()
	if cmds != 3 || scripts != 1 || d.jobs != 3 {
		t.Errorf("commands %d (want 3), scripts %d (want 1), counter +%d (want 3): %v", cmds, scripts, d.jobs, d.cmds)
	}
	if d.reads != 1 {
		t.Errorf("round trips %d, want 1 (one pipeline)", d.reads)
	}
}

func TestPercentile(t *testing.T) {
	var v []time.Duration
	for i := 1; i <= 100; i++ {
		v = append(v, time.Duration(i))
	}
	for p, want := range map[float64]time.Duration{0.5: 50, 0.99: 99, 1: 100, 0: 1} {
		if got := percentile(v, p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if got := median([]float64{3, 1, 2, 10}); got != 2.5 {
		t.Errorf("median %v, want 2.5", got)
	}
}
