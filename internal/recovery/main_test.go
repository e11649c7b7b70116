package recovery_test

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/recovery"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/redistest/rdbtest"
)

const redisEnv = "RESQUE_GO_TEST_REDIS"

func TestMain(m *testing.M) { os.Exit(redistest.Main(m, redisEnv)) }

// env is one test's namespace on the shared server.
type env struct {
	t *testing.T
	c *rdb.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return &env{t: t, c: rdbtest.New(t, rdb.Options{ReadTimeout: 5 * time.Second}).Client}
}

func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

// service builds a Service on the test's client, host "testhost".
func (e *env) service(cfg recovery.Config) *recovery.Service {
	e.t.Helper()
	cfg.Client = e.c
	if cfg.Hostname == "" {
		cfg.Hostname = "testhost"
	}
	l := zerolog.New(zerolog.NewTestWriter(e.t)).Level(zerolog.WarnLevel)
	cfg.Logger = &l
	s, err := recovery.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// do runs Redis commands, failing the test on an error.
func (e *env) do(cmds ...[]any) {
	e.t.Helper()
	for _, cmd := range cmds {
		if _, err := e.c.Do(e.ctx(), cmd[0].(string), cmd[1:]...); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *env) strings(cmd string, args ...any) []string {
	e.t.Helper()
	v, err := e.c.Do(e.ctx(), cmd, args...)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, m := range v.([]any) {
		out = append(out, string(m.([]byte)))
	}
	return out
}

func (e *env) get(key string) string {
	e.t.Helper()
	v, err := e.c.Do(e.ctx(), "GET", key)
	if err != nil {
		e.t.Fatal(err)
	}
	if v == nil {
		return ""
	}
	return string(v.([]byte))
}

// deadPid returns the pid of a process that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		t.Fatal(err)
	}
	return pid
}
