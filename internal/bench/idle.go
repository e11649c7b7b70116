package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/resque-go/resque-go/internal/protocol"
)

// idleConfig is one idle worker process to watch.
type idleConfig struct {
	slots, queues int
}

var idleConfigs = []idleConfig{{1, 1}, {16, 1}, {16, 10}}

func (ic idleConfig) String() string {
	return fmt.Sprintf("%d %s, %d %s", ic.slots, plural(ic.slots, "slot"), ic.queues, plural(ic.queues, "queue"))
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// idle watches one idle worker process per run: after it registered and
// settled, every command Redis runs for cfg.Idle is the process's.
func (b *bencher) idle(ctx context.Context, ic idleConfig) (Idle, error) {
	res := Idle{Config: ic.String(), Slots: ic.slots, Queues: ic.queues, Seconds: b.cfg.Idle.Seconds()}
	for i := 1; i <= b.cfg.Runs; i++ {
		b.log.Info().Str("scenario", ScenarioIdle).Str("config", ic.String()).Int("run", i).Int("runs", b.cfg.Runs).
			Dur("duration", b.cfg.Idle).Msg("bench run started")
		run, err := b.idleRun(ctx, ic)
		if err != nil {
			return res, fmt.Errorf("idle (%s) run %d: %w", ic, i, err)
		}
		res.Runs = append(res.Runs, run)
	}
	res.summarize()
	return res, nil
}

func (b *bencher) idleRun(ctx context.Context, ic idleConfig) (run IdleRun, err error) {
	ns := b.namespace()
	keys := protocol.NewKeys(ns)
	defer func() {
		if cerr := b.cleanup(ns); err == nil {
			err = cerr
		}
	}()
	queues := make([]string, ic.queues)
	for i := range queues {
		queues[i] = "idle"
		if ic.queues > 1 {
			queues[i] += strconv.Itoa(i)
		}
	}
	// Known queues, as a producer leaves them: the worker's check for
	// unknown queue names stays quiet.
	if _, err := b.mon.do("SADD", append([]string{keys.Queues()}, queues...)...); err != nil {
		return run, err
	}
	children, err := b.startChildren(childSpec{procs: 1, slots: ic.slots, queues: strings.Join(queues, ","), namespace: ns})
	if err != nil {
		return run, err
	}
	defer func() {
		if children != nil {
			stopChildren(children)
		}
	}()
	if err := b.waitRegistered(ctx, keys, ic.slots, children); err != nil {
		return run, err
	}
	if err := sleep(ctx, b.cfg.Settle); err != nil {
		return run, err
	}
	a, err := b.mon.snapshot("")
	if err != nil {
		return run, err
	}
	if err := sleep(ctx, b.cfg.Idle); err != nil {
		return run, err
	}
	z, err := b.mon.snapshot("")
	if err != nil {
		return run, err
	}
	if err := exited(children); err != nil {
		return run, err
	}
	usages, err := stopChildren(children)
	children = nil
	if err != nil {
		return run, err
	}
	d := diff(a, z)
	cmds, scripts := d.commands()
	run = IdleRun{
		IdleMetrics: IdleMetrics{
			Commands:  float64(cmds) / d.seconds,
			Scripts:   float64(scripts) / d.seconds,
			PeakRSSMB: float64(usages[0].peakRSS) / (1 << 20),
		},
		PerCommand: map[string]float64{},
	}
	if d.hasReads {
		run.RoundTrips = float64(d.reads) / d.seconds
	}
	for name, st := range d.cmds {
		run.PerCommand[name] = float64(st.Calls) / d.seconds
	}
	return run, nil
}
