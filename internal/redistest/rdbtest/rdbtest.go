// Package rdbtest gives a test its own namespace on the package's
// redis-server (see redistest.Main) and an internal/rdb client connected
// to it, closed when the test ends.
//
// It is a package of its own because internal/rdb's own tests use
// redistest, which therefore cannot import internal/rdb.
package rdbtest

import (
	"testing"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
)

// Env is one test's namespace on the shared server.
type Env struct {
	// URL is the server's URL, NS the test's fresh namespace.
	URL, NS string
	// Client is connected to URL in NS; it is closed at the test's end.
	Client *rdb.Client
}

// New connects a client for t with opt, whose zero URL and Namespace mean
// the package's server (redistest.URL) and a fresh namespace
// (redistest.Namespace).
func New(t testing.TB, opt rdb.Options) *Env {
	t.Helper()
	if opt.URL == "" {
		opt.URL = redistest.URL(t)
	}
	if opt.Namespace == "" {
		opt.Namespace = redistest.Namespace(t)
	}
	c, err := rdb.New(opt)
	if err != nil {
		t.Fatalf("rdbtest: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return &Env{URL: opt.URL, NS: opt.Namespace, Client: c}
}
