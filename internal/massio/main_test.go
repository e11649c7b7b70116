package massio_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/redistest/rdbtest"
)

const redisEnv = "RESQUE_GO_TEST_REDIS"

func TestMain(m *testing.M) { os.Exit(redistest.Main(m, redisEnv)) }

type env struct {
	t  testing.TB
	c  *rdb.Client
	ns string
}

func newEnv(t testing.TB) *env {
	// COST_REDIS: a server under a profiler (see rdb's BenchmarkScriptCost)
	r := rdbtest.New(t, rdb.Options{URL: os.Getenv("COST_REDIS"), MaxIdle: 64})
	return &env{t, r.Client, r.NS}
}

func (e *env) do(cmd string, args ...any) any {
	e.t.Helper()
	v, err := e.c.Do(context.Background(), cmd, args...)
	if err != nil {
		e.t.Fatalf("%s %v: %v", cmd, args, err)
	}
	return v
}

// queued is a static source's queued jobs in a pool, in the order its
// claims take them: the job its ring entry holds (an inline entry, the
// allocator's for a source that joined the ring with an empty FIFO), then
// its FIFO.
func (e *env) queued(pool, source string) []string {
	e.t.Helper()
	var out []string
	for _, entry := range e.strs("LRANGE", e.ns+":static:ring:"+pool, 0, -1) {
		if s, p, inline := protocol.ParseStaticEntry(entry); inline && s == source {
			out = append(out, p)
		}
	}
	return append(out, e.strs("LRANGE", e.ns+":static:queue:"+pool+":"+source, 0, -1)...)
}

// ring is a static pool's ring as its sources' ids, in order.
func (e *env) ring(pool string) []string {
	e.t.Helper()
	var out []string
	for _, entry := range e.strs("LRANGE", e.ns+":static:ring:"+pool, 0, -1) {
		s, _, _ := protocol.ParseStaticEntry(entry)
		out = append(out, s)
	}
	return out
}

func (e *env) strs(cmd string, args ...any) []string {
	e.t.Helper()
	var out []string
	for _, x := range e.do(cmd, args...).([]any) {
		out = append(out, string(x.([]byte)))
	}
	return out
}

func (e *env) str(cmd string, args ...any) string {
	e.t.Helper()
	switch v := e.do(cmd, args...).(type) {
	case nil:
		return ""
	case []byte:
		return string(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case string:
		return v
	default:
		e.t.Fatalf("%s: unexpected %T", cmd, v)
		return ""
	}
}

func (e *env) int(cmd string, args ...any) int64 {
	e.t.Helper()
	n, err := strconv.ParseInt(e.str(cmd, args...), 10, 64)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}
