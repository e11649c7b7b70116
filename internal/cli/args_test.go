package cli

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/worker"
)

// flagsFirst moves a command's flags, with their values, ahead of its
// positional arguments; `--` ends the flags.
func TestFlagsFirst(t *testing.T) {
	t.Parallel()
	app := newApp(nil, nil, worker.NewRegistry())
	for _, tc := range []struct{ in, want string }{
		{"failed retry 3 --redis X", "failed retry --redis X 3"},
		{"failed retry 3 4 --all --json", "failed retry --all --json 3 4"},
		{"queue remove rm --class Drop", "queue remove --class Drop rm"},
		{"queue remove rm --class=Drop --yes", "queue remove --class=Drop --yes rm"},
		{"mass batch push ID --redis X", "mass batch push --redis X ID"},
		{"plan show ID --next 5", "plan show --next 5 ID"},
		{"queue clear reports --yes", "queue clear --yes reports"},
		{"queue clear --yes reports", "queue clear --yes reports"},
		{"pool --config f.yml check", "pool --config f.yml check"},
		{"pool check --config f.yml", "pool check --config f.yml"},
		{"failed show 1 -- -2 --json", "failed show -- 1 -2 --json"},
		{"failed show 1 -1", "failed show -- 1 -1"},
		{"failed show 1 --nope 2", "failed show --nope 1 2"},
		{"queue peek q --limit", "queue peek --limit q"},
		{"--help failed", "--help failed"},
		{"work -q a,b -c 2", "work -q a,b -c 2"},
		{"help queue", "help queue"},
		{"nothing --yes", "nothing --yes"},
		{"", ""},
	} {
		in := append([]string{"resque-go"}, strings.Fields(tc.in)...)
		want := append([]string{"resque-go"}, strings.Fields(tc.want)...)
		if got := flagsFirst(app, in); !slices.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", tc.in, got, want)
		}
	}
}

