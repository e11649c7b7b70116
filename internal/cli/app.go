// Package cli is resque-go's command line: flags (each with the environment
// variable Resque users already know), signal wiring and exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/proctitle"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/worksettings"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/unique"
	"github.com/resque-go/resque-go/worker"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
	// ExitDuplicate: enqueue --unique-id met a job with that id queued or
	// running (unique.ErrDuplicate); nothing was written.
	ExitDuplicate = 3
	// ExitRecycled (75): a work process reached its max_jobs, max_rss or
	// max_age and stopped cleanly for a fresh one (node.ExitRecycled).
	ExitRecycled = node.ExitRecycled
)

// usageError marks bad input: a flag, a value, a config file (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// hintedError is a usage error with a second line: where to read the usage.
type hintedError struct {
	usageError
	hint string
}

func (e hintedError) Unwrap() error { return e.usageError }

func usageHint(err error, hint string) error { return hintedError{usageError{err}, hint} }

// Run runs the CLI with args (os.Args form) and returns the exit code.
// Handlers registered in reg are available to every command that runs jobs.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, reg *worker.Registry) int {
	if reg == nil {
		reg = worker.NewRegistry()
	}
	// ps shows every user the command line for the process's whole life:
	// a password or token given there is masked at once (work and the pool
	// children show a title later; see package proctitle).
	if masked := maskArgs(args); !slices.Equal(masked, args) {
		proctitle.SetArgs(masked)
	}
	app := newApp(stdout, stderr, reg)
	// ps e and /proc/<pid>/environ show the environment to the same user
	// for the process's whole life: secrets in it are masked there too.
	proctitle.MaskEnv(envMasker(app.Commands))
	return runApp(ctx, app, args)
}

// runApp runs app, prints its error as one line (plus a hint for usage
// errors) and returns the exit code. Flags may come after positional
// arguments (flagsFirst).
func runApp(ctx context.Context, app *ucli.App, args []string) int {
	err := app.RunContext(ctx, flagsFirst(app, args))
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(app.ErrWriter, "resque-go: "+errorLine(err))
	var h hintedError
	if errors.As(err, &h) {
		fmt.Fprintln(app.ErrWriter, h.hint)
	}
	return exitCode(err)
}

// exitCode maps an error to 2 (usage or configuration) or 1 (runtime). Every
// parse error of urfave/cli comes through OnUsageError as a usageError; its
// help command returns an ExitCoder for an unknown topic.
func exitCode(err error) int {
	var ue usageError
	var ec ucli.ExitCoder
	if errors.As(err, &ue) || errors.As(err, &ec) || errors.Is(err, rdb.ErrBadURL) {
		return ExitUsage
	}
	if errors.Is(err, unique.ErrDuplicate) {
		return ExitDuplicate
	}
	if errors.As(err, new(recycledError)) {
		return ExitRecycled
	}
	return ExitFailure
}

// urlInText finds Redis URLs in messages.
var urlInText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`rediss?(\+sentinel)?://[^\s"']*`) })

