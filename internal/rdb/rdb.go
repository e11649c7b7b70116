// Package rdb is resque-go's only Redis client code: connection handling and
// every multi-key state change as an embedded Lua script.
package rdb

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"embed"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

//go:embed scripts/*.lua scripts/jobpath/*.lua
var scriptFS embed.FS

func loadScript(name string, keys int) *script {
	return &script{name: name, keys: keys}
}

// loadScriptWith loads name after the fragments it uses (files of local
// functions shared by several scripts).
func loadScriptWith(name string, keys int, fragments ...string) *script {
	return &script{name: name, keys: keys, fragments: fragments}
}

// script is a Lua script built (its source put together and hashed) at its
// first use, not at package initialization: every resque-go process, a
// fork-mode child's included, would otherwise pay for all of them at start
// (0.4 ms and 350 KB).
type script struct {
	name      string
	keys      int
	fragments []string
	once      sync.Once
	s         *redis.Script
}

func (s *script) get() *redis.Script {
	s.once.Do(func() {
		var src strings.Builder
		src.WriteString(keyGrammarLua())
		for _, f := range s.fragments {
			if f == massKeys {
				src.WriteString(massKeyGrammarLua())
				continue
			}
			src.WriteString(scriptSource(f))
			src.WriteString("\n")
		}
		src.WriteString(scriptSource(s.name))
		if !slices.Contains(s.fragments, massKeys) && usesMassKeyGrammar(src.String()) {
			panic("rdb: " + s.name + " names the mass key grammar: load it with loadMassScript") // a build error, not a runtime one
		}
		s.s = redis.NewScript(s.keys, src.String())
	})
	return s.s
}

func scriptSource(name string) string {
	src, err := scriptFS.ReadFile("scripts/" + name)
	if err != nil {
		panic("rdb: missing embedded script " + name) // a build error, not a runtime one
	}
	return string(src)
}

// Options configures a Client. Zero values mean the documented defaults.
type Options struct {
	// URL is redis://[[user]:password@]host[:port][/db], rediss://... (TLS),
	// a bare host:port (php-resque's REDIS_BACKEND form), or
	// redis+sentinel://[[user]:password@]host:port[,host:port...]/master[/db]
	// (rediss+sentinel:// with TLS) to connect to whichever server the
	// Sentinels name as the master (default sentinel port 26379). Default
	// 127.0.0.1:6379. A malformed URL is an error (wrapping ErrBadURL) from
	// New, never at the first connection.
	URL string
	// TLS configures the TLS of a rediss:// URL: private CAs, a client
	// certificate, a server name (TLSFiles.Config builds one from files).
	// nil verifies the server against the system's roots. It is an error
	// (ErrBadTLS) with a plain redis:// URL, which would not use it.
	TLS *tls.Config
	// SentinelPassword authenticates to the Sentinels of a
	// redis+sentinel:// URL (sentinel.conf requirepass); the URL's
	// credentials are the master's. It is an error (ErrBadURL) with any
	// other URL.
	SentinelPassword string
	// Namespace is the key prefix; default "resque".
	Namespace string
	// SeparateRegistry keeps the workers set and heartbeats under
	// <ns>:resque-go: (protocol.Keys.SeparateRegistry); always on in the
	// resque-v3 namespace.
	SeparateRegistry bool
	// MaxIdle connections kept in the pool; default 16.
	MaxIdle int
	// DialTimeout defaults to 5 s; ReadTimeout (for non-blocking commands) to 30 s.
	DialTimeout time.Duration
	ReadTimeout time.Duration
	// Unbatched runs every FinishAndClaim as its own script call. By
	// default concurrent calls of slots with the same sources share one
	// (finish_claim_batch.lua): a busy process costs Redis less per job.
	Unbatched bool
	// Events, when On, appends the start and the end of every job this
	// client claims and finishes to the events stream (docs/events.md);
	// off, the per-job scripts send and run nothing of it.
	Events EventsConfig
}

// Client talks to one Redis server within one namespace.
type Client struct {
	pool    *redis.Pool
	keys    protocol.Keys
	timeout time.Duration
	addr    string // the URL with its password hidden, for messages
	closer  func() // releases what the pool's dialer holds (the Sentinel pools)

	batch *finishBatcher // nil when Options.Unbatched
	// noCompact: a lone finish-and-claim never takes finish_claim.lua's
	// compact form; noShort: nor its short form (tests compare the forms)
	noCompact, noShort bool

	// what claims send that does not change from job to job (jobs.go)
	claimK    *claimKeys
	events    *eventsParts // nil: events off
	claimT    atomic.Pointer[claimTime]
	claimSrcs sync.Map // protocol.Source -> *claimSourceParts

	hotScripts                                                   // claim, finish, finishClaim, finishClaimBatch: hot.go
	requeue, register, unregister, prune, heartbeat, refreshLock *script
	limitsSweep, limitsLease, limitsTake                         *script
	delayed                                                      delayedScripts
	failed                                                       failedScripts
	schedules                                                    scheduleScripts
}

