package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/redisproc"
	"github.com/resque-go/resque-go/internal/redistest"
)

// startArgs runs resque-go with exactly args (start adds the shared
// server's --redis).
func startArgs(t *testing.T, args ...string) *proc {
	t.Helper()
	return startArgsEnv(t, nil, args...)
}

// startArgsEnv is startArgs with env added to the test's environment.
func startArgsEnv(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	p := &proc{cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("output of %v:\n%s", args, p.out.String())
		}
	})
	return p
}

// tlsRedis is a TLS-only redis-server (--port 0 --tls-port P) that
// requires client certificates, with the ACL user worker (password pw)
// and the default user off.
func tlsRedis(t *testing.T) (*redisproc.Server, redisproc.Certs) {
	t.Helper()
	certs, err := redisproc.WriteCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ready, err := certs.ClientTLS()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := redisproc.StartWith(redisproc.Options{TLS: ready, Args: append(certs.ServerArgs(true),
		"--user", "worker", "on", ">pw", "~*", "&*", "+@all", "--user", "default", "off")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv, certs
}

// One line on stderr, without the password.
func oneLine(t *testing.T, what, stderr, want string) {
	t.Helper()
	if l := errLines(stderr); len(l) != 1 || !strings.Contains(l[0], want) || strings.Contains(stderr, ":pw@") {
		t.Errorf("%s: stderr %q; want one line saying %q, no password", what, stderr, want)
	}
}

// Every command that talks to Redis takes the TLS flags (or their
// variables) and an ACL user in the URL: enqueue and stats connect, work
// runs the job. A CA or certificate file that cannot be used is a config
// error (exit 2); a server that cannot be verified or that refuses the
// client certificate is a refusal (exit 1); each says so in one line.
func TestRedisTLSFlags(t *testing.T) {
	t.Parallel()
	srv, certs := tlsRedis(t)
	ns := redistest.Namespace(t)
	url := "rediss://worker:pw@" + srv.Addr()
	tlsArgs := []string{"--redis", url, "--namespace", ns, "--tls-ca-file", certs.CAFile,
		"--tls-cert-file", certs.ClientCert, "--tls-key-file", certs.ClientKey}
	enqueue := []string{"enqueue", "--queue", "q", "--class", "Job", "--args", "[1]"}

	if code, _, stderr := runWithEnv(t, nil, append(enqueue, tlsArgs...)...); code != 0 {
		t.Fatalf("enqueue over TLS: exit %d: %s", code, stderr)
	}
	env := []string{"REDIS_URL=" + url, "RESQUE_NAMESPACE=" + ns, "REDIS_TLS_CA_FILE=" + certs.CAFile,
		"REDIS_TLS_CERT_FILE=" + certs.ClientCert, "REDIS_TLS_KEY_FILE=" + certs.ClientKey, "REDIS_TLS_SERVER_NAME=" + redisproc.ServerName}
	if code, _, stderr := runWithEnv(t, env, append(enqueue[:len(enqueue)-1], "[2]")...); code != 0 {
		t.Fatalf("enqueue with the variables: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := runWithEnv(t, env, "stats"); code != 0 || !strings.Contains(stdout, "q") {
		t.Errorf("stats with the variables: exit %d: %s%s", code, stdout, stderr)
	}
	code, _, stderr := runWithEnv(t, nil, append(enqueue, append(tlsArgs, "--tls-insecure-skip-verify")...)...)
	if code != 0 || !strings.Contains(stderr, "TLS CERTIFICATE VERIFICATION IS OFF") {
		t.Errorf("--tls-insecure-skip-verify: exit %d, stderr %q; want 0 and the warning", code, stderr)
	}

	// work runs the three jobs, then stops on QUIT.
	out := filepath.Join(t.TempDir(), "ran")
	w := startArgs(t, append([]string{"work", "-q", "q", "--exec", "*=echo \"$RESQUE_ARGS\" >> " + out}, tlsArgs...)...)
	redistest.Eventually(t, 0, func() bool {
		b, _ := os.ReadFile(out)
		return strings.Count(string(b), "\n") == 3
	}, "the jobs to run")
	w.signal(t, syscall.SIGQUIT)
	if code := w.wait(t); code != 0 {
		t.Errorf("work exited %d", code)
	}

	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing CA file", []string{"--tls-ca-file", missing}, 2, `CA file "` + missing + `": no such file or directory`},
		{"key without certificate", []string{"--tls-cert-file", "", "--tls-key-file", certs.ClientKey}, 2, "without its certificate file"},
		{"TLS flags with redis://", []string{"--redis", "redis://worker:pw@" + srv.Addr()}, 2, "does not use TLS"},
		{"another CA", []string{"--tls-ca-file", certs.OtherCAFile}, 1, "certificate signed by unknown authority"},
		{"wrong server name", []string{"--tls-server-name", "elsewhere.test"}, 1, "elsewhere.test"},
		{"no client certificate", []string{"--tls-cert-file", "", "--tls-key-file", ""}, 1, "client certificate and closed the connection (none was given"},
		{"client certificate of another CA", []string{"--tls-cert-file", certs.OtherClientCert, "--tls-key-file", certs.OtherClientKey}, 1, "client certificate"},
		{"wrong ACL password", []string{"--redis", "rediss://worker:bad@" + srv.Addr()}, 1, "WRONGPASS"},
	} {
		args := append(append(append([]string{}, enqueue...), tlsArgs...), tc.args...)
		code, _, stderr := runWithEnv(t, nil, args...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d; stderr %q", tc.name, code, tc.code, stderr)
		}
		oneLine(t, tc.name, stderr, tc.want)
	}
	// work refuses at start, the same way.
	code, _, stderr = runWithEnv(t, nil, append([]string{"work", "-q", "q", "--exec", "*=true"}, append(tlsArgs, "--tls-ca-file", certs.OtherCAFile)...)...)
	if code != 1 {
		t.Errorf("work with another CA: exit %d, want 1; stderr %q", code, stderr)
	}
	if !strings.Contains(stderr, "certificate signed by unknown authority") || strings.Contains(stderr, ":pw@") {
		t.Errorf("work with another CA: stderr %q", stderr)
	}

}