// internalPrefix finds the prefixes that name resque-go's internal
// packages in error messages ("protocol: args are not valid JSON"): words a
// user of the command line has no use for.
var internalPrefix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|: )(?:(?:protocol|rdb|redisproc|recovery|runtime|plan: invalid plan|plan): )+`)
})

// errorLine is the one line printed for err: a connection failure is said
// without the call chain that met it, Redis URLs never show a password,
// and no internal package is named.
func errorLine(err error) string {
	msg := err.Error()
	var ce *rdb.ConnError
	if errors.As(err, &ce) {
		msg = ce.Error()
	}
	msg = internalPrefix().ReplaceAllString(msg, "$1")
	msg = urlInText().ReplaceAllStringFunc(msg, rdb.RedactURL)
	return strings.Join(strings.Fields(msg), " ")
}

func newApp(stdout, stderr io.Writer, reg *worker.Registry) *ucli.App {
	groups := []helpGroup{
		{"Run", []*ucli.Command{demoCommand(), workCommand(reg), poolCommand(), schedulerCommand(), webCommand(), runJobCommand(reg)}},
		{"Enqueue & inspect", []*ucli.Command{enqueueCommand(), statsCommand(), queueCommand(), delayedCommand(), uniqueCommand(), groupCommand(), jobCommand(), processCommand(), eventsCommand()}},
		{"Scheduling", []*ucli.Command{planCommand(), calendarCommand(), scheduleCommand()}},
		{"Failed", []*ucli.Command{failedCommand()}},
		{"Mass queues", []*ucli.Command{massCommand()}},
		{"Admin", []*ucli.Command{versionCommand(), benchCommand()}},
	}
	app := baseApp(stdout, stderr, grouped(groups...)...)
	var names []string
	for _, g := range groups {
		names = append(names, g.name)
	}
	app.CustomAppHelpTemplate = appHelpTemplate(names)
	app.Usage = "a Resque-compatible worker runtime"
	app.Description = "Runs jobs queued by Ruby Resque, php-resque, node-resque and resque-v3 producers.\n" +
		"Every flag can also be set from the environment variable shown next to it; the older names\n" +
		"QUEUES, RESQUE_CONCURRENCY, FAIL_RETRIES, REDIS_BACKEND, PREFIX and LOGGING are still read."
	return app
}

// baseApp is the app around cmds with resque-go's error handling: every
// parse error is a usageError with a hint instead of the whole help, and
// unknown commands are usage errors.
func baseApp(stdout, stderr io.Writer, cmds ...*ucli.Command) *ucli.App {
	app := &ucli.App{
		Name:           "resque-go",
		Writer:         stdout,
		ErrWriter:      stderr,
		OnUsageError:   onUsageError,
		ExitErrHandler: func(*ucli.Context, error) {}, // runApp maps errors to exit codes
		Commands:       cmds,
		// --version is a flag of ours: urfave/cli's also answers -v.
		HideVersion: true,
		Flags:       []ucli.Flag{&ucli.BoolFlag{Name: "version", Usage: "print the version (as the version command)"}},
		Action: func(c *ucli.Context) error {
			if c.Bool("version") {
				_, err := fmt.Fprintln(c.App.Writer, versionLine())
				return err
			}
			if c.NArg() > 0 {
				return usageHint(fmt.Errorf("no command %q", c.Args().First()), "Run 'resque-go --help' for the commands.")
			}
			return ucli.ShowAppHelp(c)
		},
	}
	for _, cmd := range cmds {
		prepareCommand(cmd, "resque-go")
	}
	return app
}

func prepareCommand(cmd *ucli.Command, parent string) {
	path := parent + " " + cmd.Name
	hint := "Run '" + path + " --help' for usage."
	cmd.OnUsageError = func(c *ucli.Context, err error, _ bool) error {
		return usageHint(err, hint)
	}
	if action := cmd.Action; action != nil {
		cmd.Action = func(c *ucli.Context) error { return withHint(action(c), hint) }
	}
	if len(cmd.Subcommands) > 0 && cmd.UsageText == "" {
		cmd.UsageText = path + " COMMAND [flags] [arguments]"
	}
	if len(cmd.Subcommands) > 0 && cmd.Action == nil {
		cmd.Action = func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageHint(fmt.Errorf("%s: no command %q", cmd.Name, c.Args().First()), "Run '"+path+" --help' for its commands.")
			}
			return ucli.ShowSubcommandHelp(c)
		}
	}
	required := takeRequired(cmd)
	before := cmd.Before
	cmd.Before = func(c *ucli.Context) error {
		if err := applyEnvAliases(c, cmd.Flags, os.LookupEnv); err != nil {
			return withHint(err, hint)
		}
		if err := checkRequired(c, strings.TrimPrefix(path, "resque-go "), required); err != nil {
			return withHint(err, hint)
		}
		if before != nil {
			return withHint(before(c), hint)
		}
		return nil
	}
	for _, sub := range cmd.Subcommands {
		prepareCommand(sub, path)
	}
}

// withHint adds hint to a usage error (exit 2) that has none yet, so that
// every bad flag, value or file is answered with where to read the usage.
func withHint(err error, hint string) error {
	var h hintedError
	if err == nil || exitCode(err) != ExitUsage || errors.As(err, &h) {
		return err
	}
	return usageHint(err, hint)
}

func onUsageError(c *ucli.Context, err error, _ bool) error {
	return usageHint(err, "Run 'resque-go --help' for usage.")
}

// envAliases are further environment variables a flag reads, after the one
// its help shows: names Resque users know from Ruby Resque (LOGGING),
// php-resque (REDIS_BACKEND, PREFIX) or earlier resque-go versions. Each
// flag's help shows one name; these are read only when neither the flag nor
// that variable is set.
var envAliases = settingAliases(map[string][]string{
	"redis":     {"REDIS_BACKEND"},
	"namespace": {"PREFIX"},
	"verbose":   {"LOGGING"},
})

// applyEnvAliases sets each flag of flags that is not set from the first
// of its envAliases that has a value.
func applyEnvAliases(c *ucli.Context, flags []ucli.Flag, lookup func(string) (string, bool)) error {
	for _, f := range flags {
		name := f.Names()[0]
		if c.IsSet(name) {
			continue
		}
		for _, env := range envAliases[name] {
			v, ok := lookup(env)
			if !ok || v == "" {
				continue
			}
			if err := c.Set(name, v); err != nil {
				return usagef("%s=%q (read as --%s): %v", env, v, name, err)
			}
			break
		}
	}
	return nil
}

// Flags shared by every command that talks to Redis.
func redisFlags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "redis", Usage: "Redis URL (redis://[[user]:password@]host:port/db, rediss://... for TLS, redis+sentinel://[[user]:password@]host:26379,host:26379/master[/db]) or host:port", Value: "redis://127.0.0.1:6379", EnvVars: []string{"REDIS_URL"}},
		&ucli.StringFlag{Name: "namespace", Usage: "key namespace (prefix)", Value: "resque", EnvVars: []string{"RESQUE_NAMESPACE"}},
		&ucli.StringFlag{Name: "tls-ca-file", Usage: "PEM file of the CAs that sign the Redis server's certificate (rediss://; default: the system's)", EnvVars: []string{"REDIS_TLS_CA_FILE"}},
		&ucli.StringFlag{Name: "tls-cert-file", Usage: "client certificate (PEM) for a Redis that requires one (tls-auth-clients yes)", EnvVars: []string{"REDIS_TLS_CERT_FILE"}},
		&ucli.StringFlag{Name: "tls-key-file", Usage: "key (PEM) of --tls-cert-file", EnvVars: []string{"REDIS_TLS_KEY_FILE"}},
		&ucli.StringFlag{Name: "tls-server-name", Usage: "name the Redis server's certificate must carry (default: the URL's host)", EnvVars: []string{"REDIS_TLS_SERVER_NAME"}},
		&ucli.BoolFlag{Name: "tls-insecure-skip-verify", Usage: "accept any Redis server certificate (tests only: the traffic can be read and changed)", EnvVars: []string{"REDIS_TLS_INSECURE_SKIP_VERIFY"}},
		&ucli.StringFlag{Name: "sentinel-password", Usage: "password of the Sentinels of a redis+sentinel:// URL (the URL's password is the master's)", EnvVars: []string{"REDIS_SENTINEL_PASSWORD"}},
		&ucli.StringFlag{Name: "log-level", Usage: "debug, info, warn or error", Value: "info", EnvVars: []string{"LOG_LEVEL"}},
		&ucli.StringFlag{Name: "log-format", Usage: "console (colour only on a terminal) or json", Value: "console", EnvVars: []string{"LOG_FORMAT"}},
		&ucli.BoolFlag{Name: "verbose", Usage: "log at info level even if --log-level is higher (Ruby Resque's VERBOSE)", EnvVars: []string{"VERBOSE"}},
		&ucli.BoolFlag{Name: "very-verbose", Usage: "log at debug level (Ruby Resque's VVERBOSE)", EnvVars: []string{"VVERBOSE"}},
	}
}

// metricsTokenFlag is --metrics-token of the commands that serve /metrics.
func metricsTokenFlag() ucli.Flag {
	return settingFlag(worksettings.ByFlag("metrics-token"))
}

func newClient(c *ucli.Context) (*rdb.Client, error) { return clientFor(c, redisConfig(c)) }

// clientFor connects with the Redis settings r (a usage error when they
// cannot be used).
func clientFor(c *ucli.Context, r node.Redis) (*rdb.Client, error) {
	tlsCfg, err := (rdb.TLSFiles{CAFile: r.TLSCAFile, CertFile: r.TLSCertFile, KeyFile: r.TLSKeyFile,
		ServerName: r.TLSServerName, InsecureSkipVerify: r.TLSInsecureSkipVerify}).Config()
	if err != nil {
		return nil, usageError{err}
	}
	client, err := rdb.New(rdb.Options{URL: r.URL, Namespace: r.Namespace, TLS: tlsCfg, SentinelPassword: r.SentinelPassword})
	if err != nil {
		return nil, usageError{err}
	}
	if r.TLSInsecureSkipVerify {
		if log, err := newLogger(c); err == nil {
			log.Warn().Str("redis", client.Addr()).Msg(insecureWarning)
		}
	}
	return client, nil
}

// insecureWarning is logged by every command run with
// --tls-insecure-skip-verify (node logs its own for work).
const insecureWarning = "TLS CERTIFICATE VERIFICATION IS OFF (--tls-insecure-skip-verify): anyone on the network path can read and change the traffic to Redis, passwords included; use it only for tests"

// redisConfig is the Redis settings of redisFlags, as a node takes them.
func redisConfig(c *ucli.Context) node.Redis {
	return node.Redis{URL: c.String("redis"), Namespace: c.String("namespace"),
		TLSCAFile: c.String("tls-ca-file"), TLSCertFile: c.String("tls-cert-file"), TLSKeyFile: c.String("tls-key-file"),
		TLSServerName: c.String("tls-server-name"), TLSInsecureSkipVerify: c.Bool("tls-insecure-skip-verify"),
		SentinelPassword: c.String("sentinel-password")}
}

func newLogger(c *ucli.Context) (zerolog.Logger, error) {
	level, err := logLevel(c)
	if err != nil {
		return zerolog.Logger{}, err
	}
	return buildLogger(c.App.ErrWriter, level, c.String("log-format"))
}

// logLevel is --log-level, lowered to info by --verbose and to debug by
// --very-verbose: the most verbose of the three wins.
func logLevel(c *ucli.Context) (zerolog.Level, error) {
	name := strings.ToLower(strings.TrimSpace(c.String("log-level")))
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, name) {
		return zerolog.NoLevel, usagef("--log-level %q: want debug, info, warn or error", c.String("log-level"))
	}
	level, _ := zerolog.ParseLevel(name)
	if c.Bool("verbose") {
		level = min(level, zerolog.InfoLevel)
	}
	if c.Bool("very-verbose") {
		level = zerolog.DebugLevel
	}
	return level, nil
}

// buildLogger logs to w as JSON or, for "console", as text with colours
// only when w is a terminal (and NO_COLOR is not set), so that log files and
// journald get no escape codes.
func buildLogger(w io.Writer, level zerolog.Level, format string) (zerolog.Logger, error) {
	switch format {
	case "json":
	case "console":
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.RFC3339, NoColor: !colourful(w)}
	default:
		return zerolog.Logger{}, usagef("--log-format %q: want console or json", format)
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger(), nil
}

// colourful reports whether w is a terminal that should get colours and
// screen codes (https://no-color.org: NO_COLOR set to anything turns them
// off).
func colourful(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// parseSeconds reads Ruby-style seconds ("5", "0.5") or a Go duration
// ("250ms"), as every duration setting of a node does.
func parseSeconds(flag, v string) (time.Duration, error) {
	d, err := node.ParseSeconds(flag, v)
	if err != nil {
		return 0, usageError{err}
	}
	return d, nil
}
