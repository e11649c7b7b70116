package runtime_test

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/redistest/rdbtest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

const redisEnv = "RESQUE_GO_TEST_REDIS"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(childMain()) // this test binary re-executed as a fork-mode job process
	}
	os.Exit(redistest.Main(m, redisEnv))
}

// env is one test's namespace on the shared server.
type env struct {
	t      testing.TB
	client *rdb.Client
	reg    *worker.Registry
	ns     string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvURL(t, "")
}

// newEnvURL is newEnv on the server at url ("": the package's).
func newEnvURL(t testing.TB, url string) *env {
	t.Helper()
	r := rdbtest.New(t, rdb.Options{URL: url, ReadTimeout: 5 * time.Second})
	return &env{t: t, client: r.Client, reg: worker.NewRegistry(), ns: r.NS}
}

func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

// start runs a worker with cfg (Client and Registry filled in) and stops it
// at the end of the test.
func (e *env) start(cfg runtime.Config) *runtime.Worker {
	e.t.Helper()
	cfg.Client, cfg.Registry = e.client, e.reg
	if cfg.Hostname == "" {
		cfg.Hostname = "testhost"
	}
	if cfg.Logger == nil {
		l := zerolog.New(zerolog.NewTestWriter(e.t)).Level(zerolog.WarnLevel)
		cfg.Logger = &l
	}
	w, err := runtime.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := w.Start(e.ctx()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Shutdown)
	return w
}

func (e *env) push(queue string, payloads ...string) {
	e.t.Helper()
	for _, p := range payloads {
		if err := e.client.Enqueue(e.ctx(), queue, []byte(p)); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *env) list(key string) []string {
	e.t.Helper()
	items, err := e.client.List(e.ctx(), key, 0, -1)
	if err != nil {
		e.t.Fatal(err)
	}
	out := make([]string, len(items))
	for i, b := range items {
		out[i] = string(b)
	}
	return out
}

func (e *env) members(key string) []string {
	e.t.Helper()
	v, err := e.client.Do(e.ctx(), "SMEMBERS", key)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, m := range v.([]any) {
		out = append(out, string(m.([]byte)))
	}
	sort.Strings(out)
	return out
}

func (e *env) get(key string) string {
	e.t.Helper()
	v, err := e.client.Do(e.ctx(), "GET", key)
	if err != nil {
		e.t.Fatal(err)
	}
	if v == nil {
		return ""
	}
	return string(v.([]byte))
}

func (e *env) counter(key string) int64 {
	e.t.Helper()
	n, err := e.client.Int(e.ctx(), key)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// recorder collects finished jobs.
type recorder struct {
	mu   sync.Mutex
	done []runtime.Finished
}

func (r *recorder) add(f runtime.Finished) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = append(r.done, f)
}

func (r *recorder) all() []runtime.Finished {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]runtime.Finished(nil), r.done...)
}

func (r *recorder) waitN(t *testing.T, n int) []runtime.Finished {
	t.Helper()
	redistest.Eventually(t, 0, func() bool { return len(r.all()) >= n }, "finished jobs")
	return r.all()
}

// failedEntry decodes one failed-list entry.
type failedEntry struct {
	FailedAt    string          `json:"failed_at"`
	Payload     json.RawMessage `json:"payload"`
	Exception   string          `json:"exception"`
	Error       string          `json:"error"`
	Backtrace   []string        `json:"backtrace"`
	Worker      string          `json:"worker"`
	Queue       string          `json:"queue"`
	ProcessedBy string          `json:"processed_by"`
	RetriedBy   string          `json:"retried_by"`
}

func decodeFailed(t *testing.T, s string) failedEntry {
	t.Helper()
	var f failedEntry
	if err := json.Unmarshal([]byte(s), &f); err != nil {
		t.Fatalf("failed entry is not JSON: %v: %s", err, s)
	}
	return f
}

// noRetry makes a failing job go to failed at once, as Ruby Resque does.
var noRetry = worker.RetryPolicy{MaxAttempts: 1}