// ErrNotOwned is returned when a slot's worker:<id> record is gone: the job
// was recovered by a pruner (or an earlier attempt of the same call ran).
var ErrNotOwned = errors.New("rdb: worker no longer holds the job")

// ErrBadURL is wrapped by every error about a malformed Redis URL. The
// messages show the URL through RedactURL only.
var ErrBadURL = errors.New("rdb: bad redis url")

// ErrRefused matches (errors.Is) a ConnError that retrying cannot fix:
// Redis answered the connection with an error (bad credentials, a database
// index out of range...), TLS failed (an untrusted or misnamed
// certificate, a client certificate the server rejects or requires), or
// the Sentinels refused or do not know the master.
var ErrRefused = errors.New("rdb: redis refused the connection")

// ConnError is a failure to open a connection. Addr is the URL with its
// password hidden. Fatal errors (errors.Is(err, ErrRefused)) will fail the
// same way on every retry; the others (network errors, a server still
// loading its data) may pass.
type ConnError struct {
	Addr  string
	Err   error
	Fatal bool
}

func (e *ConnError) Error() string {
	if e.Fatal {
		return fmt.Sprintf("redis at %s refused the connection: %v", e.Addr, e.Err)
	}
	return fmt.Sprintf("cannot reach redis at %s: %v", e.Addr, e.Err)
}

func (e *ConnError) Unwrap() error { return e.Err }

// Is makes a fatal ConnError match ErrRefused.
func (e *ConnError) Is(target error) bool { return e.Fatal && target == ErrRefused }

// redacted stands in for passwords in messages.
const redacted = "xxxxx"

// RedactURL hides the password (and any query string) of a Redis URL so the
// result can go into messages and logs: redis://:secret@h:6379/0 becomes
// redis://:xxxxx@h:6379/0, redis://user:secret@h becomes
// redis://user:xxxxx@h (an ACL user name is not a secret), and
// redis://secret@h (redis-cli's password-only form) becomes redis://xxxxx@h.
// It works on the text, so a string that does not parse as a URL (a
// password with an unescaped '#' or '%') is redacted too: everything up to
// the last '@' of the authority is credentials.
func RedactURL(s string) string {
	scheme, rest := "", s
	if i := strings.Index(s, "://"); i >= 0 && isScheme(s[:i]) {
		// Not a scheme ("user:pa://ss@host", a bare form whose password
		// holds "://"): it is redacted with the rest.
		scheme, rest = s[:i+3], s[i+3:]
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		user, _, hasPass := strings.Cut(rest[:at], ":")
		if !hasPass || strings.ContainsAny(user, "/?#") {
			user = ""
		}
		if hasPass {
			user += ":"
		}
		rest = user + redacted + rest[at:]
	}
	if q := strings.IndexAny(rest, "?"); q >= 0 {
		rest = rest[:q+1] + redacted
	}
	return scheme + rest
}

// isScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, "+", "-" or ".").
func isScheme(s string) bool {
	for i, c := range s {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// endpoint is a parsed Redis URL: what a connection needs.
type endpoint struct {
	url      string // normalized, with the password
	redacted string // normalized, password hidden
	addr     string // host:port; "" with Sentinels
	user     string
	password string
	db       int
	tls      bool
	// sentinels (host:port) name the master, when the URL is redis+sentinel://
	sentinels []string
	master    string
}

// parseURL checks every part of a Redis URL that the connection uses, so a
// malformed one fails here rather than at each connection attempt.
func parseURL(raw string) (endpoint, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		raw = "redis://127.0.0.1:6379"
	}
	if !strings.Contains(raw, "://") {
		raw = "redis://" + raw
	}
	if scheme, _, _ := strings.Cut(raw, "://"); scheme == sentinelScheme || scheme == sentinelTLSScheme {
		return parseSentinelURL(raw)
	}
	bad := func(why string) (endpoint, error) {
		return endpoint{}, fmt.Errorf("%w %q: %s", ErrBadURL, RedactURL(raw), why)
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's own message quotes the URL (password included), so
		// it is not passed on.
		return bad("not a valid URL; percent-encode special characters of the password (% as %25, # as %23, / as %2F)")
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return bad("scheme must be redis, rediss, redis+sentinel or rediss+sentinel")
	}
	if u.Opaque != "" || u.Host == "" {
		return bad("no host (want redis://host:port/db)")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return bad("query strings are not supported (the password goes before the host: redis://:PASSWORD@host:port/db); a '#' or '?' in the password must be percent-encoded")
	}
	if u.Port() == "" && !strings.HasSuffix(u.Host, ":") {
		u.Host += ":6379"
	}
	host, port, err := net.SplitHostPort(u.Host)
	if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
		return bad("want host:port with a port from 1 to 65535")
	}
	ep := endpoint{addr: net.JoinHostPort(host, port), tls: u.Scheme == "rediss"}
	if path := strings.TrimPrefix(u.Path, "/"); path != "" {
		n, err := strconv.Atoi(path)
		if err != nil || n < 0 || strings.Trim(path, "0123456789") != "" {
			return bad("the database must be a number (redis://host:port/0)")
		}
		ep.db = n
	}
	ep.user, ep.password = credentials(u.User)
	ep.url = u.String()
	if _, err := url.Parse(ep.url); err != nil {
		// net/url writes some hosts it read in a form it refuses to read
		// again (a non-ASCII IPv6 zone: [::%25\xc4] becomes [::%25%C4]).
		return bad("the host must be printable ASCII")
	}
	ep.redacted = RedactURL(ep.url)
	return ep, nil
}

// credentials are the user and password of a URL's userinfo.
func credentials(ui *url.Userinfo) (user, password string) {
	if ui == nil {
		return "", ""
	}
	if p, ok := ui.Password(); ok {
		return ui.Username(), p
	}
	// redis-cli (and redigo's DialURL) read redis://secret@host as a
	// password.
	return "", ui.Username()
}

// NormalizeURL turns the accepted address forms into a redis://,
// rediss:// or (rediss|redis)+sentinel:// URL. Its errors wrap ErrBadURL
// and never show the password.
func NormalizeURL(raw string) (string, error) {
	ep, err := parseURL(raw)
	if err != nil {
		return "", err
	}
	return ep.url, nil
}

// dial opens a connection and checks that Redis accepts it (AUTH, SELECT,
// then PING, which answers NOAUTH when a password is missing), so that a
// refusal surfaces as a ConnError rather than at a later command.
func (ep endpoint) dial(ctx context.Context, opt Options) (redis.Conn, error) {
	return ep.dialAddr(ctx, ep.addr, opt)
}

// tlsOptions are the dial options of the endpoint's TLS (none without it).
// With asked, the connection records there whether the server asked for a
// client certificate.
func (ep endpoint) tlsOptions(opt Options, asked *atomic.Bool) []redis.DialOption {
	if !ep.tls {
		return nil
	}
	opts := []redis.DialOption{redis.DialUseTLS(true), redis.DialTLSHandshakeTimeout(opt.DialTimeout)}
	if cfg := opt.TLS; cfg != nil || asked != nil {
		if asked != nil {
			cfg = watchCertRequest(cfg, asked)
		}
		opts = append(opts, redis.DialTLSConfig(cfg))
	}
	return opts
}

// dialAddr is dial to addr, the endpoint's or the master a Sentinel named.
func (ep endpoint) dialAddr(ctx context.Context, addr string, opt Options) (redis.Conn, error) {
	var asked atomic.Bool
	opts := append([]redis.DialOption{
		redis.DialConnectTimeout(opt.DialTimeout),
		redis.DialReadTimeout(opt.ReadTimeout),
		redis.DialWriteTimeout(opt.ReadTimeout),
	}, ep.tlsOptions(opt, &asked)...)
	if ep.user != "" {
		opts = append(opts, redis.DialUsername(ep.user))
	}
	if ep.password != "" {
		opts = append(opts, redis.DialPassword(ep.password))
	}
	if ep.db != 0 {
		opts = append(opts, redis.DialDatabase(ep.db))
	}
	conn, err := redis.DialContext(ctx, "tcp", addr, opts...)
	if err == nil {
		if _, err = redis.DoContext(conn, ctx, "PING"); err != nil {
			conn.Close()
		}
	}
	if err != nil {
		fatal := refusesConnection(err)
		if asked.Load() && (closedByPeer(err) || remoteAlert(err)) {
			// TLS 1.3: the server checks the client certificate after the
			// client's side of the handshake is done, then sends an alert
			// or just closes the connection when it has none or rejects it.
			err = fmt.Errorf("the server asked for a TLS client certificate and closed the connection (%s): %w", certGiven(opt.TLS), err)
			fatal = true
		}
		return nil, &ConnError{Addr: ep.redacted, Err: err, Fatal: fatal}
	}
	return conn, nil
}

