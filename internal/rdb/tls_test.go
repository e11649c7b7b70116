package rdb

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/internal/redisproc"
	"github.com/resque-go/resque-go/internal/redistest"
)

// tlsServer starts a redis-server that serves TLS only (--port 0
// --tls-port P), with fresh certificates; clientCerts makes it require a
// client certificate (tls-auth-clients yes).
func tlsServer(t *testing.T, clientCerts bool) (*redisproc.Server, redisproc.Certs) {
	t.Helper()
	certs, err := redisproc.WriteCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ready, err := certs.ClientTLS()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := redisproc.StartWith(redisproc.Options{TLS: ready, Args: certs.ServerArgs(clientCerts)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv, certs
}

// tlsClient is a client of url with the TLS settings of files.
func tlsClient(t *testing.T, url string, files TLSFiles) *Client {
	t.Helper()
	cfg, err := files.Config()
	if err != nil {
		t.Fatalf("%+v: %v", files, err)
	}
	c, err := New(Options{URL: url, TLS: cfg, Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatalf("New(%q): %v", url, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// wantRefused checks that err is a fatal ConnError whose one-line message
// contains want and never the password.
func wantRefused(t *testing.T, what string, err error, want string) {
	t.Helper()
	var ce *ConnError
	if !errors.As(err, &ce) || !ce.Fatal || !errors.Is(err, ErrRefused) || !IsFatal(err) || IsTransient(err) {
		t.Errorf("%s: %v; want a fatal ConnError", what, err)
		return
	}
	if msg := err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "\n") || strings.Contains(msg, "s3cret") {
		t.Errorf("%s: message %q: want %q on one line, no password", what, msg, want)
	}
}

// A rediss:// URL with the CA of the server's certificate connects and
// runs commands and scripts; the certificate must be valid for the host
// or for the server name given; another CA, no CA (the system's roots) or
// a wrong server name are refusals, not retried; skipping verification
// connects.
func TestTLSServerVerification(t *testing.T) {
	t.Parallel()
	srv, certs := tlsServer(t, false)
	ctx := context.Background()
	url := "rediss://" + srv.Addr()
	for _, files := range []TLSFiles{
		{CAFile: certs.CAFile},
		{CAFile: certs.CAFile, ServerName: redisproc.ServerName},
		{InsecureSkipVerify: true},
	} {
		c := tlsClient(t, url, files)
		if err := c.Enqueue(ctx, "tls", []byte(`{"class":"A","args":[]}`)); err != nil {
			t.Errorf("%+v: enqueue: %v", files, err)
		}
		if n, err := c.Do(ctx, "LLEN", c.Keys().Queue("tls")); err != nil || n != int64(1) {
			t.Errorf("%+v: queue length %d, %v", files, n, err)
		}
	}
	for _, tc := range []struct {
		files TLSFiles
		want  string
	}{
		{TLSFiles{CAFile: certs.OtherCAFile}, "certificate signed by unknown authority"},
		{TLSFiles{}, "certificate signed by unknown authority"},
		{TLSFiles{CAFile: certs.CAFile, ServerName: "elsewhere.test"}, "elsewhere.test"},
	} {
		wantRefused(t, "ca "+filepath.Base(tc.files.CAFile)+" name "+tc.files.ServerName,
			tlsClient(t, url, tc.files).Ping(ctx), tc.want)
	}
}

// A server that requires client certificates accepts the one its CA
// signed and refuses none or another CA's, without a retry.
func TestTLSClientCertificates(t *testing.T) {
	t.Parallel()
	srv, certs := tlsServer(t, true)
	ctx := context.Background()
	url := "rediss://" + srv.Addr()
	if err := tlsClient(t, url, TLSFiles{CAFile: certs.CAFile, CertFile: certs.ClientCert, KeyFile: certs.ClientKey}).Ping(ctx); err != nil {
		t.Errorf("client certificate of the CA: %v", err)
	}
	wantRefused(t, "no client certificate", tlsClient(t, url, TLSFiles{CAFile: certs.CAFile}).Ping(ctx), "none was given")
	wantRefused(t, "client certificate of another CA",
		tlsClient(t, url, TLSFiles{CAFile: certs.CAFile, CertFile: certs.OtherClientCert, KeyFile: certs.OtherClientKey}).Ping(ctx), "did not accept")
}

// An ACL user (redis://user:password@host) authenticates over TLS; a
// wrong password is a refusal.
func TestTLSACLUser(t *testing.T) {
	t.Parallel()
	srv, certs := tlsServer(t, false)
	ctx := context.Background()
	files := TLSFiles{CAFile: certs.CAFile}
	admin := tlsClient(t, "rediss://"+srv.Addr(), files)
	if _, err := admin.Do(ctx, "ACL", "SETUSER", "worker", "on", ">s3cret", "~*", "+@all"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Do(ctx, "ACL", "SETUSER", "default", "off"); err != nil {
		t.Fatal(err)
	}
	c := tlsClient(t, "rediss://worker:s3cret@"+srv.Addr(), files)
	if err := c.Enqueue(ctx, "acl", []byte(`{"class":"A","args":[]}`)); err != nil {
		t.Errorf("ACL user: %v", err)
	}
	if who, err := c.Do(ctx, "ACL", "WHOAMI"); err != nil || string(who.([]byte)) != "worker" {
		t.Errorf("ACL WHOAMI = %q, %v", who, err)
	}
	wantRefused(t, "wrong password", tlsClient(t, "rediss://worker:wrong@"+srv.Addr(), files).Ping(ctx), "WRONGPASS")
	wantRefused(t, "default user off", tlsClient(t, "rediss://"+srv.Addr(), files).Ping(ctx), "NOAUTH")
}

// Unusable TLS settings fail before any connection, as ErrBadTLS (fatal),
// naming the file; TLS settings with a plain URL are refused rather than
// ignored.
func TestTLSFilesErrors(t *testing.T) {
	t.Parallel()
	certs, err := redisproc.WriteCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		files TLSFiles
		want  string
	}{
		{TLSFiles{CAFile: missing}, `CA file "` + missing + `": no such file or directory`},
		{TLSFiles{CAFile: notPEM}, `CA file "` + notPEM + `" holds no PEM certificate`},
		{TLSFiles{CertFile: certs.ClientCert}, "without its key file"},
		{TLSFiles{KeyFile: certs.ClientKey}, "without its certificate file"},
		{TLSFiles{CertFile: missing, KeyFile: certs.ClientKey}, `certificate file "` + missing + `": no such file`},
		{TLSFiles{CertFile: certs.ClientCert, KeyFile: certs.ServerKey}, "private key does not match public key"},
		{TLSFiles{CertFile: notPEM, KeyFile: certs.ClientKey}, notPEM},
	} {
		_, err := tc.files.Config()
		if !errors.Is(err, ErrBadTLS) || !IsFatal(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want ErrBadTLS saying %q", tc.files, err, tc.want)
		}
	}
	if cfg, err := (TLSFiles{}).Config(); cfg != nil || err != nil {
		t.Errorf("no settings: %v, %v; want nil, nil", cfg, err)
	}
	if _, err := New(Options{URL: "redis://127.0.0.1:1", TLS: &tls.Config{}}); !errors.Is(err, ErrBadTLS) {
		t.Errorf("TLS with redis://: %v; want ErrBadTLS", err)
	}
	if _, err := New(Options{URL: "rediss://127.0.0.1:1", TLS: &tls.Config{}}); err != nil {
		t.Errorf("TLS with rediss://: %v", err)
	}
}
