package cli

import (
	"cmp"
	"encoding/json"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/node"
)

func schedulerCommand() *ucli.Command {
	flags := append(append(redisFlags(), recurringScheduleFlags()...),
		&ucli.BoolFlag{Name: "schedules", Usage: "fire recurring schedules (only while master, with resque-scheduler's master lock)", Value: true},
		&ucli.BoolFlag{Name: "plans", Usage: "fire resque-v3 plans (resque-go plan add)", Value: true},
		&ucli.BoolFlag{Name: "mover", Usage: "promote due delayed items (elected with the workers' movers)", Value: true},
		&ucli.BoolFlag{Name: "events", Usage: "the mover appends each promoted job's enqueued event to the events stream (docs/events.md)", EnvVars: []string{"RESQUE_EVENTS"}},
		&ucli.IntFlag{Name: "events-max-len", Value: 100000, Usage: "with --events: how many entries the stream keeps, about", EnvVars: []string{"RESQUE_EVENTS_MAX_LEN"}},
		&ucli.DurationFlag{Name: "events-max-age", Usage: "with --events: also drop entries older than this (24h); 0 keeps them by count only", EnvVars: []string{"RESQUE_EVENTS_MAX_AGE"}},
		&ucli.StringFlag{Name: "hostname", Usage: "host name in the scheduler's record and lock value (default: this machine's)", EnvVars: []string{"RESQUE_HOSTNAME"}},
		&ucli.StringFlag{Name: "metrics-addr", Usage: "serve Prometheus /metrics, /healthz and /readyz on this address (e.g. 127.0.0.1:9293; a bare port listens on 127.0.0.1 only); empty: off", EnvVars: []string{"RESQUE_METRICS_ADDR"}},
		metricsTokenFlag(),
		&ucli.IntFlag{Name: "supervisor-pid", Hidden: true, Usage: "stop when this process is no longer our parent; set by resque-go pool"},
		&ucli.IntFlag{Name: "scheduler-config-fd", Hidden: true, Usage: "read every setting, as node.SchedulerConfig JSON, from this file descriptor; set by resque-go pool"},
	)
	flags = append(flags, retentionFlags()...)
	return &ucli.Command{
		Name:  "scheduler",
		Usage: "promote delayed jobs, fire plans and recurring schedules",
		Description: "Promotes due items of the delayed queue (resque-scheduler's layout), fires resque-v3\n" +
			"plans (resque-go plan) and, while it holds resque-scheduler's master lock, the recurring\n" +
			"schedules of --schedule and of Redis (persistent_schedules). Any number may run, next to\n" +
			"Ruby's resque-scheduler: each delayed item and plan slot is taken once, one master fires\n" +
			"the schedules. `resque-go stats` shows every scheduler.\n\n" +
			"In the resque-v3 namespace it keeps resque-v3's scheduler_pid:<host> (its pid, removed at a clean\n" +
			"stop), so v3 tooling sees a scheduler on the host; HUP and USR1 (which the v3 init process\n" +
			"sends that pid) are then ignored.\n\n" +
			"Signals: QUIT, TERM and INT stop it (the current pass finishes).",
		Flags:  flags,
		Action: runScheduler,
	}
}

func runScheduler(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("scheduler takes no arguments (got %q)", c.Args().First())
	}
	var cfg node.SchedulerConfig
	if c.IsSet("scheduler-config-fd") {
		fd := c.Int("scheduler-config-fd")
		f := os.NewFile(uintptr(fd), "scheduler-config")
		if fd < 0 || f == nil {
			return usagef("--scheduler-config-fd %d: not a file descriptor", fd)
		}
		dec := json.NewDecoder(f)
		dec.DisallowUnknownFields()
		err := dec.Decode(&cfg)
		f.Close()
		if err != nil {
			return usagef("--scheduler-config-fd: %v", err)
		}
	} else {
		level, err := logLevel(c)
		if err != nil {
			return err
		}
		rc, err := recurringScheduleConfig(c) // checks the file and the lock settings
		if err != nil {
			return err
		}
		cfg = node.SchedulerConfig{Redis: redisConfig(c), Hostname: c.String("hostname"), Schedule: c.String("schedule"),
			Environment: c.String("environment"), Dynamic: c.Bool("dynamic-schedule"), LockPrefix: c.String("lock-prefix"),
			LockTimeout: rc.LockTimeout, ScheduleInterval: rc.Interval, NoSchedules: !c.Bool("schedules"),
			NoPlans: !c.Bool("plans"), NoMover: !c.Bool("mover"), MetricsAddr: c.String("metrics-addr"),
			MetricsToken: c.String("metrics-token"), Events: c.Bool("events"), EventsMaxLen: c.Int("events-max-len"),
			EventsMaxAge:  c.Duration("events-max-age"),
			SupervisorPID: c.Int("supervisor-pid"), LogLevel: level.String(), LogFormat: c.String("log-format")}
		if cfg.Retention, err = retentionFromFlags(c); err != nil {
			return err
		}
		if cfg.NoSchedules && cfg.NoPlans && cfg.NoMover && !cfg.Retention.On() {
			return usagef("--schedules=false --plans=false --mover=false leaves the scheduler nothing to do")
		}
	}
	level, _ := zerolog.ParseLevel(strings.ToLower(strings.TrimSpace(cmp.Or(cfg.LogLevel, "info"))))
	log, err := buildLogger(c.App.ErrWriter, level, cmp.Or(cfg.LogFormat, "console"))
	if err != nil {
		return err
	}
	s, err := node.NewScheduler(cfg, node.WithLogger(log))
	if err != nil {
		return nodeError(err)
	}
	signal.Ignore(syscall.SIGPIPE)
	if s.KeepsSchedulerPid() {
		// resque-v3's init process signals the pid in scheduler_pid:<host>:
		// HUP to reload, USR1 to reopen logs; neither stops us
		signal.Ignore(syscall.SIGHUP, syscall.SIGUSR1)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	if err := s.Start(c.Context); err != nil {
		return nodeError(err)
	}
	select {
	case <-s.Done():
	case sig := <-sigs:
		log.Info().Str("signal", sig.String()).Msg("signal received")
		s.Stop()
	}
	return nil
}