// refusesConnection reports whether a failure to connect will recur on
// every retry: Redis answered the handshake with an error (wrong password,
// NOAUTH, a database out of range, an unknown user...) other than one that
// says "not now", or TLS could not be set up (no TLS on the other side, an
// untrusted certificate, a TLS alert from the server: a client certificate
// it requires or rejects).
func refusesConnection(err error) bool {
	var re redis.Error
	if errors.As(err, &re) {
		return !isBusyReply(string(re))
	}
	var rhe tls.RecordHeaderError
	var cve *tls.CertificateVerificationError
	var uae x509.UnknownAuthorityError
	var hne x509.HostnameError
	var cie x509.CertificateInvalidError
	return remoteAlert(err) || errors.As(err, &rhe) || errors.As(err, &cve) || errors.As(err, &uae) || errors.As(err, &hne) || errors.As(err, &cie)
}

// remoteAlert reports whether err is a TLS alert from the server, which
// crypto/tls reports as a net.OpError "remote error".
func remoteAlert(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "remote error"
}

// isBusyReply reports whether a Redis error reply means "not now": the
// server is loading, busy, failing over (UNBLOCKED ends a blocking command
// when the master becomes a replica), or full of clients.
func isBusyReply(msg string) bool {
	for _, p := range []string{"LOADING", "BUSY", "READONLY", "MASTERDOWN", "UNBLOCKED", "TRYAGAIN", "CLUSTERDOWN", "NOSCRIPT", "ERR max number of clients reached"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// refusalReplies are the error replies, to any command, that say the
// connection itself is not allowed: they will not pass on a retry.
var refusalReplies = []string{"NOAUTH", "WRONGPASS", "NOPERM", "ERR invalid password", "ERR AUTH", "ERR Client sent AUTH",
	"ERR invalid DB index", "ERR DB index is out of range"}

// IsFatal reports whether err means Redis will not serve this client as
// configured, however often it retries: a malformed URL (ErrBadURL),
// unusable TLS settings (ErrBadTLS), a refused connection (ErrRefused:
// bad credentials, database out of range, TLS failure), or a command
// answered NOAUTH, WRONGPASS, NOPERM or a database-index error. A daemon
// stops on these instead of retrying.
func IsFatal(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrBadURL) || errors.Is(err, ErrBadTLS) || errors.Is(err, ErrRefused) {
		return true
	}
	var re redis.Error
	if errors.As(err, &re) {
		for _, p := range refusalReplies {
			if strings.HasPrefix(string(re), p) {
				return true
			}
		}
	}
	return false
}

// Check reports what New would refuse in opt: a malformed URL or a
// sentinel password without Sentinels (ErrBadURL), TLS settings for a
// plain URL (ErrBadTLS).
func (opt Options) Check() error {
	_, err := opt.endpoint()
	return err
}

// endpoint parses opt.URL and checks that the other settings apply to it.
func (opt Options) endpoint() (endpoint, error) {
	ep, err := parseURL(opt.URL)
	if err != nil {
		return ep, err
	}
	if opt.TLS != nil && !ep.tls {
		return ep, fmt.Errorf("%w: TLS settings are given but %s does not use TLS (use rediss://...)", ErrBadTLS, ep.redacted)
	}
	if opt.SentinelPassword != "" && ep.sentinels == nil {
		return ep, fmt.Errorf("%w %q: a sentinel password is given but the URL names no Sentinels (use redis+sentinel://...)", ErrBadURL, ep.redacted)
	}
	return ep, nil
}

// New returns a client; it does not connect until first used. What Check
// refuses is an error here.
func New(opt Options) (*Client, error) {
	ep, err := opt.endpoint()
	if err != nil {
		return nil, err
	}
	if opt.MaxIdle <= 0 {
		opt.MaxIdle = 16
	}
	if opt.DialTimeout <= 0 {
		opt.DialTimeout = 5 * time.Second
	}
	if opt.ReadTimeout <= 0 {
		opt.ReadTimeout = 30 * time.Second
	}
	pool := &redis.Pool{
		MaxIdle:     opt.MaxIdle,
		IdleTimeout: 4 * time.Minute,
		DialContext: func(ctx context.Context) (redis.Conn, error) { return ep.dial(ctx, opt) },
		TestOnBorrow: func(c redis.Conn, t time.Time) error {
			if time.Since(t) < time.Minute {
				return nil
			}
			_, err := c.Do("PING")
			return err
		},
	}
	closer := func() {}
	if ep.sentinels != nil {
		d := newSentinelDialer(ep, opt)
		pool.DialContext, pool.TestOnBorrow, closer = d.dial, d.testOnBorrow, d.close
	}
	c := &Client{
		pool:        pool,
		closer:      closer,
		keys:        newKeys(opt),
		timeout:     opt.ReadTimeout,
		addr:        ep.redacted,
		hotScripts:  newHotScripts(true, nil),
		requeue:     loadScriptWith("requeue.lua", -1, endsFragments...),
		refreshLock: loadScript("refresh_lock.lua", 1),
		register:    loadScriptWith("register.lua", 5, "iso8601.lua"),
		heartbeat:   loadScriptWith("heartbeat.lua", -1, "iso8601.lua"),
		unregister:  loadScript("unregister.lua", 8),
		prune:       loadScriptWith("prune.lua", -1, endsFragments...),
		limitsSweep: loadScriptWith("limits_sweep.lua", -1, "set_aside_key.lua", "jobpath/effect_limits.lua"),
		limitsLease: loadScriptWith("limits_lease.lua", -1, "set_aside_key.lua"),
		limitsTake:  loadScriptWith("limits_take.lua", 2, "set_aside_key.lua"),
	}
	c.claimK = newClaimKeys(c.keys)
	c.events = newEventsParts(c.keys, opt.Events)
	if !opt.Unbatched {
		c.batch = &finishBatcher{c: c}
	}
	return c, nil
}

// Addr is the server's URL with its password hidden, for messages.
func (c *Client) Addr() string { return c.addr }

func newKeys(opt Options) protocol.Keys {
	k := protocol.NewKeys(opt.Namespace)
	if opt.SeparateRegistry {
		k = k.SeparateRegistry(true)
	}
	return k
}

// Keys returns the client's key builder.
func (c *Client) Keys() protocol.Keys { return c.keys }

// Close closes the connection pool.
func (c *Client) Close() error {
	c.closer()
	return c.pool.Close()
}

// do runs one command on a pooled connection.
func (c *Client) do(ctx context.Context, cmd string, args ...any) (any, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return redis.DoContext(conn, ctx, cmd, args...)
}

// eval runs a script on a pooled connection (EVALSHA, falling back to EVAL).
func (c *Client) eval(ctx context.Context, s *script, keysAndArgs ...any) (any, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return s.get().DoContext(ctx, conn, keysAndArgs...)
}

// evalHot runs a script on the per-job path (claim, finish). It does not
// watch ctx for cancellation (that costs a goroutine per call in redigo);
// the connection's read and write timeouts bound it instead. Callers pass
// contexts that are not cancelled mid-call.
func (c *Client) evalHot(ctx context.Context, s *hotScript, keysAndArgs ...any) (any, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return s.run(c, conn, keysAndArgs)
}

// evalHotCore is evalHot in the core library (hotScript.runCore): only for
// a call that reaches no optional module.
func (c *Client) evalHotCore(ctx context.Context, s *hotScript, keysAndArgs ...any) (any, error) {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return s.runCore(c, conn, keysAndArgs)
}

// Ping checks the server answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.do(ctx, "PING")
	if err != nil {
		return fmt.Errorf("rdb: ping: %w", err)
	}
	return nil
}

// Time returns the server's clock (Redis TIME), the clock heartbeats use.
func (c *Client) Time(ctx context.Context) (time.Time, error) {
	v, err := redis.Int64s(c.do(ctx, "TIME"))
	if err != nil || len(v) != 2 {
		return time.Time{}, fmt.Errorf("rdb: time: %w", err)
	}
	return time.Unix(v[0], v[1]*1000), nil
}

// Do runs an arbitrary command (for tools and tests).
func (c *Client) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	return c.do(ctx, cmd, args...)
}

// IsTransient reports whether err is worth retrying: a network or timeout
// error, or a server reply saying the server is not ready (LOADING, BUSY,
// READONLY...). Error replies caused by the command itself are not, nor is
// a *KeyTypeError, nor anything IsFatal.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, ErrNotOwned) || errors.Is(err, ErrStillBusy) || errors.Is(err, ErrRecordRemoved) || IsFatal(err) {
		return false
	}
	var kt *KeyTypeError
	if errors.As(err, &kt) {
		return false
	}
	var re redis.Error
	if errors.As(err, &re) {
		return isBusyReply(string(re))
	}
	return true
}
