package bench

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/resque-go/resque-go/internal/rdb"
)

// conn is a bare RESP2 connection. The bench needs two things rdb.Client
// does not offer: the reference loop's hand-made pipelines (a Resque worker
// as Ruby's redis client runs it, not resque-go's code) and one dedicated
// monitoring connection whose every command the bench counts, so that its
// own reads can be subtracted from the server's statistics. resque-go's
// code path never uses it.
type conn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

// errNil is the nil bulk or array reply.
var errNil = errors.New("bench: nil reply")

// respError is an error reply from Redis.
type respError string

func (e respError) Error() string { return string(e) }

// dial connects to the server of a Redis URL (any form rdb accepts) and
// sends AUTH and SELECT as the URL asks.
func dial(ctx context.Context, rawURL string) (*conn, error) {
	norm, err := rdb.NormalizeURL(rawURL)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(norm)
	if err != nil {
		return nil, fmt.Errorf("%w", rdb.ErrBadURL)
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	var nc net.Conn
	if u.Scheme == "rediss" {
		td := tls.Dialer{NetDialer: &d, Config: &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}}
		nc, err = td.DialContext(ctx, "tcp", u.Host)
	} else {
		nc, err = d.DialContext(ctx, "tcp", u.Host)
	}
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", rdb.RedactURL(norm), err)
	}
	c := &conn{nc: nc, r: bufio.NewReaderSize(nc, 64<<10), w: bufio.NewWriterSize(nc, 64<<10)}
	if u.User != nil {
		// As rdb reads it: redis://secret@host is a password alone.
		user, pass := u.User.Username(), ""
		if p, ok := u.User.Password(); ok {
			pass = p
		} else {
			user, pass = "", user
		}
		args := []string{"AUTH", pass}
		if user != "" {
			args = []string{"AUTH", user, pass}
		}
		if _, err := c.do(args...); err != nil {
			c.close()
			return nil, fmt.Errorf("auth at %s: %w", rdb.RedactURL(norm), err)
		}
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" && db != "0" {
		if _, err := c.do("SELECT", db); err != nil {
			c.close()
			return nil, fmt.Errorf("select %s at %s: %w", db, rdb.RedactURL(norm), err)
		}
	}
	return c, nil
}

func (c *conn) close() { _ = c.nc.Close() }

// send buffers one command; flush sends what is buffered.
func (c *conn) send(args ...string) {
	c.w.WriteByte('*')
	c.w.WriteString(strconv.Itoa(len(args)))
	c.w.WriteString("\r\n")
	for _, a := range args {
		c.w.WriteByte('$')
		c.w.WriteString(strconv.Itoa(len(a)))
		c.w.WriteString("\r\n")
		c.w.WriteString(a)
		c.w.WriteString("\r\n")
	}
}

func (c *conn) flush() error {
	_ = c.nc.SetDeadline(time.Now().Add(time.Minute))
	return c.w.Flush()
}

// do sends one command and reads its reply.
func (c *conn) do(args ...string) (any, error) {
	c.send(args...)
	if err := c.flush(); err != nil {
		return nil, err
	}
	return c.receive()
}

// receive reads one reply: string (simple or bulk), int64, []any, or nil
// with errNil. An error reply is a respError.
func (c *conn) receive() (any, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return nil, fmt.Errorf("malformed reply %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return body, nil
	case '-':
		return nil, respError(body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, fmt.Errorf("malformed bulk length %q", body)
		}
		if n < 0 {
			return nil, errNil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return nil, fmt.Errorf("malformed array length %q", body)
		}
		if n < 0 {
			return nil, errNil
		}
		out := make([]any, n)
		for i := range out {
			v, err := c.receive()
			if err != nil && !errors.Is(err, errNil) {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown reply type %q", kind)
}

// str and integer convert replies.
func str(v any, err error) (string, error) {
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("want a string reply, got %T", v)
	}
	return s, nil
}

func integer(v any, err error) (int64, error) {
	if errors.Is(err, errNil) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	switch n := v.(type) {
	case int64:
		return n, nil
	case string:
		return strconv.ParseInt(n, 10, 64)
	}
	return 0, fmt.Errorf("want an integer reply, got %T", v)
}
