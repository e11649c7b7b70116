package rdb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/redisproc"
	"github.com/resque-go/resque-go/internal/redistest"
)

func TestParseSentinelURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, url       string
		sentinels     []string
		master        string
		db            int
		user, pass    string
		tls           bool
		redactedCheck string
	}{
		{in: "redis+sentinel://h1:26380,h2:26381/mymaster", url: "redis+sentinel://h1:26380,h2:26381/mymaster",
			sentinels: []string{"h1:26380", "h2:26381"}, master: "mymaster"},
		{in: "redis+sentinel://h1,h2/m/3", url: "redis+sentinel://h1:26379,h2:26379/m/3",
			sentinels: []string{"h1:26379", "h2:26379"}, master: "m", db: 3},
		{in: "rediss+sentinel://worker:p%40ss@[::1]:1,[::1]/m/", url: "rediss+sentinel://worker:p%40ss@[::1]:1,[::1]:26379/m",
			sentinels: []string{"[::1]:1", "[::1]:26379"}, master: "m", user: "worker", pass: "p@ss", tls: true},
		{in: "redis+sentinel://:secret@h/m", url: "redis+sentinel://:secret@h:26379/m",
			sentinels: []string{"h:26379"}, master: "m", pass: "secret"},
	} {
		ep, err := parseURL(tc.in)
		if err != nil {
			t.Errorf("parseURL(%q): %v", tc.in, err)
			continue
		}
		if ep.url != tc.url || !slices.Equal(ep.sentinels, tc.sentinels) || ep.master != tc.master || ep.db != tc.db ||
			ep.user != tc.user || ep.password != tc.pass || ep.tls != tc.tls || ep.addr != "" {
			t.Errorf("parseURL(%q) = %+v", tc.in, ep)
		}
		if tc.pass != "" && strings.Contains(ep.redacted, tc.pass) {
			t.Errorf("parseURL(%q): redacted %q shows the password", tc.in, ep.redacted)
		}
	}
	for _, bad := range []string{
		"redis+sentinel://:secret@h1:1,h2:2",
		"redis+sentinel://:secret@h1:1,h2:2/",
		"redis+sentinel://:secret@h1:1,,h2:2/m",
		"redis+sentinel://:secret@h1:99999/m",
		"redis+sentinel://:secret@h1:1/m/x",
		"redis+sentinel://:secret@h1:1/m?db=1",
		"redis+sentinel://:secret@/m",
		"redis+sentinel://:sec%zzret@h1/m",
	} {
		_, err := New(Options{URL: bad})
		if !errors.Is(err, ErrBadURL) || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "sec%zzret") {
			t.Errorf("New(%q) = %v; want ErrBadURL without the password", bad, err)
		}
	}
	if _, err := New(Options{URL: "redis://h:1", SentinelPassword: "x"}); !errors.Is(err, ErrBadURL) {
		t.Errorf("sentinel password without sentinels: %v; want ErrBadURL", err)
	}
}

// sentinelGroup is a primary, its replica and three Sentinels watching
// them (quorum 2), on free local ports.
type sentinelGroup struct {
	primary, replica *redisproc.Server
	sentinels        []*redisproc.Server
	url              string // redis+sentinel:// URL of the group
}

const sentinelMaster = "resque-test"

