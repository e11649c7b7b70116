package apicheck

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
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
	for _, want := range []string{"client", "delayed", "failure", "massqueue", "plan", "pool", "schedule", "stats", "unique", "worker", "node"} {
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
}
