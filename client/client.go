package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/resque-go/resque-go/internal/failureio"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/unique"
)

// Options configures a Client. Zero values mean the documented defaults.
type Options struct {
	// URL is the Redis server, in the forms REDIS_URL takes:
	// redis://[[user]:password@]host[:port][/db] (user: an ACL user),
	// rediss://... (TLS), a bare host:port (php-resque's REDIS_BACKEND
	// form), or redis+sentinel://[[user]:password@]host:port,host:port/master[/db]
	// (rediss+sentinel:// with TLS) for the master that Redis Sentinels
	// name, followed through failovers. Default redis://127.0.0.1:6379/0.
	// Special characters of the password must be percent-encoded. A
	// malformed URL makes New fail with ErrBadURL.
	URL string
	// Namespace is the key prefix shared with every Resque producer and
	// worker on this Redis; default "resque" (Ruby Resque, php-resque and
	// node-resque use it too). A trailing ":" is dropped, so php-resque's
	// PREFIX "resque:" works as is.
	Namespace string
	// DialTimeout bounds opening a connection; default 5 s.
	DialTimeout time.Duration
	// ReadTimeout bounds each command's reply; default 30 s.
	ReadTimeout time.Duration
	// MaxIdle is how many idle connections the pool keeps; default 16.
	MaxIdle int
	// TLS is the TLS configuration of a rediss:// (or rediss+sentinel://)
	// URL: RootCAs for a private CA, Certificates for a server that
	// requires a client certificate, ServerName when the certificate names
	// another host than the URL. nil verifies the server against the
	// system's roots. With a plain redis:// URL, which would not use it,
	// New fails with ErrInvalid. A server that cannot be verified or that
	// refuses the certificate is ErrRefused.
	TLS *tls.Config
	// SentinelPassword authenticates to the Sentinels of a
	// redis+sentinel:// URL (the URL's password is the master's); with
	// another URL New fails with ErrBadURL.
	SentinelPassword string
	// Now is the clock for queue_time and EnqueueIn; default time.Now.
	Now func() time.Time
}

// Client enqueues jobs and inspects queues, workers and failures of one
// namespace on one Redis server. It is safe for concurrent use; Close it
// when done.
type Client struct {
	rdb    *rdb.Client
	failed *failureio.Store
	now    func() time.Time
	ns     string
}

// Errors callers can branch on with errors.Is. Every error this package
// returns starts with "client:".
var (
	// ErrBadURL: Options.URL is malformed. The message shows the URL with
	// its password hidden.
	ErrBadURL = errors.New("client: bad redis url")
	// ErrRefused: Redis will not serve this client as configured (a wrong
	// or missing password, a database index out of range, a TLS failure):
	// retrying will not help. Other connection errors (a server that is
	// down or loading) may pass on a retry.
	ErrRefused = errors.New("client: redis refused the connection")
	// ErrInvalid: an argument is unusable (an empty class, a queue name no
	// Resque worker can listen on, args that are not a JSON array or
	// object, a negative offset...). Nothing was written.
	ErrInvalid = errors.New("client: invalid argument")
	// ErrNoSuchEntry: no failed entry at that index, or the entry read
	// there was removed or changed by someone else before it could be
	// retried or removed.
	ErrNoSuchEntry = errors.New("client: no such failed entry")
	// ErrNotRetryable: the failed entry names no queue or holds no payload.
	ErrNotRetryable = errors.New("client: failed entry has no queue or payload to retry")
	// ErrDuplicate: a Unique job's uid is taken (see Unique); nothing was
	// written. The same error as unique.ErrDuplicate.
	ErrDuplicate = unique.ErrDuplicate
)

// New returns a client. It does not connect until first used (see Ping);
// a malformed URL is an error at once.
func New(opt Options) (*Client, error) {
	if opt.DialTimeout < 0 || opt.ReadTimeout < 0 || opt.MaxIdle < 0 {
		return nil, fmt.Errorf("%w: DialTimeout, ReadTimeout and MaxIdle must not be negative", ErrInvalid)
	}
	rc, err := rdb.New(rdb.Options{URL: opt.URL, Namespace: opt.Namespace, MaxIdle: opt.MaxIdle,
		DialTimeout: opt.DialTimeout, ReadTimeout: opt.ReadTimeout, TLS: opt.TLS, SentinelPassword: opt.SentinelPassword})
	if errors.Is(err, rdb.ErrBadTLS) {
		return nil, invalidf("Options.TLS: %s", strings.TrimPrefix(err.Error(), rdb.ErrBadTLS.Error()+": "))
	}
	if err != nil {
		return nil, badURL(err)
	}
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	return &Client{rdb: rc, failed: failureio.New(rc, now), now: now, ns: rc.Keys().Namespace()}, nil
}

// Namespace is the key prefix in use, without a trailing colon.
func (c *Client) Namespace() string { return c.ns }

// Close releases the client's connections.
func (c *Client) Close() error {
	if err := c.rdb.Close(); err != nil {
		return wrap("close", err)
	}
	return nil
}

// Ping checks that Redis answers and accepts this client's credentials.
func (c *Client) Ping(ctx context.Context) error {
	return wrap("ping", c.rdb.Ping(ctx))
}

// badURL turns rdb's URL error into ours; the message keeps its reason and
// the redacted URL, and the error still matches rdb.ErrBadURL.
func badURL(err error) error {
	if !errors.Is(err, rdb.ErrBadURL) {
		return wrap("new", err)
	}
	rest, ok := strings.CutPrefix(err.Error(), rdb.ErrBadURL.Error())
	if !ok {
		rest = ": " + err.Error()
	}
	return &urlError{msg: ErrBadURL.Error() + rest, err: err}
}

type urlError struct {
	msg string
	err error
}

func (e *urlError) Error() string   { return e.msg }
func (e *urlError) Unwrap() []error { return []error{ErrBadURL, e.err} }

// opError is an error from Redis or a package below, with what the client
// was doing. It matches ErrRefused when Redis refused the connection.
type opError struct {
	op  string
	err error
}

// Error is the cause's message under our prefix. The packages below name
// their own operation ("rdb: enqueue to \"q\": ..."), so theirs replaces ours
// rather than repeat it.
func (e *opError) Error() string {
	msg := e.err.Error()
	for _, pkg := range []string{"rdb", "failure", "delayed"} {
		if rest, ok := strings.CutPrefix(msg, pkg+": "); ok {
			return "client: " + rest
		}
	}
	return "client: " + e.op + ": " + msg
}
func (e *opError) Unwrap() error { return e.err }

// Is makes refusals match ErrRefused: a failed handshake (rdb.ErrRefused)
// or a command answered NOAUTH, WRONGPASS, NOPERM...
func (e *opError) Is(target error) bool {
	return target == ErrRefused && rdb.IsFatal(e.err) && !errors.Is(e.err, rdb.ErrBadURL)
}

// wrap returns nil for nil, else err with the operation named.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return &opError{op: op, err: err}
}

// invalidf returns an ErrInvalid error.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}
