package cli

import (
	"cmp"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

// handlerFlags configure handlers that are not Go code: commands and HTTP
// endpoints. work and the fork-mode child (run-job) share them.
func handlerFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringSliceFlag{Name: "exec", Usage: "'Class=command args...' runs command once per job of Class ('*=command' for any class); repeatable"},
		&ucli.StringSliceFlag{Name: "http", Usage: "'Class=URL' POSTs each job of Class to URL ('*=URL' for any class; {sourceId} in the URL is replaced); repeatable"},
		&ucli.StringFlag{Name: "http-token", Usage: "bearer token sent to --http endpoints", EnvVars: []string{"RESQUE_HTTP_TOKEN"}},
		&ucli.StringFlag{Name: "http-connect-timeout", Usage: "connect timeout of --http endpoints", Value: defaultHTTPConnectTimeout, EnvVars: []string{"RESQUE_HTTP_CONNECT_TIMEOUT"}},
		&ucli.StringFlag{Name: "http-timeout", Usage: "total timeout of one --http request", Value: defaultHTTPTimeout, EnvVars: []string{"RESQUE_HTTP_TIMEOUT"}},
	}
}

// Defaults of the HTTP handler timeouts, as work's flags show them.
const (
	defaultHTTPConnectTimeout = "5"
	defaultHTTPTimeout        = "30"
)

// handlerConfig is the part of a node.Config the handler flags set.
func handlerConfig(c *ucli.Context) (node.Config, error) {
	cfg := node.Config{Exec: c.StringSlice("exec"), HTTP: c.StringSlice("http"), HTTPToken: c.String("http-token")}
	var err error
	if cfg.HTTPConnectTimeout, err = parseSeconds("http-connect-timeout", c.String("http-connect-timeout")); err != nil {
		return cfg, err
	}
	cfg.HTTPTimeout, err = parseSeconds("http-timeout", c.String("http-timeout"))
	return cfg, err
}

// durationFlag writes d as a duration flag takes it ("" for 0).
func durationFlag(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

// forkConfig re-executes this binary in run-job mode with the handlers of
// cfg (the token travels in the environment, not on the command line).
func forkConfig(cfg node.Config) (*worker.ForkConfig, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("fork: cannot find this binary: %w", err)
	}
	argv := []string{exe, "run-job"}
	for _, v := range cfg.Exec {
		argv = append(argv, "--exec", v)
	}
	for _, v := range cfg.HTTP {
		argv = append(argv, "--http", v)
	}
	argv = append(argv, "--http-connect-timeout", cmp.Or(durationFlag(cfg.HTTPConnectTimeout), defaultHTTPConnectTimeout),
		"--http-timeout", cmp.Or(durationFlag(cfg.HTTPTimeout), defaultHTTPTimeout))
	var env []string
	if cfg.HTTPToken != "" {
		env = append(env, "RESQUE_HTTP_TOKEN="+cfg.HTTPToken)
	}
	return &worker.ForkConfig{Command: argv, Env: env, Prestart: true}, nil
}

// runJobCommand is the child side of fork mode.
func runJobCommand(reg *worker.Registry) *ucli.Command {
	return &ucli.Command{
		Name:   "run-job",
		Hidden: true,
		Usage:  "run one job read from stdin and report on fd 3 (used by work --fork)",
		Flags:  handlerFlags(),
		Action: func(c *ucli.Context) error {
			cfg, err := handlerConfig(c)
			if err != nil {
				return err
			}
			if err := cfg.AddHandlers(reg); err != nil {
				return nodeError(err)
			}
			result := os.NewFile(3, "result")
			if result == nil {
				return usagef("run-job: file descriptor 3 is not open (run by work --fork only)")
			}
			defer result.Close()
			ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if code := worker.RunChild(ctx, reg, os.Getenv("RESQUE_QUEUE"), os.Getenv("RESQUE_WORKER"), os.Stdin, result); code != 0 {
				return fmt.Errorf("run-job: could not report the result")
			}
			return nil
		},
	}
}
