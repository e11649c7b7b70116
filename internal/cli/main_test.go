package cli

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
)

const redisEnv = "RESQUE_GO_TEST_REDIS"

func TestMain(m *testing.M) { os.Exit(redistest.Main(m, redisEnv)) }

// cliEnv is one test's namespace on the shared server.
type cliEnv struct {
	t      *testing.T
	ns     string
	client *rdb.Client
}

func newCLIEnv(t *testing.T) *cliEnv {
	t.Helper()
	ns := redistest.Namespace(t)
	c, err := rdb.New(rdb.Options{URL: os.Getenv(redisEnv), Namespace: ns, ReadTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &cliEnv{t: t, ns: ns, client: c}
}

// redisArgs point a command at the test server and namespace.
func (e *cliEnv) redisArgs() []string {
	return []string{"--redis", os.Getenv(redisEnv), "--namespace", e.ns}
}

func (e *cliEnv) do(cmd string, args ...any) {
	e.t.Helper()
	if _, err := e.client.Do(context.Background(), cmd, args...); err != nil {
		e.t.Fatalf("%s %v: %v", cmd, args, err)
	}
}

// syncBuffer is a goroutine-safe output that reports each write.
type syncBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{writes: make(chan struct{}, 1024)} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.writes <- struct{}{}:
	default:
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// parseMu serialises flag parsing: urfave/cli v2 writes to its package-level
// HelpFlag on every run, so two apps parsing at once race. Actions run
// concurrently.
var parseMu sync.Mutex

// runCommand runs one command as Run does, with the exit code Run would
// return and the same stderr lines. It builds its own app so that a command
// can be tested before it is listed in newApp.
func runCommand(ctx context.Context, cmd *ucli.Command, args []string, stdout, stderr *syncBuffer) int {
	parseMu.Lock()
	var unlock sync.Once
	defer unlock.Do(parseMu.Unlock)
	app := baseApp(stdout, stderr, cmd)
	unlockOnAction(cmd, func() { unlock.Do(parseMu.Unlock) })
	return runApp(ctx, app, append([]string{"resque-go", cmd.Name}, args...))
}

// unlockOnAction makes every action of cmd and its subcommands call unlock
// first: parsing is over when an action runs.
func unlockOnAction(cmd *ucli.Command, unlock func()) {
	if action := cmd.Action; action != nil {
		cmd.Action = func(c *ucli.Context) error {
			unlock()
			return action(c)
		}
	}
	for _, sub := range cmd.Subcommands {
		unlockOnAction(sub, unlock)
	}
}

// hintLine is the second line every usage error (exit 2) ends with.
var hintLine = regexp.MustCompile(`(?m)^Run 'resque-go( [a-z-]+)* --help' for (usage|its commands|the commands)\.\n\z`)

// noHint is stderr without its closing hint line, if it has one: what
// tests of a usage error's one line compare.
func noHint(stderr string) string { return hintLine.ReplaceAllString(stderr, "") }
