package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestWebRefusesBadSetups(t *testing.T) {
	e := newCLIEnv(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "users")
	if err := os.WriteFile(bad, []byte("ann root not-a-role-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("ann admin shortpw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:0"}, "reachable from other machines"},
		{[]string{"--addr", ":0"}, "reachable from other machines"},
		{[]string{"--addr", "nonsense"}, "--addr"},
		{[]string{"--users-file", bad}, "line 1"},
		{[]string{"--users-file", short}, "at least 12"},
		{[]string{"--users-file", filepath.Join(dir, "none")}, "--users-file"},
		{[]string{"--base-path", "resque"}, "BasePath"},
		{[]string{"--proxy-user-header", "X-Forwarded-User"}, "needs --trusted-proxy"},
		{[]string{"--trusted-proxy", "10.0.0.0/8"}, "needs --proxy-user-header"},
		{[]string{"--proxy-user-header", "X-Forwarded-User", "--trusted-proxy", "10.0.0.0/33"}, "--trusted-proxy"},
		{[]string{"--proxy-user-header", "X-Forwarded-User", "--trusted-proxy", "10.0.0.1", "--proxy-role", "root"}, "--proxy-role"},
	} {
		stdout, stderr := newSyncBuffer(), newSyncBuffer()
		code := runCommand(context.Background(), webCommand(), append(e.redisArgs(), tc.args...), stdout, stderr)
		if code != ExitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("web %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
		if strings.Contains(stderr.String(), "not-a-role-secret") || strings.Contains(stderr.String(), "shortpw") {
			t.Errorf("web %v: a secret in %q", tc.args, stderr.String())
		}
	}
}

// Behind a proxy only: it listens on every address, believes the header
// from the proxy's address, and asks anyone else for credentials.
func TestWebServesBehindATrustedProxy(t *testing.T) {
	e := newCLIEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	done := make(chan int, 1)
	go func() {
		done <- runCommand(ctx, webCommand(), append(e.redisArgs(), "--addr", "0.0.0.0:0", "--proxy-user-header", "X-Forwarded-User",
			"--trusted-proxy", "127.0.0.1", "--proxy-role", "operator"), stdout, stderr)
	}()
	addr := regexp.MustCompile(`http://[^ /]+:(\d+)/`)
	var url string
	for url == "" {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			url = "http://127.0.0.1:" + m[1] + "/"
			break
		}
		select {
		case <-stderr.writes:
		case <-time.After(100 * time.Millisecond):
		case code := <-done:
			t.Fatalf("web exited %d: %s", code, stderr.String())
		}
	}
	get := func(user string) (int, string) {
		req, _ := http.NewRequest("GET", url+"api/whoami", nil)
		if user != "" {
			req.Header.Set("X-Forwarded-User", user)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	if code, _ := get(""); code != http.StatusUnauthorized {
		t.Errorf("without the header: %d, want 401", code)
	}
	if code, body := get("carol"); code != http.StatusOK || !strings.Contains(body, "carol") || !strings.Contains(body, "operator") {
		t.Errorf("carol through the proxy: %d %s", code, body)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("exit %d after cancel: %s", code, stderr.String())
	}
}

func TestWebServesWithUsersFromEnv(t *testing.T) {
	e := newCLIEnv(t)
	t.Setenv("RESQUE_WEB_USERS", "ann viewer ann-secret-123456;bob admin bob-secret-123456")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := newSyncBuffer(), newSyncBuffer()
	done := make(chan int, 1)
	go func() {
		done <- runCommand(ctx, webCommand(), append(e.redisArgs(), "--addr", "0.0.0.0:0", "--base-path", "/resque"), stdout, stderr)
	}()
	addr := regexp.MustCompile(`http://[^ /]+:(\d+)/resque/`)
	var url string
	for deadline := time.Now().Add(20 * time.Second); url == ""; {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			url = "http://127.0.0.1:" + m[1] + "/resque/"
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no listening line in %q", stderr.String())
		}
		select {
		case <-stderr.writes:
		case <-time.After(100 * time.Millisecond):
		case code := <-done:
			t.Fatalf("web exited %d: %s", code, stderr.String())
		}
	}
	get := func(token string) int {
		req, _ := http.NewRequest("GET", url+"api/whoami", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get(""); got != http.StatusUnauthorized {
		t.Errorf("without a token: %d, want 401", got)
	}
	if got := get("bob-secret-123456"); got != http.StatusOK {
		t.Errorf("with bob's token: %d, want 200", got)
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit %d after cancel: %s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("web did not stop")
	}
	if strings.Contains(stderr.String(), "secret-123456") {
		t.Errorf("a secret in the log: %s", stderr.String())
	}
}
