package statsio_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/redistest/rdbtest"
	"github.com/resque-go/resque-go/internal/statsio"
)

const redisEnv = "RESQUE_GO_TEST_REDIS"

// Environment of the helper process that plays a publisher killed with -9.
const (
	helperEnv      = "RESQUE_GO_STATS_HELPER" // host name to publish as
	helperNSEnv    = "RESQUE_GO_STATS_HELPER_NS"
	helperIvEnv    = "RESQUE_GO_STATS_HELPER_INTERVAL"
	helperLifetime = 60 * time.Second // the helper exits by itself after this
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(runHelperPublisher())
	}
	os.Exit(redistest.Main(m, redisEnv))
}

// runHelperPublisher runs a Publisher until it is killed (or for
// helperLifetime, so a lost helper does not outlive the test run).
func runHelperPublisher() int {
	iv, err := time.ParseDuration(os.Getenv(helperIvEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	c, err := rdb.New(rdb.Options{URL: os.Getenv(redisEnv), Namespace: os.Getenv(helperNSEnv)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	p, err := statsio.NewPublisher(statsio.PublisherConfig{Client: c, Hostname: os.Getenv(helperEnv), Interval: iv,
		WorkerIDs: []string{os.Getenv(helperEnv) + ":" + strconv.Itoa(os.Getpid()) + ":q"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 2
	}
	p.Start(context.Background())
	<-time.After(helperLifetime)
	p.Stop()
	return 0
}

// env is one test's namespace on the shared server.
type env struct {
	t      testing.TB
	client *rdb.Client
	ns     string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	r := rdbtest.New(t, rdb.Options{ReadTimeout: 5 * time.Second})
	return &env{t: t, client: r.Client, ns: r.NS}
}

func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

// key prefixes k with the test's namespace.
func (e *env) key(k string) string { return e.ns + ":" + k }

// do runs a command, failing the test on error.
func (e *env) do(cmd string, args ...any) any {
	e.t.Helper()
	v, err := e.client.Do(e.ctx(), cmd, args...)
	if err != nil {
		e.t.Fatalf("%s %v: %v", cmd, args, err)
	}
	return v
}

func (e *env) get(key string) (string, bool) {
	e.t.Helper()
	v := e.do("GET", key)
	if v == nil {
		return "", false
	}
	return string(v.([]byte)), true
}

func (e *env) pttl(key string) int64 {
	e.t.Helper()
	return e.do("PTTL", key).(int64)
}