func startSentinelGroup(t *testing.T, sentinelPass string) *sentinelGroup {
	t.Helper()
	if !redisproc.SentinelSupport() {
		t.Skip("redis-server cannot run as a Sentinel (--sentinel): no Sentinel test")
	}
	g := &sentinelGroup{}
	var err error
	// no 5 s delay before the replica's first sync (repl-diskless-sync-delay)
	if g.primary, err = redisproc.StartWith(redisproc.Options{Args: []string{"--repl-diskless-sync-delay", "0"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.primary.Stop)
	if g.replica, err = redisproc.StartWith(redisproc.Options{Args: []string{"--replicaof", "127.0.0.1", strconv.Itoa(g.primary.Port)}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.replica.Stop)
	conf := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d 2\nsentinel down-after-milliseconds %[1]s 1000\nsentinel failover-timeout %[1]s 5000\n",
		sentinelMaster, g.primary.Port)
	var args []string
	if sentinelPass != "" {
		args = []string{"--requirepass", sentinelPass}
		conf += fmt.Sprintf("sentinel sentinel-pass %s\n", sentinelPass)
	}
	var addrs []string
	for range 3 {
		s, err := redisproc.StartWith(redisproc.Options{Config: conf, Args: append([]string{"--sentinel"}, args...)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		g.sentinels = append(g.sentinels, s)
		addrs = append(addrs, s.Addr())
	}
	g.url = "redis+sentinel://" + strings.Join(addrs, ",") + "/" + sentinelMaster
	// Ready when every Sentinel knows the replica and the two others
	// (learnt through the primary's hello channel, every 2 s).
	redistest.Eventually(t, 0, func() bool {
		if info, err := redis.String(redisDo(t, g.replica.Addr(), "INFO", "replication")); err != nil || !strings.Contains(info, "master_link_status:up") {
			return false
		}
		for _, s := range g.sentinels {
			c, err := redis.Dial("tcp", s.Addr(), redis.DialPassword(sentinelPass), redis.DialReadTimeout(time.Second))
			if err != nil {
				return false
			}
			others, err1 := redis.Values(c.Do("SENTINEL", "SENTINELS", sentinelMaster))
			replicas, err2 := redis.Values(c.Do("SENTINEL", "REPLICAS", sentinelMaster))
			c.Close()
			if err1 != nil || err2 != nil || len(others) != 2 || len(replicas) != 1 {
				return false
			}
		}
		return true
	}, "the replica to sync and the sentinels to find it and each other")
	return g
}

// port is the port a client's connections reach, by CLIENT INFO's laddr
// (the server's side).
func port(t *testing.T, c *Client) string {
	t.Helper()
	v, err := redis.String(c.Do(context.Background(), "CLIENT", "INFO"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(v) {
		if addr, ok := strings.CutPrefix(f, "laddr="); ok {
			return addr[strings.LastIndex(addr, ":")+1:]
		}
	}
	t.Fatalf("no laddr in %q", v)
	return ""
}

// A redis+sentinel:// client writes to the master the Sentinels name.
// After a failover that demotes the old master (still running, now a
// replica), pooled connections to it are dropped (READONLY marks them,
// the role check on borrow catches the idle ones) and new ones go to the
// new master; nothing written before is lost (the failover waits for the
// replica to catch up).
func TestSentinelFollowsFailover(t *testing.T) {
	t.Parallel()
	g := startSentinelGroup(t, "")
	ctx := context.Background()
	c, err := New(Options{URL: g.url, Namespace: redistest.Namespace(t), DialTimeout: time.Second, ReadTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := port(t, c); got != strconv.Itoa(g.primary.Port) {
		t.Fatalf("connected to port %s, want the primary's %d", got, g.primary.Port)
	}
	// Hold several connections so that the pool keeps idle ones to the
	// old master.
	var held []redis.Conn
	for range 4 {
		conn, err := c.pool.GetContext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Do("PING"); err != nil {
			t.Fatal(err)
		}
		held = append(held, conn)
	}
	for _, conn := range held {
		conn.Close()
	}
	for i := range 20 {
		if err := c.Enqueue(ctx, "q", []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := redis.Int(c.Do(ctx, "WAIT", 1, 1000)); err != nil || n != 1 {
		t.Fatalf("WAIT = %d, %v; want the replica's acknowledgement", n, err)
	}
	if _, err := redis.String(redisDo(t, g.sentinels[0].Addr(), "SENTINEL", "FAILOVER", sentinelMaster)); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool {
		return serverRoleAt(t, g.replica.Addr()) == "master"
	}, "the replica to become master")
	// Until the Sentinels reconfigure the old master (they look every
	// 10 s) it still takes writes, which its demotion then drops:
	// Sentinel's known window, which a crashed master does not have. The
	// test demotes it at once, as the Sentinels will, right after a write
	// so that the connection used is fresh and meets READONLY.
	if err := c.Enqueue(ctx, "q", []byte("19b")); err != nil {
		t.Fatal(err)
	}
	if _, err := redisDo(t, g.primary.Addr(), "REPLICAOF", "127.0.0.1", g.replica.Port); err != nil {
		t.Fatal(err)
	}
	// Writes go on, through the new master: the pooled connections to the
	// old one meet READONLY (a transient error) or fail the role check.
	var failures int
	for i := 20; i < 40; i++ {
		for err := c.Enqueue(ctx, "q", []byte(strconv.Itoa(i))); err != nil; err = c.Enqueue(ctx, "q", []byte(strconv.Itoa(i))) {
			if !IsTransient(err) {
				t.Fatalf("enqueue %d: %v; want success or a transient error", i, err)
			}
			if failures++; failures > 200 {
				t.Fatalf("enqueue %d still failing: %v", i, err)
			}
			<-time.After(50 * time.Millisecond)
		}
	}
	t.Logf("writes failed %d times during the failover", failures)
	if got := port(t, c); got != strconv.Itoa(g.replica.Port) {
		t.Errorf("after the failover: port %s, want the new master's %d", got, g.replica.Port)
	}
	n, err := redis.Int(c.Do(ctx, "LLEN", c.Keys().Queue("q")))
	if err != nil || n != 40 {
		t.Errorf("queue holds %d jobs (%v), want 40 (the one written to the old master after the failover is lost)", n, err)
	}
}

// serverRoleAt is the ROLE of the server at addr ("" when it does not
// answer).
func serverRoleAt(t *testing.T, addr string) string {
	t.Helper()
	c, err := redis.Dial("tcp", addr, redis.DialReadTimeout(2*time.Second))
	if err != nil {
		return ""
	}
	defer c.Close()
	role, _ := serverRole(c)
	return role
}

// redisDo runs one command on addr.
func redisDo(t *testing.T, addr string, cmd string, args ...any) (any, error) {
	t.Helper()
	c, err := redis.Dial("tcp", addr, redis.DialReadTimeout(2*time.Second))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Do(cmd, args...)
}

// Sentinels that require a password: the right one connects, a wrong or
// missing one is a refusal; a master name no Sentinel knows is a refusal
// too. Unreachable Sentinels are worth retrying.
func TestSentinelRefusals(t *testing.T) {
	t.Parallel()
	g := startSentinelGroup(t, "s3cret")
	ctx := context.Background()
	ping := func(url, pass string) error {
		c, err := New(Options{URL: url, SentinelPassword: pass, DialTimeout: time.Second})
		if err != nil {
			t.Fatalf("New(%q): %v", url, err)
		}
		defer c.Close()
		return c.Ping(ctx)
	}
	if err := ping(g.url, "s3cret"); err != nil {
		t.Errorf("right sentinel password: %v", err)
	}
	wantRefused(t, "wrong sentinel password", ping(g.url, "wrong"), "sentinel")
	wantRefused(t, "no sentinel password", ping(g.url, ""), "sentinel")
	unknown := strings.TrimSuffix(g.url, sentinelMaster) + "nosuchmaster"
	wantRefused(t, "unknown master", ping(unknown, "s3cret"), `knows a master named "nosuchmaster"`)

	down := "redis+sentinel://" + closedAddr(t) + "/m"
	err := ping(down, "")
	var ce *ConnError
	if !errors.As(err, &ce) || ce.Fatal || IsFatal(err) || !IsTransient(err) {
		t.Errorf("sentinels down: %v; want a transient ConnError", err)
	}
}

// closedAddr is a local address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// The replies of a server that stops being the master are transient, and
// mark the connection so the pool drops it.
func TestFailoverRepliesAreTransient(t *testing.T) {
	t.Parallel()
	d := &sentinelDialer{}
	for _, reply := range []string{
		"READONLY You can't write against a read only replica.",
		"UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)",
		"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
	} {
		if err := redis.Error(reply); !IsTransient(err) || IsFatal(err) {
			t.Errorf("%s: transient %v, fatal %v", reply, IsTransient(err), IsFatal(err))
		}
		c := &sentinelConn{d: d}
		gen := d.gen.Load()
		c.observe(fmt.Errorf("rdb: x: %w", redis.Error(reply)))
		if !errors.Is(c.Err(), errNotMaster) || d.gen.Load() == gen {
			t.Errorf("%s: conn err %v, generation %d (was %d)", reply, c.Err(), d.gen.Load(), gen)
		}
	}
	c := &sentinelConn{d: d}
	gen := d.gen.Load()
	c.observe(redis.Error("WRONGTYPE Operation against a key holding the wrong kind of value"))
	c.observe(context.Canceled)
	if c.demoted || d.gen.Load() != gen {
		t.Error("a command's own error or a cancellation counted as a sign of failover")
	}
}

// rediss+sentinel:// talks TLS to the Sentinels and to the master, with
// the same settings.
func TestSentinelOverTLS(t *testing.T) {
	t.Parallel()
	if !redisproc.SentinelSupport() {
		t.Skip("redis-server cannot run as a Sentinel (--sentinel)")
	}
	master, certs := tlsServer(t, false)
	ready, err := certs.ClientTLS()
	if err != nil {
		t.Fatal(err)
	}
	s, err := redisproc.StartWith(redisproc.Options{TLS: ready, Config: fmt.Sprintf("sentinel monitor m 127.0.0.1 %d 1\n", master.Port),
		Args: append([]string{"--sentinel", "--tls-replication", "yes"}, certs.ServerArgs(false)...)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	c := tlsClient(t, "rediss+sentinel://"+s.Addr()+"/m", TLSFiles{CAFile: certs.CAFile})
	if got := port(t, c); got != strconv.Itoa(master.Port) {
		t.Errorf("connected to port %s, want the master's %d", got, master.Port)
	}
	wantRefused(t, "another CA", tlsClient(t, "rediss+sentinel://"+s.Addr()+"/m", TLSFiles{CAFile: certs.OtherCAFile}).Ping(context.Background()),
		"sentinels refused the connection: tls: failed to verify certificate")
}
