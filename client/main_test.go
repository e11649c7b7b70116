package client_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/redistest/rdbtest"
)

const redisEnv = "RESQUE_GO_TEST_REDIS"

// The examples read the server's URL from REDIS_URL, as a program would,
// and use the default namespace, which no test uses.
func TestMain(m *testing.M) { os.Exit(redistest.Main(m, redisEnv, "REDIS_URL")) }

// env is one test's namespace: the public client under test and a raw
// connection to arrange and check keys.
type env struct {
	t   *testing.T
	c   *client.Client
	raw *rdb.Client
	ns  string
}

func newEnv(t *testing.T, opt client.Options) *env {
	t.Helper()
	r := rdbtest.New(t, rdb.Options{})
	opt.URL, opt.Namespace = r.URL, r.NS
	c, err := client.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &env{t: t, c: c, raw: r.Client, ns: r.NS}
}

func ctx() context.Context { return context.Background() }

func (e *env) do(cmd string, args ...any) any {
	e.t.Helper()
	v, err := e.raw.Do(ctx(), cmd, args...)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func (e *env) strs(cmd string, args ...any) []string {
	e.t.Helper()
	var out []string
	for _, x := range e.do(cmd, args...).([]any) {
		out = append(out, string(x.([]byte)))
	}
	return out
}

// key is name in the test namespace.
func (e *env) key(name string) string { return e.ns + ":" + name }

// load writes every key of a fixture dump into the test namespace.
func (e *env) load(d *fixtures.Dump) {
	e.t.Helper()
	for _, k := range d.Keys {
		name := e.key(strings.TrimPrefix(k.Key, "resque:"))
		switch k.Type {
		case "string":
			e.do("SET", name, d.String(k.Key))
		case "list":
			for _, v := range d.List(k.Key) {
				e.do("RPUSH", name, v)
			}
		case "set":
			for _, v := range d.List(k.Key) {
				e.do("SADD", name, v)
			}
		case "hash":
			for f, v := range d.Hash(k.Key) {
				e.do("HSET", name, f, v)
			}
		case "zset":
			var pairs [][2]json.Number
			if err := json.Unmarshal(k.Value, &pairs); err != nil {
				e.t.Fatal(err)
			}
			for _, p := range pairs {
				e.do("ZADD", name, p[1].String(), p[0].String())
			}
		default:
			e.t.Fatalf("fixture key %s: type %s", k.Key, k.Type)
		}
	}
}

// fixedClock is a clock for queue_time and EnqueueIn.
func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }
