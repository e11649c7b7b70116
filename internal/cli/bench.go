package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/bench"
	"github.com/resque-go/resque-go/worker"
)

// benchCommand measures what a job costs Redis. Its flags have no
// environment variables on purpose: REDIS_URL set for the workers must not
// point a benchmark at a production server.
func benchCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "bench",
		Usage: "measure Redis CPU, commands and round trips per job, idle cost and pickup latency",
		Description: "Starts its own redis-server (persistence off) on a free port unless --redis is given, fills a\n" +
			"queue with no-op jobs and drains it: with a minimal Resque loop (the reference: LPOP, SET\n" +
			"worker, 2 INCR, DEL, one pipeline per job, 16 connections) and with resque-go worker processes\n" +
			"(1x1, 1x16, 1x64 and --procs x 16 slots). It also watches idle workers and measures pickup\n" +
			"latency, and prints each figure's median over --runs (min-max below). The throughput\n" +
			"scenarios run in rounds, each once a round, so a machine that drifts moves them alike.\n" +
			"Scenarios: " + strings.Join(bench.AllScenarios, ", ") + " (exec, the per-job process\n" +
			"overhead of --exec handlers, runs only with --exec or --scenarios exec or all; fork, the same\n" +
			"with --fork, only with --scenarios fork or all; static, static-procs and static-sources, the\n" +
			"same workers on a mass queue's static pool of 1 source (1x16, --procs x 16) and of --sources\n" +
			"sources (1x16, 10,000 by default), only when named or with all).\n\n" +
			"A --redis server must serve nothing else while the bench runs: Redis's statistics are\n" +
			"server-wide. redis-server must be on PATH otherwise.",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "redis", Usage: "measure this Redis (URL) instead of starting redis-server; it must serve nothing else meanwhile"},
			&ucli.IntFlag{Name: "jobs", Usage: "jobs per throughput run", Value: 200000},
			&ucli.IntFlag{Name: "runs", Usage: "runs of each scenario (the median is printed, min-max below)", Value: 3},
			&ucli.StringFlag{Name: "scenarios", Usage: "comma-separated subset: " + strings.Join(bench.AllScenarios, ",") + " or all", Value: strings.Join(bench.DefaultScenarios, ",")},
			&ucli.IntFlag{Name: "procs", Usage: "worker processes (16 slots each) of the procs scenario", Value: 4},
			&ucli.IntFlag{Name: "sources", Usage: "sources of the static-sources scenario (the jobs dealt round-robin: as many jobs as sources gives one job a source)", Value: bench.StaticSources},
			&ucli.StringFlag{Name: "exec", Usage: "also run the exec scenario: each job runs this command ('true', or 'Noop=true' as work takes it)"},
			&ucli.IntFlag{Name: "exec-jobs", Usage: "jobs per run of the exec and fork scenarios", Value: 2000},
			&ucli.StringFlag{Name: "idle", Usage: "how long each idle worker is watched (seconds or a duration); shorter than 30s misses periodic work", Value: "30s"},
			&ucli.StringFlag{Name: "settle", Usage: "how long workers get after registering before a measurement starts", Value: "1s"},
			&ucli.IntFlag{Name: "latency-jobs", Usage: "jobs of the pickup latency scenario", Value: 2000},
			&ucli.Float64Flag{Name: "latency-rate", Usage: "jobs per second enqueued in the pickup latency scenario", Value: 200},
			&ucli.IntFlag{Name: "latency-slots", Usage: "slots of the idle worker in the pickup latency scenario", Value: 16},
			&ucli.BoolFlag{Name: "events", Usage: "run the workers with --events (the events stream on), to measure what it costs a job"},
			&ucli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
			&ucli.BoolFlag{Name: "quiet", Usage: "no progress lines on stderr"},
		},
		Action:          runBench,
		Subcommands:     []*ucli.Command{benchWorkerCommand()},
		HideHelpCommand: true,
	}
}

