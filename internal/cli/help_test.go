package cli

import (
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFormatVersion(t *testing.T) {
	t.Parallel()
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "-compiler", Value: "gc"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		info debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.4.0"}}, "resque-go v0.4.0 go1.26.8"},
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "resque-go (devel) go1.26.8"},
		{debug.BuildInfo{GoVersion: "go1.26.8"}, "resque-go (devel) go1.26.8"},
		{debug.BuildInfo{GoVersion: "go1.25.1", Main: debug.Module{Version: "v0.4.0"}, Settings: vcs("1a2b3c4d5e6f7a8b9c0d", "false")},
			"resque-go v0.4.0 (rev 1a2b3c4) go1.25.1"},
		{debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261128143644-da877f72a1d5+dirty"}, Settings: vcs("da877f72a1d5e6", "true")},
			"resque-go v0.0.0-20261128143644-da877f72a1d5+dirty (rev da877f7, dirty) go1.26.8"},
	} {
		if got := formatVersion(&tc.info); got != tc.want {
			t.Errorf("formatVersion(%+v) = %q, want %q", tc.info, got, tc.want)
		}
	}
}

// version and --version print the build's version line; -v is no longer
// an alias of --version.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	line := regexp.MustCompile(`^resque-go (\(devel\)|v\S+)( \(rev [0-9a-f]{7}(, dirty)?\))? go1\.\S+\n$`)
	code, out, errOut := runArgs("version")
	if code != ExitOK || !line.MatchString(out) || errOut != "" {
		t.Errorf("version: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, flagOut, _ := runArgs("--version")
	if code != ExitOK || flagOut != out {
		t.Errorf("--version: exit %d, %q; want %q", code, flagOut, out)
	}
	if code, out, errOut := runArgs("-v"); code != ExitUsage || out != "" || !strings.HasPrefix(errOut, "resque-go: flag provided but not defined: -v\n") {
		t.Errorf("-v: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := runArgs("version", "x"); code != ExitUsage || noHint(errOut) != "resque-go: version takes no arguments (got \"x\")\n" {
		t.Errorf("version x: exit %d, stderr %q", code, errOut)
	}
}

// --help lists every visible command under a group, demo first.
func TestHelpGroupsCommands(t *testing.T) {
	t.Parallel()
	code, out, _ := runArgs("--help")
	if code != ExitOK {
		t.Fatalf("--help: exit %d", code)
	}
	cmds := out[strings.Index(out, "COMMANDS:"):strings.Index(out, "GLOBAL OPTIONS:")]
	want := "COMMANDS:\n   Run:\n     demo "
	if !strings.HasPrefix(cmds, want) {
		t.Errorf("--help commands start %q, want %q", cmds[:min(len(cmds), 60)], want)
	}
	for _, g := range []string{"Run", "Enqueue & inspect", "Scheduling", "Failed", "Mass queues", "Admin"} {
		if !strings.Contains(cmds, "\n   "+g+":\n") {
			t.Errorf("--help has no group %q:\n%s", g, cmds)
		}
	}
	for _, c := range newApp(nil, nil, nil).Commands {
		listed := regexp.MustCompile(`(?m)^     ` + c.Name + `\b`).MatchString(cmds)
		if listed == c.Hidden {
			t.Errorf("command %s (hidden %v) listed in --help: %v", c.Name, c.Hidden, listed)
		}
	}
}

// A command made of subcommands says so in its USAGE line.
func TestHelpOfCommandGroups(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"failed"}, {"mass", "batch"}, {"queue"}} {
		code, out, _ := runArgs(append(args, "--help")...)
		want := "USAGE:\n   resque-go " + strings.Join(args, " ") + " COMMAND [flags] [arguments]\n"
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("%v --help: exit %d, want %q in\n%s", args, code, want, out)
		}
	}
}
