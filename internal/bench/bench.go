// Package bench measures what a job costs Redis: a Resque
// deployment has one Redis, which runs commands and scripts on one core, so
// jobs/s is capped at 1 / (Redis CPU per job). It drains prefilled no-op
// jobs with a minimal Resque loop (the reference) and with resque-go worker
// processes, and measures idle cost and pickup latency. The CLI's
// `resque-go bench` runs it; library code here never prints: Run returns a
// Report, and WriteText/WriteJSON render it to a writer the caller gives.
package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redisproc"
	"github.com/resque-go/resque-go/internal/service"
)

// NoopClass is the class of every bench job; NoopPayload its payload.
const (
	NoopClass   = "Noop"
	NoopPayload = `{"class":"Noop","args":[1]}`
)

// Scenario names, as --scenarios takes them.
const (
	ScenarioLoop    = "loop"  // the reference loop, 16 connections
	ScenarioSlots1  = "1x1"   // one worker process, 1 slot
	ScenarioSlots16 = "1x16"  // one worker process, 16 slots
	ScenarioSlots64 = "1x64"  // one worker process, 64 slots
	ScenarioProcs   = "procs" // Config.Procs worker processes x 16 slots
	ScenarioExec    = "exec"  // one worker process x 16 slots, each job a command (Config.ExecCommand)
	ScenarioFork    = "fork"  // the same with --fork: each job's command run by a child process
	// ScenarioStatic drains a mass queue's static pool of one source with one
	// worker process x 16 slots (`work --mass static:POOL`),
	// ScenarioStaticProcs with Config.Procs such processes, and
	// ScenarioStaticSources one of Config.Sources sources (the jobs dealt
	// round-robin): what a static pool costs against the same workers on a
	// plain queue (1x16, procs), and what many sources cost against one.
	ScenarioStatic        = "static"
	ScenarioStaticProcs   = "static-procs"
	ScenarioStaticSources = "static-sources"
	// ScenarioLimits is 1x16 with one concurrency cap and one rate limit
	// on the jobs' class, both wide enough never to hold a job back: what
	// counting them costs (docs/limits.md).
	ScenarioLimits  = "1x16-limits"
	ScenarioIdle    = "idle"    // one idle worker process per configuration
	ScenarioLatency = "latency" // pickup latency of an idle in-process worker
)

// DefaultScenarios run when Config.Scenarios is empty; "all" adds exec and
// fork.
var DefaultScenarios = []string{ScenarioLoop, ScenarioSlots1, ScenarioSlots16, ScenarioSlots64, ScenarioProcs, ScenarioIdle, ScenarioLatency}

// AllScenarios is every scenario, in the order they run.
var AllScenarios = []string{ScenarioLoop, ScenarioSlots1, ScenarioSlots16, ScenarioSlots64, ScenarioProcs, ScenarioStatic, ScenarioStaticProcs,
	ScenarioStaticSources, ScenarioLimits, ScenarioExec, ScenarioFork, ScenarioIdle, ScenarioLatency}

// StaticSources is the default number of sources of ScenarioStaticSources.
const StaticSources = 10000

// staticPool is the static pool the static scenarios drain.
const staticPool = "bench"

// ErrUsage is wrapped by errors about the configuration.
var ErrUsage = errors.New("bench: bad configuration")

// ErrNoRedisServer is returned when no --redis URL is given and
// redis-server is not on PATH.
var ErrNoRedisServer = redisproc.ErrNotInstalled

// loopConns is the reference loop's connection count, and slotsPerProc the
// slots of each process of the procs and exec scenarios.
const (
	loopConns    = 16
	slotsPerProc = 16
)

