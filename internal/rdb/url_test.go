package rdb

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/redistest"
)

func TestNormalizeURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                          "redis://127.0.0.1:6379",
		"localhost:6380":            "redis://localhost:6380",
		"redis-host":                "redis://redis-host:6379",
		"redis://:pw@h:1/3":         "redis://:pw@h:1/3",
		"rediss://user:pw@h:6390/0": "rediss://user:pw@h:6390/0",
	} {
		got, err := NormalizeURL(in)
		if err != nil || got != want {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"http://h:1", "redis://", "redis://h:1:2:3", "::"} {
		if got, err := NormalizeURL(bad); err == nil {
			t.Errorf("NormalizeURL(%q) = %q, want an error", bad, got)
		}
	}
}

func TestIsTransient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{ErrNotOwned, false},
		{ErrStillBusy, false},
		{io.EOF, true},
		{errors.New("dial tcp: connection refused"), true},
		{redis.Error("LOADING Redis is loading the dataset in memory"), true},
		{redis.Error("READONLY You can't write against a read only replica."), true},
		{redis.Error("ERR Error running script"), false},
		{redis.Error("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
	} {
		if got := IsTransient(tc.err); got != tc.want {
			t.Errorf("IsTransient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"redis://:secret@h:6379/0":         "redis://:xxxxx@h:6379/0",
		"redis://user:secret@h":            "redis://user:xxxxx@h",
		"rediss://user:sec:ret@h:1/2":      "rediss://user:xxxxx@h:1/2",
		"redis://secret@h":                 "redis://xxxxx@h",
		"redis://:p@ss@h:1":                "redis://:xxxxx@h:1",
		"redis://:sec%zzret@h:1/abc":       "redis://:xxxxx@h:1/abc",
		"redis://:sec#ret@h:1":             "redis://:xxxxx@h:1",
		"redis://:sec/ret@h:1":             "redis://:xxxxx@h:1",
		"redis://h:1/0?password=secret":    "redis://h:1/0?xxxxx",
		":secret@h:1":                      ":xxxxx@h:1",
		"redis://h:6379/0":                 "redis://h:6379/0",
		"h:6379":                           "h:6379",
		"":                                 "",
		"not a url at all, secret@nowhere": "xxxxx@nowhere",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// A malformed URL fails in New (not at each connection) with ErrBadURL,
// and the message never shows the password.
func TestBadURLsHideThePassword(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		"redis://:secret@h:1/abc",
		"redis://:secret@h:1/-1",
		"redis://:sec%zzret@h:1",
		"redis://:sec#ret@h:1",
		"redis://:secret@h:1/0?db=2",
		"redis://:secret@h:99999",
		"http://:secret@h:1",
		"redis://:secret@:1",
		":secret@h:1:2",
	} {
		_, err := New(Options{URL: bad})
		if !errors.Is(err, ErrBadURL) || !IsFatal(err) || IsTransient(err) {
			t.Errorf("New(%q) = %v; want an ErrBadURL, fatal", bad, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "secret") || strings.Contains(msg, "sec%zzret") || strings.Contains(msg, "ret@") {
			t.Errorf("New(%q): message shows the password: %s", bad, msg)
		}
	}
}

func TestIsFatal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{io.EOF, false},
		{errors.New("dial tcp: connection refused"), false},
		{&ConnError{Addr: "redis://h:1", Err: errors.New("dial tcp: connection refused")}, false},
		{&ConnError{Addr: "redis://h:1", Err: redis.Error("LOADING Redis is loading the dataset in memory")}, false},
		{&ConnError{Addr: "redis://h:1", Err: redis.Error("WRONGPASS invalid username-password pair"), Fatal: true}, true},
		{fmt.Errorf("rdb: x: %w", &ConnError{Addr: "redis://h:1", Err: tls.RecordHeaderError{Msg: "tls: first record does not look like a TLS handshake"}, Fatal: true}), true},
		{fmt.Errorf("rdb: get: %w", redis.Error("NOAUTH Authentication required.")), true},
		{redis.Error("NOPERM this user has no permissions to run the 'evalsha' command"), true},
		{redis.Error("ERR invalid password"), true},
		{redis.Error("ERR DB index is out of range"), true},
		{redis.Error("ERR invalid DB index"), true},
		{redis.Error("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
		{fmt.Errorf("%w %q: no host", ErrBadURL, "redis://"), true},
	} {
		if got := IsFatal(tc.err); got != tc.want {
			t.Errorf("IsFatal(%v) = %v, want %v", tc.err, got, tc.want)
		}
		if tc.want && IsTransient(tc.err) {
			t.Errorf("IsTransient(%v) = true for a fatal error", tc.err)
		}
	}
}

func TestDialClassifiesRefusals(t *testing.T) {
	t.Parallel()
	srv, err := redistest.Start(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	ctx := context.Background()
	admin, err := New(Options{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Do(ctx, "CONFIG", "SET", "requirepass", "s3cret"); err != nil {
		t.Fatal(err)
	}
	admin.Close()
	ping := func(url string) error {
		c, err := New(Options{URL: url, DialTimeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("New(%q): %v", url, err)
		}
		defer c.Close()
		return c.Ping(ctx)
	}
	if err := ping("redis://:s3cret@" + srv.Addr()); err != nil {
		t.Fatalf("right password: %v", err)
	}
	for _, tc := range []struct{ url, reply string }{
		{"redis://:wrong@" + srv.Addr(), "WRONGPASS"},
		{"redis://wrong@" + srv.Addr(), "WRONGPASS"},
		{"redis://nobody:s3cret@" + srv.Addr(), "WRONGPASS"},
		{srv.URL(), "NOAUTH"},
		{"redis://:s3cret@" + srv.Addr() + "/99", "DB index is out of range"},
	} {
		err := ping(tc.url)
		var ce *ConnError
		if !errors.As(err, &ce) || !ce.Fatal || !errors.Is(err, ErrRefused) || !IsFatal(err) || IsTransient(err) {
			t.Errorf("%s: %v; want a fatal ConnError", tc.url, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.reply) || !strings.Contains(msg, srv.Addr()) || strings.Contains(msg, "s3cret") || strings.Contains(msg, "wrong") {
			t.Errorf("%s: message %q: want the reply %q and the address, no password", tc.url, msg, tc.reply)
		}
	}

	// Nothing listening: worth retrying, not fatal.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	l.Close()
	err = ping("redis://:s3cret@" + down)
	var ce *ConnError
	if !errors.As(err, &ce) || ce.Fatal || IsFatal(err) || !IsTransient(err) || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("redis down: %v; want a transient ConnError without the password", err)
	}
}
