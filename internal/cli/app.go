// Package cli is resque-go's command line: flags (each with the environment
// variable Resque users already know), signal wiring and exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/worker"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Version is set at build time with -ldflags.
var Version = "dev"

// usageError marks bad input: a flag, a value, a config file (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// Run runs the CLI with args (os.Args form) and returns the exit code.
// Handlers registered in reg are available to every command that runs jobs.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, reg *worker.Registry) int {
	if reg == nil {
		reg = worker.NewRegistry()
	}
	app := newApp(stdout, stderr, reg)
	err := app.RunContext(ctx, args)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(stderr, "resque-go: "+err.Error())
	var ue usageError
	if errors.As(err, &ue) || isFlagError(err) {
		return ExitUsage
	}
	return ExitFailure
}

// isFlagError recognises urfave/cli's own parse errors.
func isFlagError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"flag provided but not defined", "invalid value", "Required flag", "Required flags", "flag needs an argument", "No help topic"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func newApp(stdout, stderr io.Writer, reg *worker.Registry) *ucli.App {
	return &ucli.App{
		Name:    "resque-go",
		Usage:   "a Resque-compatible worker runtime",
		Version: Version,
		Description: "Runs jobs queued by Ruby Resque, php-resque, node-resque and resque-v3 producers.\n" +
			"Every flag can also be set from the environment variable shown next to it.",
		Writer:    stdout,
		ErrWriter: stderr,
		OnUsageError: func(c *ucli.Context, err error, isSub bool) error {
			return usageError{err}
		},
		ExitErrHandler: func(*ucli.Context, error) {}, // Run maps errors to exit codes
		Commands: []*ucli.Command{
			workCommand(reg),
			runJobCommand(reg),
			enqueueCommand(),
			statsCommand(),
			failedCommand(),
			demoCommand(),
			poolCommand(),
		},
	}
}

// Flags shared by every command that talks to Redis.
func redisFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "redis", Usage: "Redis URL (redis://[:password@]host:port/db) or host:port", Value: "redis://127.0.0.1:6379", EnvVars: []string{"REDIS_URL", "REDIS_BACKEND"}},
		&ucli.StringFlag{Name: "namespace", Usage: "key namespace (prefix)", Value: "resque", EnvVars: []string{"RESQUE_NAMESPACE", "PREFIX"}},
		&ucli.StringFlag{Name: "log-level", Usage: "debug, info, warn or error", Value: "info", EnvVars: []string{"LOG_LEVEL"}},
		&ucli.StringFlag{Name: "log-format", Usage: "console or json", Value: "console", EnvVars: []string{"LOG_FORMAT"}},
	}
}

func newClient(c *ucli.Context) (*rdb.Client, error) {
	client, err := rdb.New(rdb.Options{URL: c.String("redis"), Namespace: c.String("namespace")})
	if err != nil {
		return nil, usageError{err}
	}
	return client, nil
}

func newLogger(c *ucli.Context) (zerolog.Logger, error) {
	levelName := c.String("log-level")
	if os.Getenv("VVERBOSE") != "" {
		levelName = "debug"
	}
	level, err := zerolog.ParseLevel(strings.ToLower(levelName))
	if err != nil || levelName == "" {
		return zerolog.Logger{}, usagef("--log-level %q: want debug, info, warn or error", levelName)
	}
	var out io.Writer = c.App.ErrWriter
	switch c.String("log-format") {
	case "json":
	case "console":
		out = zerolog.ConsoleWriter{Out: c.App.ErrWriter, TimeFormat: time.RFC3339}
	default:
		return zerolog.Logger{}, usagef("--log-format %q: want console or json", c.String("log-format"))
	}
	return zerolog.New(out).Level(level).With().Timestamp().Logger(), nil
}

// parseSeconds reads Ruby-style seconds ("5", "0.5") or a Go duration ("250ms").
func parseSeconds(flag, v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f < 0 {
			return 0, usagef("--%s %q: must not be negative", flag, v)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, usagef("--%s %q: want seconds (5, 0.5) or a duration (250ms, 2m)", flag, v)
	}
	return d, nil
}
