package client_test

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
)

const secret = "s3cret"

// A malformed URL fails New with ErrBadURL; the message says why and never
// shows the password.
func TestClientBadURLHidesPassword(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"redis://:" + secret + "@127.0.0.1:notaport/0",
		"redis://:" + secret + "@127.0.0.1:6379/db",
		"http://:" + secret + "@127.0.0.1:6379",
		"redis://:" + secret + "@127.0.0.1:6379/0?timeout=1",
		"redis://:" + secret + "%zz@127.0.0.1:6379",
	} {
		c, err := client.New(client.Options{URL: u})
		if err == nil {
			c.Close()
			t.Errorf("%s: no error", u)
			continue
		}
		if !errors.Is(err, client.ErrBadURL) || !strings.HasPrefix(err.Error(), "client: bad redis url ") ||
			strings.Contains(err.Error(), secret) || errors.Is(err, client.ErrRefused) {
			t.Errorf("New(%q): %v", u, err)
		}
	}
}

// A password Redis does not accept, or a database it does not have, is
// ErrRefused (retrying will not help), and nothing shows the password.
func TestClientRefusedHidesPassword(t *testing.T) {
	t.Parallel()
	addr := strings.TrimPrefix(os.Getenv(redisEnv), "redis://")
	for _, u := range []string{"redis://:" + secret + "@" + addr, "redis://" + addr + "/99"} {
		c, err := client.New(client.Options{URL: u})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		err = c.Ping(ctx())
		if !errors.Is(err, client.ErrRefused) || !strings.HasPrefix(err.Error(), "client: ping: ") || strings.Contains(err.Error(), secret) {
			t.Errorf("Ping with %s: %v", strings.ReplaceAll(u, secret, "***"), err)
		}
		_, err = c.Enqueue(ctx(), "q", "C")
		if !errors.Is(err, client.ErrRefused) || strings.Contains(err.Error(), secret) {
			t.Errorf("Enqueue with %s: %v", strings.ReplaceAll(u, secret, "***"), err)
		}
	}
}

// A server that is not there is an error, but not ErrRefused: it may come.
func TestClientUnreachableIsNotRefused(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := client.New(client.Options{URL: "redis://:" + secret + "@" + addr, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Ping(ctx())
	if err == nil || errors.Is(err, client.ErrRefused) || !strings.HasPrefix(err.Error(), "client: ping: ") || strings.Contains(err.Error(), secret) {
		t.Errorf("Ping of a closed port: %v", err)
	}
	if _, err := c.Queues(ctx()); err == nil || !strings.HasPrefix(err.Error(), "client: queues: ") {
		t.Errorf("Queues of a closed port: %v", err)
	}
}

// Options: TLS with a plain redis:// URL is refused; the namespace defaults
// to resque and loses php-resque's trailing colon.
func TestClientOptions(t *testing.T) {
	t.Parallel()
	if _, err := client.New(client.Options{TLS: &tls.Config{}}); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("TLS: %v", err)
	}
	if _, err := client.New(client.Options{DialTimeout: -time.Second}); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("negative timeout: %v", err)
	}
	for ns, want := range map[string]string{"": "resque", "resque:": "resque", "app": "app"} {
		c, err := client.New(client.Options{Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Namespace(); got != want {
			t.Errorf("Namespace %q -> %q, want %q", ns, got, want)
		}
		c.Close()
	}
	e := newEnv(t, client.Options{})
	if err := e.c.Ping(ctx()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}
