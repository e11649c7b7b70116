package web

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"unicode"
)

// TrustedProxy signs in the users a proxy in front of the dashboard has
// signed in (oauth2-proxy, an ingress with SSO, Apache's mod_auth_*): the
// proxy passes the user's name in Header, and a request is believed only
// when it comes from one of the addresses in From, where the proxy runs.
// Its Authenticate is an Options.Authenticate.
type TrustedProxy struct {
	// Header names the user, e.g. X-Forwarded-User or X-Remote-User.
	Header string
	// From are the addresses the proxy connects from (a bare address is a
	// prefix of its whole length). A request from elsewhere is judged by
	// its own credentials: its header is ignored.
	From []netip.Prefix
	// Roles are users' roles by name; a user not named gets Default
	// (RoleNone: refused, 401).
	Roles   map[string]Role
	Default Role
}

// Authenticate returns the user a request from the proxy names in its
// header, with the user's role; ok is false for a request from elsewhere,
// without the header, with a name that is not printable text of at most
// 200 bytes, or of a user with no role.
func (p TrustedProxy) Authenticate(r *http.Request) (name string, role Role, ok bool) {
	name = strings.TrimSpace(r.Header.Get(p.Header))
	if p.Header == "" || name == "" || len(name) > 200 || strings.IndexFunc(name, func(c rune) bool { return !unicode.IsPrint(c) }) >= 0 {
		return "", RoleNone, false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return "", RoleNone, false
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return "", RoleNone, false
	}
	addr = addr.Unmap()
	trusted := false
	for _, pf := range p.From {
		if pf.Contains(addr) {
			trusted = true
			break
		}
	}
	if !trusted {
		return "", RoleNone, false
	}
	role, named := p.Roles[name]
	if !named {
		role = p.Default
	}
	return name, role, role > RoleNone
}

// ParsePrefixes reads addresses and CIDR prefixes ("10.0.0.0/8",
// "127.0.0.1", "::1"), as TrustedProxy.From takes them.
func ParsePrefixes(in []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range in {
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			if pf, err := netip.ParsePrefix(f); err == nil {
				out = append(out, pf.Masked())
				continue
			}
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, err
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		}
	}
	return out, nil
}
