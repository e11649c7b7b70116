package client_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/client"
)

// QuietProcess, ResumeProcess and StopProcess store and publish a request
// for a resque-go process named by host:pid or a worker id; a Ruby
// worker's process, an unknown one, a pool manager and a malformed name
// are refused with their errors and nothing stored.
func TestProcessRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	e.do("SADD", e.key("workers"), "h:10-1:mail", "h:10-2:mail", "ruby:9:mail")
	e.do("HSET", e.key("resque-go:heartbeat_interval"), "h:10-1:mail", "5", "h:10-2:mail", "5")
	stored := func() string {
		v, _ := e.do("GET", e.key("resque-go:control:h:10")).([]byte)
		action, _, _ := strings.Cut(string(v), " ")
		return action
	}
	for _, tc := range []struct {
		call func() error
		want string
	}{
		{func() error { return e.c.QuietProcess(ctx(), "h:10") }, "quiet"},
		{func() error { return e.c.ResumeProcess(ctx(), "h:10-2:mail") }, "resume"},
		{func() error { return e.c.StopProcess(ctx(), "h:10-1") }, "stop"},
	} {
		if err := tc.call(); err != nil {
			t.Fatalf("%s: %v", tc.want, err)
		}
		if got := stored(); got != tc.want {
			t.Errorf("stored request = %q, want %q", got, tc.want)
		}
	}
	if ttl, _ := e.do("TTL", e.key("resque-go:control:h:10")).(int64); ttl <= 0 || ttl > 600 {
		t.Errorf("stored request TTL = %d, want 1..600", ttl)
	}
	if err := e.c.StopProcess(ctx(), "ruby:9"); !errors.Is(err, client.ErrNotControllable) || !strings.HasPrefix(err.Error(), "client: stop process: ") {
		t.Errorf("Ruby worker: %v, want ErrNotControllable", err)
	}
	if n, _ := e.do("EXISTS", e.key("resque-go:control:ruby:9")).(int64); n != 0 {
		t.Error("a request to a Ruby worker was stored")
	}
	if err := e.c.QuietProcess(ctx(), "h:11"); !errors.Is(err, client.ErrNoProcess) {
		t.Errorf("unknown process: %v, want ErrNoProcess", err)
	}
	e.do("SET", e.key("resque-go:pool:h:12"), "{}")
	if err := e.c.QuietProcess(ctx(), "h:12"); !errors.Is(err, client.ErrPoolManager) {
		t.Errorf("pool manager: %v, want ErrPoolManager", err)
	}
	for _, bad := range []string{"", "h", "h:0", "h:x:q"} {
		if err := e.c.QuietProcess(ctx(), bad); !errors.Is(err, client.ErrInvalid) {
			t.Errorf("QuietProcess(%q): %v, want ErrInvalid", bad, err)
		}
	}
}