// Every command that takes positional arguments reads flags given after
// them, through the whole app as Run builds it.
func TestFlagsAfterArguments(t *testing.T) {
	t.Parallel()
	tested := map[string]bool{}
	for _, tc := range []struct {
		args     string // after resque-go
		flag     string // a flag given after the arguments ...
		value    string // ... and the value the command must see
		wantArgs string
	}{
		{"failed show 3 4 --namespace X", "namespace", "X", "3 4"},
		{"failed retry 3 --redis X", "redis", "X", "3"},
		{"failed remove 3 --class C --yes", "class", "C", "3"},
		{"queue size q --namespace X", "namespace", "X", "q"},
		{"queue peek q --limit 5", "limit", "5", "q"},
		{"queue remove rm --class Drop", "class", "Drop", "rm"},
		{"queue clear reports --yes", "yes", "true", "reports"},
		{"queue pause reports --json", "json", "true", "reports"},
		{"queue resume reports --namespace X", "namespace", "X", "reports"},
		{"queue unlock reports --token T", "token", "T", "reports"},
		{"job cancel W --retry", "retry", "true", "W"},
		{"process quiet h:1 --json", "json", "true", "h:1"},
		{"process resume h:1 --namespace X", "namespace", "X", "h:1"},
		{"process stop h:1 --redis X", "redis", "X", "h:1"},
		{"job events ID --json", "json", "true", "ID"},
		{"unique show u --namespace X", "namespace", "X", "u"},
		{"unique clear u --namespace X", "namespace", "X", "u"},
		{"group on-complete g --queue q --class C", "class", "C", "g"},
		{"group on-success g --queue q --class C", "queue", "q", "g"},
		{"group close g --namespace X", "namespace", "X", "g"},
		{"group show g --json", "json", "true", "g"},
		{"job show abc --namespace X", "namespace", "X", "abc"},
		{"delayed show 1700000000 --namespace X", "namespace", "X", "1700000000"},
		{"delayed queue-now 1700000000 --class C", "class", "C", "1700000000"},
		{"plan queue-now ID --namespace X", "namespace", "X", "ID"},
		{"schedule queue-now NAME --schedule f.yml", "schedule", "f.yml", "NAME"},
		{"plan show ID --next 5", "next", "5", "ID"},
		{"plan remove ID --namespace X", "namespace", "X", "ID"},
		{"plan pause ID --namespace X", "namespace", "X", "ID"},
		{"plan resume ID --namespace X", "namespace", "X", "ID"},
		{"calendar add NAME --timezone Europe/Prague", "timezone", "Europe/Prague", "NAME"},
		{"calendar show NAME --namespace X", "namespace", "X", "NAME"},
		{"calendar remove NAME --namespace X", "namespace", "X", "NAME"},
		{"schedule show NAME --schedule f.yml", "schedule", "f.yml", "NAME"},
		{"schedule validate f.yml --json", "json", "true", "f.yml"},
		{"mass batch push ID --redis X", "redis", "X", "ID"},
		{"mass batch commit ID --json", "json", "true", "ID"},
		{"mass reallocate ID --namespace X", "namespace", "X", "ID"},
		{"failed show -- 1 --json", "json", "false", "1 --json"},
	} {
		var gotArgs, gotValue string
		app := newApp(new(bytes.Buffer), new(bytes.Buffer), worker.NewRegistry())
		cmd := commandAt(app, strings.Fields(tc.args))
		tested[commandPath(strings.Fields(tc.args), cmd)] = true
		cmd.Action = func(c *ucli.Context) error {
			gotArgs, gotValue = strings.Join(c.Args().Slice(), " "), c.String(tc.flag)
			if _, ok := flagOf(cmd, tc.flag).(*ucli.BoolFlag); ok {
				gotValue = map[bool]string{true: "true", false: "false"}[c.Bool(tc.flag)]
			}
			return nil
		}
		parseMu.Lock()
		code := runApp(context.Background(), app, append([]string{"resque-go"}, strings.Fields(tc.args)...))
		parseMu.Unlock()
		if code != ExitOK || gotArgs != tc.wantArgs || gotValue != tc.value {
			t.Errorf("resque-go %s: exit %d, arguments %q, --%s %q; want arguments %q, --%s %q",
				tc.args, code, gotArgs, tc.flag, gotValue, tc.wantArgs, tc.flag, tc.value)
		}
	}
	// The table covers every command whose USAGE line names an argument.
	walkCommands(newApp(nil, nil, worker.NewRegistry()).Commands, "", func(path string, cmd *ucli.Command) {
		prev := ""
		for _, w := range strings.Fields(strings.NewReplacer("[", "", "]", "", "|", "").Replace(cmd.ArgsUsage)) {
			value := strings.HasPrefix(prev, "-") // a flag's value, not an argument
			prev = w
			if w == strings.ToUpper(w) && w[0] != '-' && !value && !tested[path] {
				t.Errorf("%s takes %s: no case here gives it flags after its arguments", path, w)
				return
			}
		}
	})
}

// commandAt is the command that words (command names, then arguments)
// run in app.
func commandAt(app *ucli.App, words []string) *ucli.Command {
	var cmd *ucli.Command
	cmds := app.Commands
	for _, w := range words {
		sub := findCommand(cmds, w)
		if sub == nil {
			break
		}
		cmd, cmds = sub, sub.Subcommands
	}
	return cmd
}

// commandPath is the names of words up to cmd's: "mass batch push".
func commandPath(words []string, cmd *ucli.Command) string {
	i := slices.Index(words, cmd.Name)
	return strings.Join(words[:i+1], " ")
}

// walkCommands calls f on every command of cmds and their subcommands,
// with its path of names after prefix.
func walkCommands(cmds []*ucli.Command, prefix string, f func(path string, cmd *ucli.Command)) {
	for _, c := range cmds {
		path := strings.TrimSpace(prefix + " " + c.Name)
		f(path, c)
		walkCommands(c.Subcommands, path, f)
	}
}

func flagOf(cmd *ucli.Command, name string) ucli.Flag {
	for _, f := range cmd.Flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}
