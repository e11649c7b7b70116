package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/pool"
)

// A parse error is one line plus a hint, never the whole help, exit 2.
func TestParseErrorsAreOneLineAndAHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd        func() *ucli.Command
		args       []string
		want, hint string
	}{
		{workCmd, []string{"-x"}, "resque-go: flag provided but not defined: -x", "Run 'resque-go work --help' for usage."},
		{workCmd, []string{"-q", "a", "--concurrency", "many"}, `resque-go: invalid value "many" for flag -concurrency: parse error`, "Run 'resque-go work --help' for usage."},
		{workCmd, []string{"-q"}, "resque-go: flag needs an argument: -q", "Run 'resque-go work --help' for usage."},
		{statsCommand, []string{"--watch=maybe"}, "resque-go: invalid boolean value", "Run 'resque-go stats --help' for usage."},
		{enqueueCommand, []string{"--nope"}, "resque-go: flag provided but not defined: -nope", "Run 'resque-go enqueue --help' for usage."},
		{failedCommand, []string{"show", "-x", "0"}, "resque-go: flag provided but not defined: -x", "Run 'resque-go failed show --help' for usage."},
		{failedCommand, []string{"shw", "0"}, `resque-go: failed: no command "shw"`, "Run 'resque-go failed --help' for its commands."},
	} {
		out, errOut := newSyncBuffer(), newSyncBuffer()
		code := runCommand(context.Background(), tc.cmd(), tc.args, out, errOut)
		lines := strings.Split(strings.TrimRight(errOut.String(), "\n"), "\n")
		if code != ExitUsage || len(lines) != 2 || !strings.HasPrefix(lines[0], tc.want) || lines[1] != tc.hint || out.String() != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, %q and %q", tc.args, code, out.String(), errOut.String(), tc.want, tc.hint)
		}
	}
}

// Run itself: unknown commands and help topics are usage errors too.
func TestRunUnknownCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"resque-go", "wrok"}, `resque-go: no command "wrok"`},
		{[]string{"resque-go", "wrok", "--yes"}, `resque-go: no command "wrok"`},
		{[]string{"resque-go", "--nope"}, "resque-go: flag provided but not defined: -nope"},
		{[]string{"resque-go", "help", "wrok"}, "resque-go: No help topic for 'wrok'"},
	} {
		parseMu.Lock()
		var out, errOut bytes.Buffer
		code := Run(context.Background(), tc.args, &out, &errOut, nil)
		parseMu.Unlock()
		if code != ExitUsage || !strings.HasPrefix(errOut.String(), tc.want) || strings.Count(errOut.String(), "\n") > 2 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut.String(), tc.want)
		}
	}
}

func TestExitCodeAndErrorLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		code int
		line string
	}{
		{usagef("bad"), ExitUsage, "bad"},
		{usageHint(errors.New("bad"), "hint"), ExitUsage, "bad"},
		{ucli.Exit("No help topic for 'x'", 3), ExitUsage, "No help topic for 'x'"},
		{fmt.Errorf("x: %w", fmt.Errorf("%w %q: no host", rdb.ErrBadURL, "redis://")), ExitUsage, `x: bad redis url "redis://": no host`},
		{fmt.Errorf("enqueue: %w", errors.New(`protocol: args are not valid JSON: "[1"`)), ExitFailure, `enqueue: args are not valid JSON: "[1"`},
		{errors.New(`rdb: claim "q": WRONGTYPE x`), ExitFailure, `claim "q": WRONGTYPE x`},
		{errors.New(`plan: invalid plan: period "P0D" is zero`), ExitFailure, `period "P0D" is zero`},
		{errors.New(`plan: invalid plan: protocol: queue name "a,b"`), ExitFailure, `queue name "a,b"`},
		{errors.New(`plan "x": plan: a plan with this id exists`), ExitFailure, `plan "x": a plan with this id exists`},
		{errors.New(`unique: state of "u": rdb: WRONGTYPE`), ExitFailure, `unique: state of "u": WRONGTYPE`},
		{errors.New("boom\nsecond line"), ExitFailure, "boom second line"},
		{fmt.Errorf("start: rdb: get: %w", &rdb.ConnError{Addr: "redis://:xxxxx@h:1", Err: errors.New("WRONGPASS x"), Fatal: true}),
			ExitFailure, "redis at redis://:xxxxx@h:1 refused the connection: WRONGPASS x"},
		{errors.New(`pool: redis changed from "redis://:old@h:1" to "redis://u:new@h:2/0"`), ExitFailure,
			`pool: redis changed from "redis://:xxxxx@h:1" to "redis://u:xxxxx@h:2/0"`},
	} {
		if got := exitCode(tc.err); got != tc.code {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.code)
		}
		if got := errorLine(tc.err); got != tc.line {
			t.Errorf("errorLine(%v) = %q, want %q", tc.err, got, tc.line)
		}
	}
}

