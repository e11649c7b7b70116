package rdb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/FZambia/sentinel"
	"github.com/gomodule/redigo/redis"
)

// URL schemes of a master found through Redis Sentinel.
const (
	sentinelScheme    = "redis+sentinel"
	sentinelTLSScheme = "rediss+sentinel"
	// defaultSentinelPort is Sentinel's own default (redis-sentinel listens
	// on 26379).
	defaultSentinelPort = "26379"
	// roleCheckIdle is how long a pooled connection may sit idle before
	// its next borrow asks the server's ROLE again; a connection in steady
	// use is checked only after a sign of failover (see sentinelConn).
	roleCheckIdle = time.Second
)

// parseSentinelURL reads
// redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/master[/db].
// The host list is cut out before url.Parse, which takes one host only
// (and refuses a list of bracketed IPv6 addresses).
func parseSentinelURL(raw string) (endpoint, error) {
	bad := func(why string) (endpoint, error) {
		return endpoint{}, fmt.Errorf("%w %q: %s", ErrBadURL, RedactURL(raw), why)
	}
	scheme, rest, _ := strings.Cut(raw, "://")
	authority, path, _ := strings.Cut(rest, "/")
	userinfo, hosts := "", authority
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		userinfo, hosts = authority[:at+1], authority[at+1:]
	}
	u, err := url.Parse(scheme + "://" + userinfo + "sentinels/" + path)
	if err != nil {
		return bad("not a valid URL; percent-encode special characters of the password (% as %25, # as %23, / as %2F)")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return bad("query strings are not supported; a '#' or '?' in the password must be percent-encoded")
	}
	ep := endpoint{tls: scheme == sentinelTLSScheme}
	for _, h := range strings.Split(hosts, ",") {
		bracketed := strings.HasPrefix(h, "[")
		if bracketed && strings.HasSuffix(h, "]") || !bracketed && !strings.Contains(h, ":") {
			h = net.JoinHostPort(strings.Trim(h, "[]"), defaultSentinelPort)
		}
		host, port, err := net.SplitHostPort(h)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return bad("want a comma-separated list of sentinel host:port, ports from 1 to 65535 (redis+sentinel://host1:26379,host2:26379/mastername)")
		}
		ep.sentinels = append(ep.sentinels, net.JoinHostPort(host, port))
	}
	name, db, hasDB := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if name == "" {
		return bad("no master name (redis+sentinel://host1:26379,host2:26379/mastername[/db])")
	}
	ep.master = name
	if hasDB && db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 || strings.Trim(db, "0123456789") != "" {
			return bad("the database must be a number (redis+sentinel://hosts/mastername/0)")
		}
		ep.db = n
	}
	ep.user, ep.password = credentials(u.User)
	ep.url = scheme + "://" + userinfo + strings.Join(ep.sentinels, ",") + "/" + url.PathEscape(name)
	if hasDB && db != "" {
		ep.url += "/" + strconv.Itoa(ep.db)
	}
	ep.redacted = RedactURL(ep.url)
	return ep, nil
}

// sentinelDialer dials the master that the Sentinels name, through
// github.com/FZambia/sentinel (redigo's Sentinel client: it asks the
// Sentinels in turn, trying first the one that answered last).
type sentinelDialer struct {
	ep  endpoint
	opt Options
	s   *sentinel.Sentinel
	// gen counts signs of a failover met on any connection (a READONLY
	// reply, a broken connection): a pooled connection checked before the
	// latest one has its role checked again when next borrowed.
	gen atomic.Uint64
	// refused is the last refusal met dialling a Sentinel (TLS, AUTH)
	// since the last successful dial.
	refused atomic.Pointer[error]
}

func newSentinelDialer(ep endpoint, opt Options) *sentinelDialer {
	d := &sentinelDialer{ep: ep, opt: opt}
	d.s = &sentinel.Sentinel{Addrs: slices.Clone(ep.sentinels), MasterName: ep.master, Dial: d.dialSentinel}
	return d
}

// dialSentinel connects to one Sentinel, with TLS when the URL is
// rediss+sentinel:// and the sentinel password when one is given. The
// Sentinel client guidelines want a timeout on every step.
func (d *sentinelDialer) dialSentinel(addr string) (redis.Conn, error) {
	opts := append([]redis.DialOption{
		redis.DialConnectTimeout(d.opt.DialTimeout),
		redis.DialReadTimeout(d.opt.DialTimeout),
		redis.DialWriteTimeout(d.opt.DialTimeout),
	}, d.ep.tlsOptions(d.opt, nil)...)
	if d.opt.SentinelPassword != "" {
		opts = append(opts, redis.DialPassword(d.opt.SentinelPassword))
	}
	conn, err := redis.Dial("tcp", addr, opts...)
	switch {
	case err == nil:
		d.refused.Store(nil)
	case refusesConnection(err):
		d.refused.Store(&err)
	}
	return conn, err
}

// dial asks the Sentinels for the master's address (anew for every
// connection, so a connection opened after a failover goes to the new
// master), connects to it and checks that it is a master: a server the
// Sentinels still name while it is being demoted, or a replica not yet
// promoted, is a transient ConnError.
func (d *sentinelDialer) dial(ctx context.Context) (redis.Conn, error) {
	addr, err := d.s.MasterAddr()
	if err != nil {
		return nil, d.sentinelError(err)
	}
	conn, err := d.ep.dialAddr(ctx, addr, d.opt)
	if err != nil {
		return nil, err
	}
	gen := d.gen.Load()
	role, err := serverRole(conn)
	if err != nil || role != "master" {
		conn.Close()
		if err == nil {
			err = fmt.Errorf("%s, which the sentinels name master %q, answers ROLE %s (a failover in progress)", addr, d.ep.master, role)
		}
		return nil, &ConnError{Addr: d.ep.redacted, Err: err, Fatal: IsFatal(err)}
	}
	fc, ok := conn.(fullConn)
	if !ok { // redigo's connections are; a wrapper that is not is a bug
		conn.Close()
		return nil, errors.New("rdb: redigo connection lacks ConnWithContext")
	}
	return &sentinelConn{fullConn: fc, d: d, gen: gen}, nil
}