// benchWorkerCommand is `work` with a no-op Go handler for the bench's jobs:
// the worker processes the bench starts (hidden from help).
func benchWorkerCommand() *ucli.Command {
	reg := worker.NewRegistry()
	reg.Register(bench.NoopClass, func(context.Context, *worker.Job) error { return nil })
	cmd := workCommand(reg)
	cmd.Name = "worker"
	cmd.Hidden = true
	cmd.Usage = "work with a no-op handler for " + bench.NoopClass + " (started by bench)"
	return cmd
}

func runBench(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("bench takes no arguments (got %q)", c.Args().First())
	}
	cfg, err := benchConfig(c)
	if err != nil {
		return err
	}
	level := zerolog.InfoLevel
	if c.Bool("quiet") {
		level = zerolog.WarnLevel
	}
	log, err := buildLogger(c.App.ErrWriter, level, "console")
	if err != nil {
		return err
	}
	cfg.Logger = &log
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	rep, err := bench.Run(ctx, cfg)
	switch {
	case ctx.Err() != nil && c.Context.Err() == nil:
		log.Warn().Msg("bench interrupted")
		return nil
	case errors.Is(err, bench.ErrUsage):
		return usageError{err}
	case errors.Is(err, bench.ErrNoRedisServer):
		return fmt.Errorf("bench: %w; or give --redis URL", err)
	case err != nil:
		return err // "bench: ..."
	}
	if c.Bool("json") {
		return rep.WriteJSON(c.App.Writer)
	}
	return rep.WriteText(c.App.Writer)
}

func benchConfig(c *ucli.Context) (bench.Config, error) {
	idle, err := parseSeconds("idle", c.String("idle"))
	if err != nil {
		return bench.Config{}, err
	}
	settle, err := parseSeconds("settle", c.String("settle"))
	if err != nil {
		return bench.Config{}, err
	}
	exe, err := os.Executable()
	if err != nil {
		return bench.Config{}, fmt.Errorf("bench: cannot find this binary to start workers: %w", err)
	}
	scenarios, err := bench.ParseScenarios([]string{c.String("scenarios")})
	if err != nil {
		return bench.Config{}, usageError{err}
	}
	execCmd := strings.TrimSpace(c.String("exec"))
	if class, cmd, ok := strings.Cut(execCmd, "="); ok {
		if strings.TrimSpace(class) != bench.NoopClass {
			return bench.Config{}, usagef("--exec %q: the bench's jobs are of class %s (give 'true' or '%s=true')", execCmd, bench.NoopClass, bench.NoopClass)
		}
		execCmd = strings.TrimSpace(cmd)
	}
	if c.IsSet("exec") {
		if execCmd == "" {
			return bench.Config{}, usagef("--exec %q: want a command such as true", c.String("exec"))
		}
		if scenarios, err = bench.ParseScenarios(append(scenarios, bench.ScenarioExec)); err != nil {
			return bench.Config{}, usageError{err}
		}
	}
	for _, name := range []string{"jobs", "runs", "procs", "sources", "exec-jobs", "latency-jobs", "latency-slots"} {
		if c.Int(name) < 1 {
			return bench.Config{}, usagef("--%s %d: want at least 1", name, c.Int(name))
		}
	}
	if r := c.Float64("latency-rate"); r <= 0 {
		return bench.Config{}, usagef("--latency-rate %g: want more than 0 jobs per second", r)
	}
	if idle <= 0 {
		return bench.Config{}, usagef("--idle %q: want more than 0", c.String("idle"))
	}
	var workerEnv []string
	if c.Bool("events") {
		workerEnv = append(workerEnv, "RESQUE_EVENTS=true")
	}
	return bench.Config{
		WorkerEnv:     workerEnv,
		RedisURL:      c.String("redis"),
		WorkerCommand: []string{exe, "bench", "worker"},
		Scenarios:     scenarios,
		Jobs:          c.Int("jobs"), Runs: c.Int("runs"), Procs: c.Int("procs"), Sources: c.Int("sources"),
		ExecJobs: c.Int("exec-jobs"), ExecCommand: execCmd,
		Idle: idle, Settle: settle,
		LatencyJobs: c.Int("latency-jobs"), LatencyRate: c.Float64("latency-rate"), LatencySlots: c.Int("latency-slots"),
		Version: strings.TrimPrefix(versionLine(), "resque-go "),
	}, nil
}
