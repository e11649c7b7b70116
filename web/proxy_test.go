package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/web"
)

// A trusted proxy's header is believed only from its addresses; a named
// user has its role, others the default; odd names are refused.
func TestTrustedProxyAuthenticate(t *testing.T) {
	t.Parallel()
	from, err := web.ParsePrefixes([]string{"10.0.0.0/8, 192.168.1.7", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	p := web.TrustedProxy{Header: "X-Forwarded-User", From: from, Roles: map[string]web.Role{"ada": web.RoleAdmin}, Default: web.RoleViewer}
	for _, tc := range []struct {
		remote, user string
		name         string
		role         web.Role
		ok           bool
	}{
		{"10.1.2.3:4000", "ada", "ada", web.RoleAdmin, true},
		{"10.1.2.3:4000", "bob", "bob", web.RoleViewer, true},
		{"192.168.1.7:80", " bob ", "bob", web.RoleViewer, true},
		{"[::1]:80", "bob", "bob", web.RoleViewer, true},
		{"[::ffff:10.0.0.1]:80", "bob", "bob", web.RoleViewer, true},
		{"192.168.1.8:80", "ada", "", web.RoleNone, false}, // not the proxy: the header is forged
		{"11.0.0.1:80", "ada", "", web.RoleNone, false},
		{"10.1.2.3:4000", "", "", web.RoleNone, false},
		{"10.1.2.3:4000", "bad\x01name", "", web.RoleNone, false},
		{"10.1.2.3:4000", strings.Repeat("x", 201), "", web.RoleNone, false},
		{"garbage", "ada", "", web.RoleNone, false},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remote
		if tc.user != "" {
			r.Header.Set("X-Forwarded-User", tc.user)
		}
		name, role, ok := p.Authenticate(r)
		if name != tc.name || role != tc.role || ok != tc.ok {
			t.Errorf("%s %q: %q %v %v, want %q %v %v", tc.remote, tc.user, name, role, ok, tc.name, tc.role, tc.ok)
		}
	}
	p.Default = web.RoleNone
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.0.0.1:1"
	r.Header.Set("X-Forwarded-User", "bob")
	if _, _, ok := p.Authenticate(r); ok {
		t.Error("a user not named with no default role was let in")
	}
	if _, err := web.ParsePrefixes([]string{"10.0.0.0/33"}); err == nil {
		t.Error("a bad prefix was read")
	}
}

// Behind a proxy on the same host: its users sign in by its header, with
// their roles on the server's checks; without the header the dashboard
// asks for credentials; a bearer token still works.
func TestProxyUsersThroughTheDashboard(t *testing.T) {
	e := newEnv(t, func(o *web.Options) {
		p := web.TrustedProxy{Header: "X-Remote-User", From: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
			Roles: map[string]web.Role{"ada": web.RoleAdmin}, Default: web.RoleViewer}
		o.Authenticate = p.Authenticate
	})
	who := func(user string) (int, string) {
		req, _ := http.NewRequest("GET", e.base+"api/whoami", nil)
		if user != "" {
			req.Header.Set("X-Remote-User", user)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}
	if code, _ := who(""); code != http.StatusUnauthorized {
		t.Errorf("no header: %d, want 401", code)
	}
	if code, body := who("bob"); code != http.StatusOK || !strings.Contains(body, "bob") || !strings.Contains(body, "viewer") {
		t.Errorf("bob: %d %s", code, body)
	}
	if code, body := who("ada"); code != http.StatusOK || !strings.Contains(body, "admin") {
		t.Errorf("ada: %d %s", code, body)
	}
	post := func(user string) int {
		req, _ := http.NewRequest("POST", e.base+"api/queues/q/pause", nil)
		req.Header.Set("X-Remote-User", user)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("bob"); code != http.StatusForbidden {
		t.Errorf("a viewer's pause: %d, want 403", code)
	}
	if code := post("ada"); code != http.StatusOK {
		t.Errorf("an admin's pause: %d, want 200", code)
	}
	if !strings.Contains(e.get("audit", adminSecret).body, "ada") {
		t.Error("the audit log does not name the proxy's user")
	}
}
