package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redisproc"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

// certs writes throwaway certificates for one test.
func certs(t *testing.T) redisproc.Certs {
	t.Helper()
	c, err := redisproc.WriteCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The TLS and Sentinel settings are checked as the rest of the config: a
// file that cannot be used, or a setting the URL would not use, is a
// config error of one line naming it.
func TestValidateRedisConnection(t *testing.T) {
	t.Parallel()
	c := certs(t)
	missing := filepath.Join(t.TempDir(), "nope.pem")
	tlsURL := "rediss://127.0.0.1:1"
	for _, tc := range []struct {
		redis node.Redis
		want  string
	}{
		{node.Redis{URL: tlsURL, TLSCAFile: missing}, `rdb: bad tls config: CA file "` + missing + `": no such file or directory`},
		{node.Redis{URL: tlsURL, TLSCAFile: c.ClientKey}, "holds no PEM certificate"},
		{node.Redis{URL: tlsURL, TLSCertFile: c.ClientCert}, "without its key file"},
		{node.Redis{URL: tlsURL, TLSCertFile: c.ClientCert, TLSKeyFile: missing}, `key file "` + missing + `"`},
		{node.Redis{URL: "redis://127.0.0.1:1", TLSCAFile: c.CAFile}, "does not use TLS (use rediss://...)"},
		{node.Redis{URL: "redis://127.0.0.1:1", TLSInsecureSkipVerify: true}, "does not use TLS"},
		{node.Redis{URL: "redis://:pw@127.0.0.1:1", SentinelPassword: "x"}, "names no Sentinels"},
		{node.Redis{URL: "redis+sentinel://:pw@h1,h2"}, "no master name"},
		{node.Redis{URL: "http://x", TLSCAFile: missing}, "bad redis url"},
	} {
		cfg := node.Config{Queues: "a", Redis: tc.redis}
		err := cfg.Validate()
		if !errors.Is(err, node.ErrConfig) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), ":pw@") {
			t.Errorf("%+v: %v\nwant ErrConfig saying %q", tc.redis, err, tc.want)
		}
	}
	for _, r := range []node.Redis{
		{URL: tlsURL, TLSCAFile: c.CAFile, TLSCertFile: c.ClientCert, TLSKeyFile: c.ClientKey, TLSServerName: "redis.test"},
		{URL: "rediss+sentinel://u:p@h1:26379,h2/m/1", TLSCAFile: c.CAFile, SentinelPassword: "sp"},
		{URL: "redis+sentinel://h1,h2,h3/mymaster", SentinelPassword: "sp"},
	} {
		if err := (node.Config{Queues: "a", Redis: r}).Validate(); err != nil {
			t.Errorf("%+v: %v", r, err)
		}
	}
}

// The JSON names of the new settings are stable, and left out when unset
// (a child of an older build reads the config of a newer manager as long
// as it uses none of them).
func TestRedisJSON(t *testing.T) {
	t.Parallel()
	in := node.Config{Queues: "a", Redis: node.Redis{URL: "rediss://h:1", Namespace: "ns", TLSCAFile: "/ca.pem", TLSCertFile: "/c.pem",
		TLSKeyFile: "/k.pem", TLSServerName: "redis.internal", TLSInsecureSkipVerify: true, SentinelPassword: "sp"}}
	var b bytes.Buffer
	if err := in.Encode(&b); err != nil {
		t.Fatal(err)
	}
	var m struct{ Redis map[string]any }
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"url": "rediss://h:1", "namespace": "ns", "tls_ca_file": "/ca.pem", "tls_cert_file": "/c.pem",
		"tls_key_file": "/k.pem", "tls_server_name": "redis.internal", "tls_insecure_skip_verify": true, "sentinel_password": "sp"}
	if !reflect.DeepEqual(m.Redis, want) {
		t.Errorf("redis = %v\nwant %v", m.Redis, want)
	}
	out, err := node.Decode(&b)
	if err != nil || !reflect.DeepEqual(out, in) {
		t.Errorf("round trip: %+v, %v", out, err)
	}
	b.Reset()
	if err := (node.Config{Queues: "a"}).Encode(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "tls_") || strings.Contains(b.String(), "sentinel") {
		t.Errorf("unset settings in the JSON: %s", b.String())
	}
}

// A node on a TLS-only Redis that requires client certificates, as an ACL
// user, runs jobs; skipping verification is logged as a warning.
func TestNodeOverTLS(t *testing.T) {
	t.Parallel()
	c := certs(t)
	ready, err := c.ClientTLS()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := redisproc.StartWith(redisproc.Options{TLS: ready, Args: append(c.ServerArgs(true),
		"--user", "worker", "on", ">pw", "~*", "&*", "+@all", "--user", "default", "off")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	ns := "t-tls"
	url := "rediss://worker:pw@" + srv.Addr()
	files := rdb.TLSFiles{CAFile: c.CAFile, CertFile: c.ClientCert, KeyFile: c.ClientKey}
	tlsCfg, err := files.Config()
	if err != nil {
		t.Fatal(err)
	}
	producer, err := rdb.New(rdb.Options{URL: url, Namespace: ns, TLS: tlsCfg})
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	ctx := context.Background()
	for _, r := range []node.Redis{
		{URL: url, Namespace: ns, TLSCAFile: c.CAFile, TLSCertFile: c.ClientCert, TLSKeyFile: c.ClientKey},
		{URL: url, Namespace: ns, TLSCertFile: c.ClientCert, TLSKeyFile: c.ClientKey, TLSInsecureSkipVerify: true},
	} {
		log := &syncBuffer{}
		reg := worker.NewRegistry()
		ran := make(chan struct{}, 1)
		reg.Register("Job", func(context.Context, *worker.Job) error { ran <- struct{}{}; return nil })
		n, err := node.New(node.Config{Redis: r, Queues: "tls", Hostname: "tlshost"}, reg,
			node.WithLogger(zerolog.New(log)), node.WithTitle(nil))
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Start(ctx); err != nil {
			t.Fatalf("%+v: start: %v", r, err)
		}
		if err := producer.Enqueue(ctx, "tls", []byte(`{"class":"Job","args":[]}`)); err != nil {
			t.Fatal(err)
		}
		redistest.Eventually(t, 0, func() bool {
			select {
			case <-ran:
				return true
			default:
				return false
			}
		}, "the job to run")
		n.Stop()
		warned := strings.Contains(log.String(), "TLS CERTIFICATE VERIFICATION IS OFF")
		if warned != r.TLSInsecureSkipVerify {
			t.Errorf("%+v: warning logged %v; log:\n%s", r, warned, log.String())
		}
		if strings.Contains(log.String(), ":pw@") {
			t.Errorf("the log shows the password:\n%s", log.String())
		}
	}

	// Without the client certificate the server refuses the node: Start's
	// error, not a retry.
	n, err := node.New(node.Config{Redis: node.Redis{URL: url, Namespace: ns, TLSCAFile: c.CAFile}, Queues: "tls"}, nil,
		node.WithLogger(zerolog.Nop()), node.WithTitle(nil))
	if err != nil {
		t.Fatal(err)
	}
	err = n.Start(ctx)
	if !errors.Is(err, rdb.ErrRefused) || errors.Is(err, node.ErrConfig) || !strings.Contains(err.Error(), "client certificate") {
		t.Errorf("Start without a client certificate = %v; want a refusal", err)
	}
	waitDone(t, n)
}
