package pool_test

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/pool"
)

// configSeeds are the config files of the repository (examples/pool.yml,
// pool/testdata) and every string literal of this package's tests that
// looks like YAML: the files the table tests parse.
func configSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	files, _ := filepath.Glob("testdata/*.yml")
	for _, p := range append(files, "../examples/pool.yml") {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	tests, _ := filepath.Glob("*_test.go")
	fset := token.NewFileSet()
	for _, p := range tests {
		file, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			f.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && strings.Contains(s, ":") && (strings.Contains(s, "\n") || strings.Contains(s, "{")) {
				seeds = append(seeds, []byte(s))
			}
			return true
		})
	}
	if len(seeds) < 20 {
		f.Fatalf("only %d config seeds", len(seeds))
	}
	return append(seeds,
		[]byte("a: &a [*a]"),
		[]byte("x: &x {queues: q}\nworkers: [*x, *x, *x]"),
		[]byte("workers:\n  - queues: 'a,b'\n    processes: 99999999999999999999"),
		[]byte("high,low: 2\nproduction:\n  high,low: 3\n  '*': 1"),
		[]byte("queues: {default: {worker_count: 2, blocking: false, interval: 0.5}}\nredis: {hostname: '::1', port: 6380, password: 1234}"),
		[]byte("redis: 'redis://:se cret@h:notaport'\nworkers: [{queues: q}]"),
		[]byte("\xff: 1"), []byte("- a"), []byte(""), []byte("{"),
	)
}

// FuzzParseConfig checks the pool config parser: no panic; a refused file
// gets *ConfigError messages naming the file; an accepted one parses the
// same again, every queue set has a valid queue list and a non-negative
// count, it can be described, and every child config it yields passes the
// work command's own validation and survives the trip to the child (the
// manager never starts children that refuse their config).
func FuzzParseConfig(f *testing.F) {
	for _, s := range configSeeds(f) {
		f.Add(s, "")
		f.Add(s, "production")
	}
	f.Fuzz(func(t *testing.T, data []byte, env string) {
		opt := pool.LoadOptions{Environment: env}
		cfg, err := pool.Parse("pool.yml", data, opt)
		if err != nil {
			if cfg != nil {
				t.Fatalf("Parse returned a config with error %v", err)
			}
			checkConfigErrors(t, err)
			return
		}
		again, err := pool.Parse("pool.yml", bytes.Clone(data), opt)
		if err != nil || !reflect.DeepEqual(cfg, again) {
			t.Fatalf("a second Parse gives %+v, %v; the first %+v", again, err, cfg)
		}
		for _, s := range cfg.Sets {
			if _, err := protocol.ParseQueueSpec(s.Queues); err != nil {
				t.Fatalf("set %+v: queue list: %v", s, err)
			}
			if s.Processes < 0 || s.Concurrency < 0 || s.Timeout < 0 || s.Interval < 0 {
				t.Fatalf("set %+v", s)
			}
			child := cfg.Child(s)
			if err := child.Validate(); err != nil {
				t.Fatalf("set %q: the child refuses its config: %v", s.Queues, err)
			}
			var b bytes.Buffer
			if err := child.Encode(&b); err != nil {
				t.Fatal(err)
			}
			got, err := node.Decode(&b)
			if err != nil || !reflect.DeepEqual(got, child) {
				t.Fatalf("child config %+v decodes as %+v, %v", child, got, err)
			}
		}
		if err := cfg.Describe(io.Discard); err != nil {
			t.Fatal(err)
		}
		if cfg.Redis != "" {
			if u, _, ok := strings.Cut(cfg.Redis, "@"); ok && strings.Contains(u, ":") {
				var b strings.Builder
				_ = cfg.Describe(&b)
				if _, pw, _ := strings.Cut(strings.TrimPrefix(u, "redis://"), ":"); len(pw) > 3 && strings.Contains(b.String(), pw) {
					t.Fatalf("Describe shows the password %q: %s", pw, b.String())
				}
			}
		}
	})
}

func checkConfigErrors(t *testing.T, err error) {
	t.Helper()
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	if len(errs) == 0 || len(errs) > 21 {
		t.Fatalf("%d errors: %v", len(errs), err)
	}
	for _, e := range errs {
		var ce *pool.ConfigError
		if !errors.As(e, &ce) {
			t.Fatalf("error %v (%T) is not a *ConfigError", e, e)
		}
		if !strings.HasPrefix(e.Error(), "pool.yml:") {
			t.Fatalf("error %q does not name the file", e)
		}
	}
}
