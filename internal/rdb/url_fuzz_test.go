package rdb

import (
	"crypto/tls"
	"errors"
	"net/url"
	"strings"
	"testing"
)

// urlSeeds are the URLs of the URL tests, and forms the CLI and the pool
// file take.
var urlSeeds = []string{
	"", "localhost:6380", "redis-host", "redis://:pw@h:1/3", "rediss://user:pw@h:6390/0", "http://h:1", "redis://",
	"redis://h:1:2:3", "::", "redis://:secret@h:6379/0", "redis://user:secret@h", "rediss://user:sec:ret@h:1/2",
	"redis://secret@h", "redis://:p@ss@h:1", "redis://:sec%zzret@h:1/abc", "redis://:sec#ret@h:1", "redis://:sec/ret@h:1",
	"redis://h:1/0?password=secret", ":secret@h:1", "redis://h:6379/0", "h:6379", "not a url at all, secret@nowhere",
	"redis://:secret@h:1/-1", "redis://:secret@h:99999", "http://:secret@h:1", "redis://:secret@:1", ":secret@h:1:2",
	"redis+sentinel://:pw@h1:26379,h2:26380/mymaster/2", "rediss+sentinel://u:pw@[::1]:26379,[::2]/m", "redis+sentinel://h1,h2/",
	"redis+sentinel://:pw@h1:0/m", "redis://[::1]:6379/1", "redis://:Zq9%3AKx7@h:1", "redis://:secret@host:notaport",
	"redis://u:p@[fe80::1%25eth0]:6379", " redis://h:1 ", "redis://h:01/00", "redis+sentinel://h/m%2Fx/1",
	"[::%25\xc4]", "redis://[::%25%C4]:6379",
}

// messages are every text about opt that may reach a log or a terminal:
// the errors of Check and New (also with TLS settings and a sentinel
// password, which fail on other checks) and the client's Addr.
func messages(s string) []string {
	var out []string
	for _, opt := range []Options{{URL: s}, {URL: s, TLS: &tls.Config{}}, {URL: s, SentinelPassword: "sp"}} {
		if err := opt.Check(); err != nil {
			out = append(out, err.Error())
		}
		c, err := New(opt)
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		out = append(out, c.Addr(), (&ConnError{Addr: c.addr, Err: errors.New("x")}).Error())
		c.Close()
	}
	if _, err := NormalizeURL(s); err != nil {
		out = append(out, err.Error())
	}
	return append(out, RedactURL(s))
}

// FuzzRedisURL checks the URL parser on any text: no panic; Check, New
// and NormalizeURL agree; an accepted URL normalizes to itself and its
// Addr is its redacted form; a malformed one is an ErrBadURL.
func FuzzRedisURL(f *testing.F) {
	for _, s := range urlSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkErr := (Options{URL: s}).Check()
		c, newErr := New(Options{URL: s})
		norm, normErr := NormalizeURL(s)
		if (checkErr == nil) != (newErr == nil) || (checkErr == nil) != (normErr == nil) {
			t.Fatalf("%q: Check %v, New %v, NormalizeURL %v", s, checkErr, newErr, normErr)
		}
		if checkErr != nil {
			if !errors.Is(checkErr, ErrBadURL) || !IsFatal(checkErr) {
				t.Fatalf("%q: %v is not a fatal ErrBadURL", s, checkErr)
			}
			return
		}
		defer c.Close()
		again, err := NormalizeURL(norm)
		if err != nil || again != norm {
			t.Fatalf("%q normalizes to %q, which normalizes to %q, %v", s, norm, again, err)
		}
		if c.Addr() != RedactURL(norm) {
			t.Fatalf("%q: Addr %q, want %q", s, c.Addr(), RedactURL(norm))
		}
		// The same password in the normalized URL as in the input.
		ep1, _ := parseURL(s)
		ep2, _ := parseURL(norm)
		if ep1.password != ep2.password || ep1.user != ep2.user || ep1.db != ep2.db || ep1.addr != ep2.addr || ep1.master != ep2.master {
			t.Fatalf("%q: %+v; normalized %q: %+v", s, ep1, norm, ep2)
		}
		// A password marked by the fuzzer never shows.
		if ep1.password != "" && strings.Count(s, "Zq9") == 1 && strings.Contains(ep1.password, "Zq9") {
			for _, m := range messages(s) {
				if strings.Contains(m, "Zq9") {
					t.Fatalf("%q: message shows the password %q: %s", s, ep1.password, m)
				}
			}
		}
	})
}

// FuzzRedisURLSecret builds URLs around a password (any bytes between the
// markers Zq9 and Kx7) in every form a password can be given, valid or
// not, and checks that no message (errors, Addr, redacted forms) shows any
// part of it that touches a marker.
func FuzzRedisURLSecret(f *testing.F) {
	for i, host := range []string{"h:1", "host:notaport", "h", "[::1]:6379/2", "h1:26379,h2/master/1", "h:1/abc", "h:1?x=y", "", ":1", "h:1#f"} {
		for _, secret := range []string{"", "secret", "p@ss", "a:b", "%zz", "#", "/", "?", "://", "a b", "\n", "é\xff", "]", "%40"} {
			f.Add(uint8(i), "user", secret, host)
		}
	}
	f.Fuzz(func(t *testing.T, form uint8, user, secret, host string) {
		pw := "Zq9" + secret + "Kx7"
		for _, part := range []string{user, host} {
			if strings.Contains(part, "Zq9") || strings.Contains(part, "Kx7") {
				return
			}
		}
		schemes := []string{"redis://", "rediss://", "redis+sentinel://", "rediss+sentinel://", "", "http://", "redis:/"}
		scheme := schemes[int(form)%len(schemes)]
		var s string
		switch form / 8 % 4 {
		case 0:
			s = scheme + user + ":" + pw + "@" + host
		case 1:
			if strings.ContainsAny(secret, ":/?#@") || strings.Contains(host, "@") {
				// then the URL names no such password: it is
				// user:password (user Zq9...), or the authority ends
				// inside it (the docs ask for %2F, %3F, %23, %40)
				return
			}
			s = scheme + pw + "@" + host // redis-cli's password-only form
		case 2:
			s = scheme + ":" + pw + "@" + host
		default:
			// percent-encoded, as the docs ask
			s = scheme + url.UserPassword(user, pw).String() + "@" + host
		}
		for _, m := range messages(s) {
			if strings.Contains(m, "Zq9") || strings.Contains(m, "Kx7") {
				t.Fatalf("%q: message shows the password: %s", s, m)
			}
		}
	})
}

// A bare user:password@host whose password holds "://" once had the text
// before it taken for a scheme and shown (found by FuzzRedisURLSecret).
func TestRedactURLPasswordWithSchemeSeparator(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"user:pa://ss@h:1":        "user:xxxxx@h:1",
		":pa://ss@h:1":            ":xxxxx@h:1",
		"redis:/u:pa://ss@h:1?x":  "redis:xxxxx@h:1?xxxxx",
		"redis://u:pa://ss@h:1":   "redis://u:xxxxx@h:1",
		"redis+sentinel://:p@h/m": "redis+sentinel://:xxxxx@h/m",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
