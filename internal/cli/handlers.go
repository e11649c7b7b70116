package cli

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/worker"
)

// handlerFlags configure handlers that are not Go code: commands and HTTP
// endpoints. work and the fork-mode child (run-job) share them.
func handlerFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringSliceFlag{Name: "exec", Usage: "'Class=command args...' runs command once per job of Class ('*=command' for any class); repeatable"},
		&ucli.StringSliceFlag{Name: "http", Usage: "'Class=URL' POSTs each job of Class to URL ('*=URL' for any class; {sourceId} in the URL is replaced); repeatable"},
		&ucli.StringFlag{Name: "http-token", Usage: "bearer token sent to --http endpoints", EnvVars: []string{"RESQUE_HTTP_TOKEN"}},
		&ucli.StringFlag{Name: "http-connect-timeout", Usage: "connect timeout of --http endpoints", Value: "5", EnvVars: []string{"RESQUE_HTTP_CONNECT_TIMEOUT"}},
		&ucli.StringFlag{Name: "http-timeout", Usage: "total timeout of one --http request", Value: "30", EnvVars: []string{"RESQUE_HTTP_TIMEOUT"}},
	}
}

// addHandlers registers the --exec and --http handlers.
func addHandlers(c *ucli.Context, reg *worker.Registry) error {
	connect, err := parseSeconds("http-connect-timeout", c.String("http-connect-timeout"))
	if err != nil {
		return err
	}
	total, err := parseSeconds("http-timeout", c.String("http-timeout"))
	if err != nil {
		return err
	}
	add := func(flag string, spec string, make func(target string) worker.HandlerFunc) error {
		class, target, ok := strings.Cut(spec, "=")
		class, target = strings.TrimSpace(class), strings.TrimSpace(target)
		if !ok || class == "" || target == "" {
			return usagef("--%s %q: want 'Class=...' or '*=...'", flag, spec)
		}
		if class == "*" {
			reg.SetFallback(make(target))
		} else {
			reg.Register(class, make(target))
		}
		return nil
	}
	for _, spec := range c.StringSlice("exec") {
		if err := add("exec", spec, func(cmd string) worker.HandlerFunc { return worker.ExecHandler(cmd, worker.ExecOptions{}) }); err != nil {
			return err
		}
	}
	for _, spec := range c.StringSlice("http") {
		_, target, _ := strings.Cut(spec, "=")
		if t := strings.TrimSpace(target); t != "" && !strings.HasPrefix(t, "http://") && !strings.HasPrefix(t, "https://") {
			return usagef("--http %q: the URL must start with http:// or https://", spec)
		}
		opt := worker.HTTPOptions{Token: c.String("http-token"), ConnectTimeout: connect, Timeout: total}
		if err := add("http", spec, func(url string) worker.HandlerFunc { return worker.HTTPHandler(url, opt) }); err != nil {
			return err
		}
	}
	return nil
}

// forkConfig re-executes this binary in run-job mode with the same handler
// flags (the token travels in the environment, not on the command line).
func forkConfig(c *ucli.Context) (*worker.ForkConfig, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("fork: cannot find this binary: %w", err)
	}
	argv := []string{exe, "run-job"}
	for _, name := range []string{"exec", "http"} {
		for _, v := range c.StringSlice(name) {
			argv = append(argv, "--"+name, v)
		}
	}
	argv = append(argv, "--http-connect-timeout", c.String("http-connect-timeout"), "--http-timeout", c.String("http-timeout"))
	var env []string
	if tok := c.String("http-token"); tok != "" {
		env = append(env, "RESQUE_HTTP_TOKEN="+tok)
	}
	return &worker.ForkConfig{Command: argv, Env: env}, nil
}

// runJobCommand is the child side of fork mode.
func runJobCommand(reg *worker.Registry) *ucli.Command {
	return &ucli.Command{
		Name:   "run-job",
		Hidden: true,
		Usage:  "run one job read from stdin and report on fd 3 (used by work --fork)",
		Flags:  handlerFlags(),
		Action: func(c *ucli.Context) error {
			if err := addHandlers(c, reg); err != nil {
				return err
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
