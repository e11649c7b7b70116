package apicheck

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const modulePath = "github.com/resque-go/resque-go"

// Every exported function, method, field, type, variable and constant of
// every non-internal package of this module names only public types: a
// program outside the module can call everything it is shown.
func TestPublicPackagesNameNoInternalType(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go tool is not on PATH")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	goCmd := func(args ...string) []byte {
		t.Helper()
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return out
	}
	var public []string
	for line := range strings.Lines(string(goCmd("list", "-f", "{{.ImportPath}} {{.Name}} {{len .GoFiles}}", "./..."))) {
		f := strings.Fields(line)
		if len(f) == 3 && f[1] != "main" && f[2] != "0" && !isInternal(f[0]) {
			public = append(public, f[0])
		}
	}
	for _, want := range append(publicDirs(t, root), "client", "node", "web", "app") {
		if !slices.Contains(public, modulePath+"/"+want) {
			t.Fatalf("go list did not name package %s among %q", want, public)
		}
	}
	exports := ExportData(goCmd, public...)
	api := New(modulePath + "/")
	for _, path := range public {
		if err := api.PackageAPI(path, exports); err != nil {
			t.Fatalf("load %s: %v", path, err)
		}
	}
	for _, l := range api.Leaks {
		t.Errorf("internal type in the public API: %s", l)
	}
	// go doc shows an exported constant or variable with the expression
	// that defines it: that must not name an internal package either.
	for line := range strings.Lines(string(goCmd(append([]string{"list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}"}, public...)...))) {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) != 3 {
			continue
		}
		for _, name := range strings.Fields(f[2]) {
			for _, l := range internalValues(t, filepath.Join(f[1], name)) {
				t.Errorf("%s: %s", f[0], l)
			}
		}
	}
}

// publicDirs lists, relative to root, every folder outside internal/ (and
// testdata/) with a non-test Go file of a package other than main: the
// packages a program outside the module can import, found without go list,
// so one that go list leaves out still fails the test.
func publicDirs(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "internal" || name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		if f.Name.Name != "main" && rel != "." && !slices.Contains(out, filepath.ToSlash(rel)) {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// internalValues lists the exported constants and variables of a file whose
// defining expression names an internal package.
func internalValues(t *testing.T, path string) []string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	internal := map[string]string{}
	for _, im := range file.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if isInternal(p) {
			name := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			internal[name] = p
		}
	}
	var out []string
	for _, d := range file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if !id.IsExported() || i >= len(vs.Values) {
					continue
				}
				ast.Inspect(vs.Values[i], func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok {
						if x, ok := sel.X.(*ast.Ident); ok && internal[x.Name] != "" {
							out = append(out, fmt.Sprintf("%s is defined with %s.%s (%s)", id.Name, x.Name, sel.Sel.Name, internal[x.Name]))
						}
					}
					return true
				})
			}
		}
	}
	return out
}
