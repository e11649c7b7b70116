package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/worker"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated part of docs/configuration.md from the flag definitions")

// The part of docs/configuration.md between these markers is generated from
// the commands' flag definitions; TestConfigurationDocFlags fails when it is
// out of date and rewrites it with -update-docs.
const (
	flagsBegin = "<!-- BEGIN GENERATED: the flags of every command; go test ./internal/cli -run TestConfigurationDocFlags -update-docs rewrites this part -->"
	flagsEnd   = "<!-- END GENERATED -->"
)

func TestConfigurationDocFlags(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "configuration.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, flagsBegin), strings.Index(doc, flagsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s: no generated part between %q and %q", path, flagsBegin, flagsEnd)
	}
	want := flagsBegin + "\n\n" + flagsReference(newApp(io.Discard, io.Discard, worker.NewRegistry())) + "\n"
	if doc[i:j] == want {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(path, []byte(doc[:i]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the flag reference is out of date; run go test ./internal/cli -run TestConfigurationDocFlags -update-docs", path)
}

// flagsReference is the Markdown reference of every visible flag of app's
// commands: the Redis and logging flags every Redis command shares once,
// then each command's own, in the order of --help.
func flagsReference(app *ucli.App) string {
	var b strings.Builder
	shared := map[string]bool{}
	var sharedFlags []ucli.Flag
	for _, f := range redisFlags() {
		shared[f.Names()[0]] = true
		sharedFlags = append(sharedFlags, f)
	}
	b.WriteString("### Redis and logging\n\nEvery command that talks to Redis takes these.\n\n")
	flagTable(&b, sharedFlags)
	var walk func(cmds []*ucli.Command, parent string)
	walk = func(cmds []*ucli.Command, parent string) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			path := parent + " " + c.Name
			var own []ucli.Flag
			sharesRedis := false
			for _, f := range c.Flags {
				if shared[f.Names()[0]] {
					sharesRedis = true
					continue
				}
				if v, ok := f.(ucli.VisibleFlag); ok && !v.IsVisible() {
					continue
				}
				own = append(own, f)
			}
			if len(own) > 0 || sharesRedis {
				fmt.Fprintf(&b, "\n### `%s`\n\n", path)
				if c.Usage != "" {
					b.WriteString(strings.ToUpper(c.Usage[:1]) + c.Usage[1:] + ".")
				}
				if sharesRedis {
					b.WriteString(" Also the [Redis and logging](#redis-and-logging) flags.")
				}
				b.WriteString("\n")
				if len(own) > 0 {
					b.WriteString("\n")
					flagTable(&b, own)
				}
			}
			walk(c.Subcommands, path)
		}
	}
	walk(app.Commands, "resque-go")
	return b.String()
}

func flagTable(b *strings.Builder, flags []ucli.Flag) {
	b.WriteString("| flag | environment | default | meaning |\n|---|---|---|---|\n")
	for _, f := range flags {
		names := slices.Clone(f.Names())
		for k, n := range names {
			if len(n) == 1 {
				names[k] = "`-" + n + "`"
			} else {
				names[k] = "`--" + n + "`"
			}
		}
		var env []string
		def, usage := "", ""
		if d, ok := f.(ucli.DocGenerationFlag); ok {
			for _, e := range d.GetEnvVars() {
				env = append(env, "`"+e+"`")
			}
			usage = d.GetUsage()
			if d.TakesValue() {
				def = d.GetDefaultText()
				if def == "" {
					def = d.GetValue()
				}
			}
		}
		for _, e := range envAliases[f.Names()[0]] {
			env = append(env, "`"+e+"`")
		}
		if bf, ok := f.(*ucli.BoolFlag); ok {
			def = fmt.Sprint(bf.Value)
		}
		if s, ok := f.(ucli.DocGenerationSliceFlag); ok && s.IsSliceFlag() && !strings.Contains(usage, "repeatable") {
			usage += " (repeatable)"
		}
		if def != "" {
			def = "`" + strings.Trim(def, `"`) + "`"
		}
		cell := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", strings.Join(names, ", "), strings.Join(env, ", "), cell(def), cell(usage))
	}
}
