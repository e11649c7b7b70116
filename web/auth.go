package web

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// MinSecretLen is the shortest secret a User may have.
const MinSecretLen = 12

// ParseUsers reads a users file: one user a line, "NAME ROLE SECRET"
// separated by spaces or tabs, where SECRET is the secret itself or
// "sha256:" and the hex SHA-256 of it (so the file need not hold the
// secret). Blank lines and lines starting with # are skipped. An error
// names the line, never the secret.
func ParseUsers(r io.Reader) ([]User, error) {
	var out []User
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("web: users line %d: want NAME ROLE SECRET, got %d fields", n, len(f))
		}
		role, err := ParseRole(f[1])
		if err != nil {
			return nil, fmt.Errorf("web: users line %d: %w", n, err)
		}
		out = append(out, User{Name: f[0], Role: role, Secret: f[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("web: users: %w", err)
	}
	return out, nil
}

// userSet holds the SHA-256 of each secret, compared in constant time.
type userSet struct {
	users []hashedUser
}

type hashedUser struct {
	name string
	role Role
	sum  [32]byte
}

func newUserSet(users []User) (*userSet, error) {
	s := &userSet{}
	names := map[string]bool{}
	sums := map[[32]byte]bool{}
	for i, u := range users {
		if u.Name == "" || strings.ContainsAny(u.Name, ": \t\n") {
			return nil, fmt.Errorf("web: user %d: a name without spaces or ':' is required", i+1)
		}
		if u.Role < RoleViewer || u.Role > RoleAdmin {
			return nil, fmt.Errorf("web: user %s: no role", u.Name)
		}
		h := hashedUser{name: u.Name, role: u.Role}
		if hexSum, ok := strings.CutPrefix(u.Secret, "sha256:"); ok {
			b, err := hex.DecodeString(hexSum)
			if err != nil || len(b) != 32 {
				return nil, fmt.Errorf("web: user %s: sha256: wants 64 hex digits", u.Name)
			}
			copy(h.sum[:], b)
		} else {
			if len(u.Secret) < MinSecretLen {
				return nil, fmt.Errorf("web: user %s: the secret must be at least %d characters", u.Name, MinSecretLen)
			}
			h.sum = sha256.Sum256([]byte(u.Secret))
		}
		if names[u.Name] || sums[h.sum] {
			return nil, fmt.Errorf("web: user %s: names and secrets must be unique", u.Name)
		}
		names[u.Name], sums[h.sum] = true, true
		s.users = append(s.users, h)
	}
	return s, nil
}

// token finds the user whose secret is secret; every user is compared.
func (s *userSet) token(secret string) (hashedUser, bool) {
	sum := sha256.Sum256([]byte(secret))
	var found hashedUser
	ok := false
	for _, u := range s.users {
		if subtle.ConstantTimeCompare(sum[:], u.sum[:]) == 1 {
			found, ok = u, true
		}
	}
	return found, ok
}

// basic finds the user name with secret.
func (s *userSet) basic(name, secret string) (hashedUser, bool) {
	u, ok := s.token(secret)
	if !ok || subtle.ConstantTimeCompare([]byte(u.name), []byte(name)) != 1 {
		return hashedUser{}, false
	}
	return u, true
}

// who is the authenticated user of a request.
type who struct {
	Name string
	Role Role
}

type whoKey struct{}

func whoOf(r *http.Request) who {
	w, _ := r.Context().Value(whoKey{}).(who)
	return w
}

// authenticate finds the request's user: a bearer token, basic auth,
// Options.Authenticate, then Options.Anonymous. Credentials given and
// wrong are refused even when anonymous requests are allowed.
func (s *server) authenticate(r *http.Request) (who, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		if tok, ok := strings.CutPrefix(h, "Bearer "); ok {
			if u, ok := s.users.token(strings.TrimSpace(tok)); ok {
				return who{u.name, u.role}, true
			}
			return who{}, false
		}
		if name, secret, ok := r.BasicAuth(); ok {
			if u, ok := s.users.basic(name, secret); ok {
				return who{u.name, u.role}, true
			}
			return who{}, false
		}
	}
	if s.opt.Authenticate != nil {
		if name, role, ok := s.opt.Authenticate(r); ok && role > RoleNone {
			return who{name, role}, true
		}
	}
	if s.opt.Anonymous > RoleNone {
		return who{"anonymous", s.opt.Anonymous}, true
	}
	return who{}, false
}

// withAuth refuses requests without a user (401) and passes the user on
// in the context. The browser is asked for basic auth on a page load, not
// on a script's fetch, where the prompt would come out of nowhere.
func (s *server) withAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := s.authenticate(r)
		if !ok {
			if mode := r.Header.Get("Sec-Fetch-Mode"); mode == "" || mode == "navigate" {
				w.Header().Set("WWW-Authenticate", `Basic realm="resque-go", charset="UTF-8"`)
			}
			s.fail(w, r, http.StatusUnauthorized, "authentication required")
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), whoKey{}, u)))
	})
}

// may reports whether the request's user has at least role; when not, it
// answers 403.
func (s *server) may(w http.ResponseWriter, r *http.Request, role Role) bool {
	u := whoOf(r)
	if u.Role >= role {
		return true
	}
	s.fail(w, r, http.StatusForbidden, fmt.Sprintf("%s %s needs the %s role; you are %s", r.Method, s.base+strings.TrimPrefix(r.URL.Path, "/"), role, u.Role))
	return false
}
