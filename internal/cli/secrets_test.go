package cli

import (
	"context"
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

// What ps may show of a command line: secret flags' values and URL
// passwords masked, everything else as given.
func TestMaskArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"resque-go work --redis redis://:pw@h:6379/0 -q a", "resque-go work --redis redis://:***@h:6379/0 -q a"},
		{"resque-go scheduler --redis=redis://user:p@ss@h:6379", "resque-go scheduler --redis=redis://user:***@h:6379"},
		{"resque-go pool --redis redis+sentinel://:pw@s1:26379,s2:26379/mymaster --sentinel-password spw",
			"resque-go pool --redis redis+sentinel://:***@s1:26379,s2:26379/mymaster --sentinel-password ***"},
		{"resque-go work --http-token tok --metrics-token=mt -sentinel-password x --exec *=true",
			"resque-go work --http-token *** --metrics-token=*** -sentinel-password *** --exec *=true"},
		{"resque-go work --http Hook=https://tok3n@api.example/x?a=b", "resque-go work --http Hook=https://***@api.example/x?a=b"},
		{"resque-go work --redis 127.0.0.1:6379 -q mail", "resque-go work --redis 127.0.0.1:6379 -q mail"},
		{"resque-go enqueue -- --http-token", "resque-go enqueue -- --http-token"},
		{"resque-go work --http-token", "resque-go work --http-token"},
	} {
		got := strings.Join(maskArgs(strings.Fields(tc.in)), " ")
		if got != tc.want {
			t.Errorf("maskArgs(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// Every flag that takes a secret is one secretFlag names (so it is masked
// on the command line), and no variable a secret can be given in (a secret
// flag's, the Redis URL's, and their older names) reaches a job process.
func TestSecretsStayOutOfJobs(t *testing.T) {
	vars := map[string]bool{}
	var walk func(cmds []*ucli.Command)
	walk = func(cmds []*ucli.Command) {
		for _, cmd := range cmds {
			for _, f := range cmd.Flags {
				name := f.Names()[0]
				looksSecret := strings.Contains(name, "password") || strings.Contains(name, "token") ||
					strings.Contains(name, "secret") || strings.Contains(name, "passphrase")
				if looksSecret != secretFlag(name) {
					t.Errorf("%s --%s: looks secret %v, secretFlag %v", cmd.Name, name, looksSecret, secretFlag(name))
				}
				if !secretFlag(name) && name != "redis" {
					continue
				}
				if ev, ok := f.(interface{ GetEnvVars() []string }); ok {
					for _, v := range ev.GetEnvVars() {
						vars[v] = true
					}
				}
				for _, v := range envAliases[name] {
					vars[v] = true
				}
			}
			walk(cmd.Subcommands)
		}
	}
	walk(newApp(io.Discard, io.Discard, worker.NewRegistry()).Commands)
	for _, v := range []string{"REDIS_URL", "REDIS_SENTINEL_PASSWORD", "RESQUE_HTTP_TOKEN", "RESQUE_METRICS_TOKEN"} {
		if !vars[v] {
			t.Errorf("%s is not read by any secret flag", v)
		}
	}
	names := make([]string, 0, len(vars))
	for v := range vars {
		names = append(names, v)
		t.Setenv(v, "redis://:hunter2-"+v+"@127.0.0.1:1")
	}
	slices.Sort(names)
	out := filepath.Join(t.TempDir(), "env")
	h := worker.ExecHandler(fmt.Sprintf("env > %q", out), worker.ExecOptions{Stdout: io.Discard, Stderr: io.Discard})
	job := worker.NewJob(worker.Job{Queue: "q", Class: "C", Args: []byte(`[]`), Payload: []byte(`{"class":"C","args":[]}`), WorkerID: "h:1:q"}, nil)
	if err := h(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(env), "hunter2") {
		t.Errorf("a secret of %v reached the job:\n%s", names, env)
	}
}
