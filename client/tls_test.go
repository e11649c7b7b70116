package client_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/internal/redisproc"
)

// Options.TLS is used for rediss:// URLs: a private CA and a client
// certificate connect to a server that requires one; a CA that did not
// sign the server's certificate, or no client certificate, is ErrRefused;
// TLS with a plain redis:// URL is ErrInvalid rather than ignored.
func TestClientTLS(t *testing.T) {
	t.Parallel()
	certs, err := redisproc.WriteCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	full, err := certs.ClientTLS() // the CA and the client certificate
	if err != nil {
		t.Fatal(err)
	}
	srv, err := redisproc.StartWith(redisproc.Options{TLS: full, Args: certs.ServerArgs(true)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	url := "rediss://" + srv.Addr()
	open := func(cfg *tls.Config) *client.Client {
		c, err := client.New(client.Options{URL: url, Namespace: "t-tls", TLS: cfg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	c := open(full)
	if _, err := c.Enqueue(ctx(), "tls", "Job", 1); err != nil {
		t.Fatalf("enqueue over TLS: %v", err)
	}
	if n, err := c.QueueSize(ctx(), "tls"); err != nil || n != 1 {
		t.Errorf("queue size %d, %v", n, err)
	}
	otherCA, err := os.ReadFile(certs.OtherCAFile)
	if err != nil {
		t.Fatal(err)
	}
	others := x509.NewCertPool()
	others.AppendCertsFromPEM(otherCA)
	for name, cfg := range map[string]*tls.Config{
		"another CA":            {RootCAs: others, Certificates: full.Certificates},
		"no client certificate": {RootCAs: full.RootCAs},
	} {
		err := open(cfg).Ping(ctx())
		if !errors.Is(err, client.ErrRefused) || !strings.HasPrefix(err.Error(), "client: ") {
			t.Errorf("%s: %v; want ErrRefused", name, err)
		}
	}
	_, err = client.New(client.Options{URL: "redis://" + srv.Addr(), TLS: full})
	if !errors.Is(err, client.ErrInvalid) || !strings.Contains(err.Error(), "rediss://") {
		t.Errorf("TLS with redis://: %v; want ErrInvalid", err)
	}
}