// --verbose and --very-verbose (VERBOSE, VVERBOSE) lower the level; the
// most verbose setting wins.
func TestLogLevel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "info"},
		{[]string{"--log-level", "error"}, "error"},
		{[]string{"--log-level", "error", "--verbose"}, "info"},
		{[]string{"--log-level", "WARN", "--very-verbose"}, "debug"},
		{[]string{"--log-level", "debug", "--verbose"}, "debug"},
		{[]string{"--log-level", "loud"}, `--log-level "loud"`},
	} {
		cmd := &ucli.Command{Name: "t", Flags: redisFlags(), Action: func(c *ucli.Context) error {
			level, err := logLevel(c)
			if err != nil {
				return err
			}
			fmt.Fprint(c.App.Writer, level.String())
			return nil
		}}
		out, errOut := newSyncBuffer(), newSyncBuffer()
		runCommand(context.Background(), cmd, tc.args, out, errOut)
		if got := out.String() + errOut.String(); !strings.Contains(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.args, got, tc.want)
		}
	}
}

// Console logs have no colour codes unless stderr is a terminal.
func TestConsoleLogsWithoutColourOffTerminal(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var buf bytes.Buffer
	for _, out := range []io.Writer{&buf, w} {
		log, err := buildLogger(out, 0, "console")
		if err != nil {
			t.Fatal(err)
		}
		log.Warn().Str("queue", "mail").Msg("hello")
	}
	w.Close()
	piped := make([]byte, 4096)
	n, _ := r.Read(piped)
	for _, got := range []string{buf.String(), string(piped[:n])} {
		if !strings.Contains(got, "WRN hello queue=mail") || strings.Contains(got, "\x1b[") {
			t.Errorf("console log %q: want plain text", got)
		}
	}
	if colourful(w) || colourful(&buf) {
		t.Error("a pipe or a buffer counts as a terminal")
	}
}

// The pool manager's console log is plain off a terminal, as every
// command's is.
func TestPoolLogPlainOffTerminal(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log, err := poolLogger(&buf, &pool.Config{LogLevel: "info", LogFormat: "console"})
	if err != nil {
		t.Fatal(err)
	}
	log.Warn().Str("queue", "mail").Msg("hello")
	if got := buf.String(); !strings.Contains(got, "WRN hello component=pool queue=mail") || strings.Contains(got, "\x1b[") {
		t.Errorf("pool log %q: want plain text", got)
	}
}

