// Package chaos is the chaos ledger: a pool of worker processes, a
// scheduler and a producer run against a redis-server with an append-only
// file, through a TCP proxy, while the test kills processes with -9,
// restarts Redis and cuts and black-holes connections; at the end every
// job pushed is accounted for exactly once. TestChaosLedgerShort runs in
// the normal suite; `make chaos` runs TestChaosLedgerFull (build tag
// chaos) at full size.
package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// binary is resque-go built for the run (without -race: the chaos test
// measures the product, and a race build is several times slower).
var binary string

func TestMain(m *testing.M) {
	// Job handlers are this test binary started again by the workers.
	if os.Getenv(handlerEnv) == "1" {
		os.Exit(handle())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "resque-go-chaos")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "resque-go")
	build := exec.Command("go", "build", "-o", binary, "github.com/resque-go/resque-go")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "chaos: build:", err)
		return 1
	}
	return m.Run()
}