// serverRole is the first element of ROLE's reply: master, slave or
// sentinel.
func serverRole(conn redis.Conn) (string, error) {
	v, err := redis.Values(conn.Do("ROLE"))
	if err != nil {
		return "", fmt.Errorf("ROLE: %w", err)
	}
	if len(v) == 0 {
		return "", errors.New("ROLE: empty reply")
	}
	return redis.String(v[0], nil)
}

// sentinelError is a failure to learn the master's address. Sentinels
// that refuse the connection (TLS, a wrong password), that want a password
// not given, or that do not know the master name fail the same way on
// every retry. The library keeps the cause of a failed query only in its
// message, so that is where the last two are recognised.
func (d *sentinelDialer) sentinelError(err error) error {
	if refused := d.refused.Load(); refused != nil {
		return &ConnError{Addr: d.ep.redacted, Err: fmt.Errorf("sentinels refused the connection: %w", *refused), Fatal: true}
	}
	msg := err.Error()
	fatal := false
	switch {
	case strings.Contains(msg, redis.ErrNil.Error()):
		err = fmt.Errorf("no sentinel at %s knows a master named %q", strings.Join(d.ep.sentinels, ","), d.ep.master)
		fatal = true
	case strings.Contains(msg, "WRONGPASS"), strings.Contains(msg, "NOAUTH"), strings.Contains(msg, "invalid password"),
		strings.Contains(msg, "without any password configured"):
		err = fmt.Errorf("sentinels refused the connection (check the sentinel password): %w", err)
		fatal = true
	default:
		err = fmt.Errorf("ask the sentinels for master %q: %w", d.ep.master, err)
	}
	return &ConnError{Addr: d.ep.redacted, Err: err, Fatal: fatal}
}

// testOnBorrow checks, with the library's TestRole, that a pooled
// connection still talks to a master when it has been idle a while or a
// sign of failover was met since its last check; one that does not is
// closed by the pool, which then dials the current master.
func (d *sentinelDialer) testOnBorrow(c redis.Conn, lastUsed time.Time) error {
	gen := d.gen.Load()
	sc, ok := c.(*sentinelConn)
	if ok && sc.gen == gen && time.Since(lastUsed) < roleCheckIdle {
		return nil
	}
	if !sentinel.TestRole(c, "master") {
		return errNotMaster
	}
	if ok {
		sc.gen = gen
	}
	return nil
}

func (d *sentinelDialer) close() { _ = d.s.Close() }

// errNotMaster is why a pooled connection to a demoted master is dropped.
var errNotMaster = errors.New("rdb: server is no longer the master")

// fullConn is what redigo's own connections implement.
type fullConn interface {
	redis.Conn
	redis.ConnWithTimeout
	redis.ConnWithContext
}

// sentinelConn is a connection to a master found through the Sentinels.
// It watches replies for signs of a failover: READONLY (the server became
// a replica) or UNBLOCKED (a blocked command ended by that change) marks
// the connection unusable, so the pool closes it instead of keeping it,
// and makes every other pooled connection check its role when next
// borrowed; a broken connection does the latter.
type sentinelConn struct {
	fullConn
	d       *sentinelDialer
	gen     uint64 // d.gen when the role was last checked
	demoted bool
}

// failoverReplies start the error replies of a server that is no longer
// the master.
var failoverReplies = []string{"READONLY", "UNBLOCKED", "MASTERDOWN"}

func (c *sentinelConn) observe(err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	var re redis.Error
	if errors.As(err, &re) {
		for _, p := range failoverReplies {
			if strings.HasPrefix(string(re), p) {
				c.demoted = true
				c.d.gen.Add(1)
				return
			}
		}
		return
	}
	c.d.gen.Add(1)
}

// Err makes the pool close a connection to a demoted master.
func (c *sentinelConn) Err() error {
	if c.demoted {
		return errNotMaster
	}
	return c.fullConn.Err()
}

func (c *sentinelConn) Do(cmd string, args ...any) (any, error) {
	v, err := c.fullConn.Do(cmd, args...)
	c.observe(err)
	return v, err
}

func (c *sentinelConn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	v, err := c.fullConn.DoContext(ctx, cmd, args...)
	c.observe(err)
	return v, err
}

func (c *sentinelConn) DoWithTimeout(d time.Duration, cmd string, args ...any) (any, error) {
	v, err := c.fullConn.DoWithTimeout(d, cmd, args...)
	c.observe(err)
	return v, err
}

func (c *sentinelConn) Receive() (any, error) {
	v, err := c.fullConn.Receive()
	c.observe(err)
	return v, err
}

func (c *sentinelConn) ReceiveContext(ctx context.Context) (any, error) {
	v, err := c.fullConn.ReceiveContext(ctx)
	c.observe(err)
	return v, err
}

func (c *sentinelConn) ReceiveWithTimeout(d time.Duration) (any, error) {
	v, err := c.fullConn.ReceiveWithTimeout(d)
	c.observe(err)
	return v, err
}