// Every flag's help shows one environment variable; the other names are
// read through envAliases, after the primary one.
func TestEnvAliases(t *testing.T) {
	t.Parallel()
	for _, cmd := range []*ucli.Command{workCmd(), enqueueCommand(), statsCommand()} {
		for _, f := range cmd.Flags {
			if ev, ok := f.(interface{ GetEnvVars() []string }); ok && len(ev.GetEnvVars()) > 1 {
				t.Errorf("%s --%s shows %d environment variables: %v", cmd.Name, f.Names()[0], len(ev.GetEnvVars()), ev.GetEnvVars())
			}
		}
	}
	env := map[string]string{"QUEUES": "from-queues", "FAIL_RETRIES": "7", "REDIS_BACKEND": "127.0.0.1:1", "PREFIX": "php", "RESQUE_CONCURRENCY": "3", "LOGGING": "1"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	got := map[string]string{}
	cmd := workCmd()
	cmd.Action = func(c *ucli.Context) error {
		if err := applyEnvAliases(c, cmd.Flags, lookup); err != nil {
			return err
		}
		for _, name := range []string{"queues", "fail-retries", "redis", "namespace", "concurrency", "verbose"} {
			got[name] = fmt.Sprint(c.Value(name))
		}
		return nil
	}
	out, errOut := newSyncBuffer(), newSyncBuffer()
	if code := runCommand(context.Background(), cmd, []string{"--namespace", "flag-wins"}, out, errOut); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	want := map[string]string{"queues": "from-queues", "fail-retries": "7", "redis": "127.0.0.1:1", "namespace": "flag-wins", "concurrency": "3", "verbose": "true"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("--%s = %q, want %q", k, got[k], v)
		}
	}

	env = map[string]string{"RESQUE_CONCURRENCY": "many"}
	cmd = workCmd()
	cmd.Action = func(c *ucli.Context) error { return applyEnvAliases(c, cmd.Flags, lookup) }
	out, errOut = newSyncBuffer(), newSyncBuffer()
	if code := runCommand(context.Background(), cmd, nil, out, errOut); code != ExitUsage || !strings.Contains(errOut.String(), `RESQUE_CONCURRENCY="many" (read as --concurrency)`) {
		t.Errorf("a bad alias value: exit %d, stderr %q", code, errOut.String())
	}
}

// runArgs runs the whole app as Run does on args (after "resque-go") and
// returns the exit code, stdout and stderr.
func runArgs(args ...string) (int, string, string) {
	parseMu.Lock()
	defer parseMu.Unlock()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), append([]string{"resque-go"}, args...), &out, &errOut, nil)
	return code, out.String(), errOut.String()
}

// A required flag left out is one line naming it and the hint, exit 2,
// not the whole help and exit 1; --help lists required flags first, marked.
func TestRequiredFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mass", "weight"}, "resque-go: mass weight needs --source and --weight"},
		{[]string{"mass", "weight", "--weight", "2"}, "resque-go: mass weight needs --source"},
		{[]string{"mass", "limit", "--source", "s"}, "resque-go: mass limit needs --concurrency"},
		{[]string{"mass", "enqueue", "--source", "s"}, "resque-go: mass enqueue needs --name and --class"},
		{[]string{"mass", "batch", "create", "--name", "n"}, "resque-go: mass batch create needs --source"},
		{[]string{"mass", "pause"}, "resque-go: mass pause needs --source"},
	} {
		code, out, errOut := runArgs(tc.args...)
		path, _, _ := strings.Cut(strings.TrimPrefix(tc.want, "resque-go: "), " needs")
		hint := "Run 'resque-go " + path + " --help' for usage.\n"
		if code != ExitUsage || out != "" || errOut != tc.want+"\n"+hint {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, %q and the hint", tc.args, code, out, errOut, tc.want)
		}
	}
	code, out, _ := runArgs("mass", "weight", "--help")
	opts := regexp.MustCompile(`(?m)^ +(--\S+)(?: value)? +(\(required\))?`).FindAllStringSubmatch(out, 3)
	if code != ExitOK || len(opts) != 3 || opts[0][1] != "--source" || opts[1][1] != "--weight" || opts[0][2] == "" || opts[1][2] == "" || opts[2][2] != "" {
		t.Errorf("mass weight --help: exit %d\n%s", code, out)
	}
}