// Config configures Run. Zero values mean the documented defaults.
type Config struct {
	// RedisURL is the server to measure; "" starts a redis-server on a free
	// port with persistence off and stops it at the end. A given server
	// should serve nothing else: its statistics are server-wide, so other
	// clients' commands would count as the workers'.
	RedisURL string
	// WorkerCommand starts one resque-go worker process that has a handler
	// for NoopClass (the CLI's hidden `resque-go bench worker`: `work` with
	// a no-op handler). Run appends --namespace, --queues, --concurrency,
	// --log-level, --log-format and --exec; REDIS_URL is set in its
	// environment, after WorkerEnv. Required by the scenarios that start
	// worker processes.
	WorkerCommand []string
	WorkerEnv     []string
	// Scenarios to run (see the Scenario constants; "all" for every one);
	// default DefaultScenarios.
	Scenarios []string
	// Jobs per throughput run; default 200000. Runs of each scenario;
	// default 3.
	Jobs int
	Runs int
	// Procs is the process count of the procs scenario; default 4.
	Procs int
	// Sources is the number of sources of the static-sources scenario;
	// default StaticSources. With Jobs equal to it, each source has one
	// job (more sources give a longer window for one job a source).
	Sources int
	// ExecJobs is the job count of the exec and fork scenarios (default
	// 2000), and ExecCommand the command each job runs (default "true").
	ExecJobs    int
	ExecCommand string
	// Idle is how long the idle scenario watches each idle worker; default
	// 30 s: a multiple of every period an idle worker has (5 s heartbeats,
	// blocking waits renewed every 15 s, a claim after 30 s without a
	// wake-up), so that each is counted in proportion. Settle is how long workers get after registering before a
	// measurement starts (their first heartbeat, publish and mover poll
	// happen at start); default 1 s.
	Idle   time.Duration
	Settle time.Duration
	// LatencyJobs are enqueued one at a time at LatencyRate per second to an
	// idle worker with LatencySlots slots; defaults 2000, 200, 16.
	LatencyJobs  int
	LatencyRate  float64
	LatencySlots int
	// Version is resque-go's version, for the report.
	Version string
	// Logger reports progress (info) and the in-process worker's warnings;
	// default a disabled logger.
	Logger *zerolog.Logger
}

func (c *Config) setDefaults() error {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Jobs, 200000)
	def(&c.Runs, 3)
	def(&c.Procs, 4)
	def(&c.Sources, StaticSources)
	def(&c.ExecJobs, 2000)
	def(&c.LatencyJobs, 2000)
	def(&c.LatencySlots, 16)
	if c.LatencyRate == 0 {
		c.LatencyRate = 200
	}
	if c.ExecCommand == "" {
		c.ExecCommand = "true"
	}
	if c.Idle == 0 {
		c.Idle = 30 * time.Second
	}
	if c.Settle == 0 {
		c.Settle = time.Second
	}
	c.Logger = service.Logger(c.Logger)
	for name, v := range map[string]int{"jobs": c.Jobs, "runs": c.Runs, "procs": c.Procs, "exec-jobs": c.ExecJobs,
		"latency-jobs": c.LatencyJobs, "latency-slots": c.LatencySlots} {
		if v < 1 {
			return fmt.Errorf("%w: --%s %d: want at least 1", ErrUsage, name, v)
		}
	}
	if c.LatencyRate < 0 || c.Idle < 0 || c.Settle < 0 {
		return fmt.Errorf("%w: --latency-rate, --idle and --settle must not be negative", ErrUsage)
	}
	scenarios, err := ParseScenarios(c.Scenarios)
	if err != nil {
		return err
	}
	c.Scenarios = scenarios
	if len(c.WorkerCommand) == 0 && slices.ContainsFunc(c.Scenarios, needsProcesses) {
		return fmt.Errorf("%w: Config.WorkerCommand is required by scenarios that start worker processes", ErrUsage)
	}
	return nil
}

func needsProcesses(s string) bool { return s != ScenarioLoop && s != ScenarioLatency }

