// Package redistest starts a real redis-server on a free port for tests.
package redistest

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/internal/redisproc"
)

// Server is a redis-server child process (see internal/redisproc).
type Server = redisproc.Server

// Start launches redis-server with persistence off on a free port (or on
// port when non-zero) and waits until it accepts connections.
func Start(port int) (*Server, error) {
	s, err := redisproc.Start(port)
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	return s, nil
}

// Namespace returns a fresh random namespace so tests can share a server.
func Namespace(t testing.TB) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	if len(name) > 40 {
		name = name[:40]
	}
	return "t-" + name + "-" + hex.EncodeToString(b[:])
}

// URLEnv is the variable Main always sets to the shared server's URL, for
// URL and rdbtest, whichever names the package also asks for.
const URLEnv = "RESQUE_GO_TEST_REDIS"

// URL is the URL of the server Main started for the package; it fails t
// when there is none (a package without redistest.Main in its TestMain).
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(URLEnv)
	if u == "" {
		t.Fatalf("redistest: %s is not set: start the server with redistest.Main in TestMain", URLEnv)
	}
	return u
}

// Main is used from TestMain: it starts a shared server, exports its URL in
// URLEnv, env and each of also (REDIS_URL for runnable examples), runs the
// tests and stops it.
func Main(m *testing.M, env string, also ...string) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		// A fuzzing worker runs only the fuzz function. A redis-server of
		// its own would inherit the worker's pipes to the coordinator,
		// which then hangs instead of reporting a crashing input.
		return m.Run()
	}
	s, err := Start(0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Stop()
	for _, name := range append([]string{URLEnv, env}, also...) {
		os.Setenv(name, s.URL())
	}
	return m.Run()
}