// ParseScenarios checks names (comma-separated lists are split) and
// returns them in AllScenarios order; none means DefaultScenarios, "all"
// every scenario.
func ParseScenarios(names []string) ([]string, error) {
	var want []string
	for _, n := range names {
		for _, s := range strings.Split(n, ",") {
			if s = strings.TrimSpace(strings.ToLower(s)); s != "" {
				want = append(want, s)
			}
		}
	}
	if len(want) == 0 {
		return slices.Clone(DefaultScenarios), nil
	}
	var out []string
	for _, s := range want {
		if s == "all" {
			return slices.Clone(AllScenarios), nil
		}
		if !slices.Contains(AllScenarios, s) {
			return nil, fmt.Errorf("%w: unknown scenario %q (want %s or all)", ErrUsage, s, strings.Join(AllScenarios, ", "))
		}
	}
	for _, s := range AllScenarios {
		if slices.Contains(want, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// bencher is one Run.
type bencher struct {
	cfg    Config
	log    zerolog.Logger
	url    string
	mon    *monitor
	nsBase string
	seq    int
}

// Run runs the configured scenarios and returns the report. It starts its
// own redis-server unless cfg.RedisURL is set, and stops it at the end.
// Errors are ErrUsage (the configuration), ErrNoRedisServer, or a runtime
// failure prefixed "bench: ".
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	b := &bencher{cfg: cfg, log: *cfg.Logger, url: cfg.RedisURL}
	if b.url == "" {
		srv, err := redisproc.Start(0)
		if errors.Is(err, redisproc.ErrNotInstalled) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		defer srv.Stop()
		b.url = srv.URL()
		b.log.Info().Str("addr", srv.Addr()).Msg("redis-server started")
	}
	rep, err := b.run(ctx, cfg.RedisURL == "")
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return rep, nil
}

func (b *bencher) run(ctx context.Context, started bool) (*Report, error) {
	cfg := b.cfg
	rep := &Report{Settings: settingsOf(cfg), Definitions: definitions(cfg)}
	mon, err := newMonitor(ctx, b.url)
	if err != nil {
		return nil, err
	}
	defer mon.close()
	b.mon = mon
	if rep.Machine, err = b.machine(started); err != nil {
		return nil, err
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	b.nsBase = "resque-go-bench-" + hex.EncodeToString(suffix[:])

	// the throughput scenarios first, in rounds (see throughput), then
	// the idle and latency ones
	var thr []scenario
	for _, name := range cfg.Scenarios {
		if name != ScenarioIdle && name != ScenarioLatency {
			thr = append(thr, b.scenario(name))
		}
	}
	if len(thr) > 0 {
		res, err := b.throughput(ctx, thr)
		if err != nil {
			return nil, err
		}
		rep.Throughput = res
	}
	for _, name := range cfg.Scenarios {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		switch name {
		case ScenarioIdle:
			for _, ic := range idleConfigs {
				res, err := b.idle(ctx, ic)
				if err != nil {
					return nil, err
				}
				rep.Idle = append(rep.Idle, res)
			}
		case ScenarioLatency:
			res, err := b.latency(ctx)
			if err != nil {
				return nil, err
			}
			rep.Latency = &res
		}
	}
	rep.compareToLoop()
	rep.Checks = rep.checks()
	return rep, nil
}

// scenario describes one throughput scenario.
type scenario struct {
	name        string
	description string
	procs       int // worker processes; 0 for the reference loop
	slots       int // per process (connections for the loop)
	jobs        int
	exec        string
	fork        bool
	sources     int // a static pool of this many sources instead of a queue; 0: the queue
	flags       []string
}

// limitsFlags are ScenarioLimits' cap and rate: 1,000 running and a
// million starts a second, which no run reaches.
var limitsFlags = []string{"--limit", NoopClass + "=1000", "--rate", NoopClass + "=1000000/1s"}

func (b *bencher) scenario(name string) scenario {
	cfg := b.cfg
	switch name {
	case ScenarioLoop:
		return scenario{name: name, description: fmt.Sprintf("reference Resque loop, %d connections, 1 pipeline per job", loopConns), slots: loopConns, jobs: cfg.Jobs}
	case ScenarioSlots1:
		return scenario{name: name, description: "resque-go, 1 process x 1 slot", procs: 1, slots: 1, jobs: cfg.Jobs}
	case ScenarioSlots16:
		return scenario{name: name, description: "resque-go, 1 process x 16 slots", procs: 1, slots: 16, jobs: cfg.Jobs}
	case ScenarioSlots64:
		return scenario{name: name, description: "resque-go, 1 process x 64 slots", procs: 1, slots: 64, jobs: cfg.Jobs}
	case ScenarioProcs:
		return scenario{name: fmt.Sprintf("%dx%d", cfg.Procs, slotsPerProc), description: fmt.Sprintf("resque-go, %d processes x %d slots", cfg.Procs, slotsPerProc),
			procs: cfg.Procs, slots: slotsPerProc, jobs: cfg.Jobs}
	case ScenarioStatic:
		return scenario{name: name, description: fmt.Sprintf("resque-go, 1 process x %d slots, a static pool of 1 source", slotsPerProc),
			procs: 1, slots: slotsPerProc, jobs: cfg.Jobs, sources: 1}
	case ScenarioStaticProcs:
		return scenario{name: fmt.Sprintf("%dx%d-static", cfg.Procs, slotsPerProc),
			description: fmt.Sprintf("resque-go, %d processes x %d slots, a static pool of 1 source", cfg.Procs, slotsPerProc),
			procs:       cfg.Procs, slots: slotsPerProc, jobs: cfg.Jobs, sources: 1}
	case ScenarioStaticSources:
		return scenario{name: name, description: fmt.Sprintf("resque-go, 1 process x %d slots, a static pool of %d sources", slotsPerProc, cfg.Sources),
			procs: 1, slots: slotsPerProc, jobs: cfg.Jobs, sources: cfg.Sources}
	case ScenarioLimits:
		return scenario{name: name, description: fmt.Sprintf("resque-go, 1 process x %d slots, %s", slotsPerProc, strings.Join(limitsFlags, " ")),
			procs: 1, slots: slotsPerProc, jobs: cfg.Jobs, flags: limitsFlags}
	case ScenarioExec:
		return scenario{name: name, description: fmt.Sprintf("resque-go, 1 process x %d slots, --exec '%s=%s'", slotsPerProc, NoopClass, cfg.ExecCommand),
			procs: 1, slots: slotsPerProc, jobs: cfg.ExecJobs, exec: NoopClass + "=" + cfg.ExecCommand}
	case ScenarioFork:
		return scenario{name: name, description: fmt.Sprintf("resque-go, 1 process x %d slots, --fork --exec '%s=%s'", slotsPerProc, NoopClass, cfg.ExecCommand),
			procs: 1, slots: slotsPerProc, jobs: cfg.ExecJobs, exec: NoopClass + "=" + cfg.ExecCommand, fork: true}
	}
	panic("bench: unknown scenario " + name) // ParseScenarios let it through
}

// namespace returns a fresh key namespace for one run.
func (b *bencher) namespace() string {
	b.seq++
	return b.nsBase + "-" + strconv.Itoa(b.seq)
}

// cleanup deletes every key of a run's namespace.
func (b *bencher) cleanup(ns string) error {
	cursor := "0"
	for {
		v, err := b.mon.do("SCAN", cursor, "MATCH", ns+":*", "COUNT", "1000")
		if err != nil {
			return fmt.Errorf("clean up %s: %w", ns, err)
		}
		parts, ok := v.([]any)
		if !ok || len(parts) != 2 {
			return fmt.Errorf("clean up %s: unexpected SCAN reply", ns)
		}
		cursor, _ = parts[0].(string)
		keys, _ := parts[1].([]any)
		if len(keys) > 0 {
			args := make([]string, 0, len(keys))
			for _, k := range keys {
				if s, ok := k.(string); ok {
					args = append(args, s)
				}
			}
			if _, err := b.mon.do("UNLINK", args...); err != nil {
				return fmt.Errorf("clean up %s: %w", ns, err)
			}
		}
		if cursor == "0" {
			return nil
		}
	}
}

// prefill pushes n payloads onto list key, 1000 per RPUSH, pipelined.
func (b *bencher) prefill(key string, n int) error {
	c := b.mon.c
	const batch = 1000
	sent := 0
	for sent < n {
		// A pipeline of up to 50 RPUSHes, then its replies.
		cmds := 0
		for ; cmds < 50 && sent < n; cmds++ {
			k := min(batch, n-sent)
			args := make([]string, 0, 2+k)
			args = append(args, "RPUSH", key)
			for range k {
				args = append(args, NoopPayload)
			}
			c.send(args...)
			b.mon.own["rpush"]++
			sent += k
		}
		b.mon.reads++ // at least; only counts between snapshots matter, and none is taken here
		if err := c.flush(); err != nil {
			return fmt.Errorf("prefill: %w", err)
		}
		for range cmds {
			if _, err := c.receive(); err != nil {
				return fmt.Errorf("prefill: %w", err)
			}
		}
	}
	return nil
}

// waitRegistered waits until the workers set of keys holds n ids.
func (b *bencher) waitRegistered(ctx context.Context, keys protocol.Keys, n int, children []*child) error {
	deadline := time.Now().Add(startTimeout)
	for {
		got, err := integer(b.mon.do("SCARD", keys.Workers()))
		if err != nil {
			return fmt.Errorf("wait for workers: %w", err)
		}
		if got >= int64(n) {
			return nil
		}
		if err := exited(children); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d worker slots registered after %s", got, n, startTimeout)
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
}

// startTimeout bounds how long workers take to register; stallTimeout how
// long a drain may go without a job finishing.
const (
	startTimeout = 60 * time.Second
	stallTimeout = 60 * time.Second
)

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
