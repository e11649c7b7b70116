package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/web"
)

func webCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "web",
		Usage:     "serve the dashboard: queues, failed jobs, workers, Redis; a JSON API under /api/",
		ArgsUsage: " ",
		Description: "Without credentials it listens only on a loopback address, where every request may do\n" +
			"everything. With --users-file, or the same lines in the environment variable " + webUsersEnv + "\n" +
			"(separated by newlines or ';'; NAME ROLE SECRET, ROLE viewer, operator or admin, SECRET at least\n" +
			"12 characters or sha256:HEX of it), a browser signs in with basic auth and a script sends\n" +
			"Authorization: Bearer SECRET. Behind a proxy that signs users in, --proxy-user-header names\n" +
			"the header it passes the user in, --trusted-proxy the addresses it connects from (a user\n" +
			"named in the users has that role, others --proxy-role). See docs/dashboard.md.",
		Flags: append(redisFlags(),
			&ucli.StringFlag{Name: "addr", Usage: "address to listen on (a non-loopback one needs credentials)", Value: "127.0.0.1:5678", EnvVars: []string{"RESQUE_WEB_ADDR"}},
			&ucli.StringFlag{Name: "base-path", Usage: "path the dashboard is served under (behind a proxy: the proxy's path)", Value: "/", EnvVars: []string{"RESQUE_WEB_BASE_PATH"}},
			&ucli.StringFlag{Name: "users-file", Usage: "file of users, one per line: NAME ROLE SECRET (ROLE: viewer, operator, admin)", EnvVars: []string{"RESQUE_WEB_USERS_FILE"}},
			&ucli.StringFlag{Name: "proxy-user-header", Usage: "header in which a trusted proxy in front of the dashboard names the signed-in user (X-Forwarded-User, X-Remote-User); needs --trusted-proxy", EnvVars: []string{"RESQUE_WEB_PROXY_USER_HEADER"}},
			&ucli.StringSliceFlag{Name: "trusted-proxy", Usage: "address or CIDR prefix the proxy connects from (repeatable, or comma-separated): only their --proxy-user-header is believed", EnvVars: []string{"RESQUE_WEB_TRUSTED_PROXIES"}},
			&ucli.StringFlag{Name: "proxy-role", Usage: "role of a proxy's user not named in the users (viewer, operator, admin, or none to refuse them); a named user has its role", Value: "viewer", EnvVars: []string{"RESQUE_WEB_PROXY_ROLE"}},
			&ucli.StringFlag{Name: "poll-interval", Usage: "how often the live overview reads Redis (seconds or a Go duration), once for every open page together", Value: "2", EnvVars: []string{"RESQUE_WEB_POLL_INTERVAL"}},
		),
		Action: runWeb,
	}
}

// webUsersEnv holds users as --users-file does, for a container without a
// file. There is no flag for it: a command line is seen by ps.
const webUsersEnv = "RESQUE_WEB_USERS"

// webUsers reads the users of --users-file and webUsersEnv.
func webUsers(c *ucli.Context) ([]web.User, error) {
	var users []web.User
	if path := c.String("users-file"); path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, usagef("--users-file: %v", err)
		}
		defer f.Close()
		us, err := web.ParseUsers(f)
		if err != nil {
			return nil, usagef("--users-file %s: %v", path, strings.TrimPrefix(err.Error(), "web: "))
		}
		users = append(users, us...)
	}
	if inline := os.Getenv(webUsersEnv); inline != "" {
		us, err := web.ParseUsers(strings.NewReader(strings.ReplaceAll(inline, ";", "\n")))
		if err != nil {
			return nil, usagef("%s: %v", webUsersEnv, strings.TrimPrefix(err.Error(), "web: "))
		}
		users = append(users, us...)
	}
	return users, nil
}

// webProxy is the trusted proxy --proxy-user-header, --trusted-proxy and
// --proxy-role describe, with the roles of users by name; nil without a
// header.
func webProxy(c *ucli.Context, users []web.User) (*web.TrustedProxy, error) {
	header := strings.TrimSpace(c.String("proxy-user-header"))
	from, err := web.ParsePrefixes(c.StringSlice("trusted-proxy"))
	if err != nil {
		return nil, usagef("--trusted-proxy: %v", err)
	}
	switch {
	case header == "" && len(from) > 0:
		return nil, usagef("--trusted-proxy needs --proxy-user-header")
	case header == "":
		return nil, nil
	case len(from) == 0:
		return nil, usagef("--proxy-user-header %s needs --trusted-proxy (the addresses the proxy connects from): from anywhere else the header could be forged", header)
	}
	p := &web.TrustedProxy{Header: header, From: from, Roles: map[string]web.Role{}}
	if r := c.String("proxy-role"); r != "none" {
		if p.Default, err = web.ParseRole(r); err != nil {
			return nil, usagef("--proxy-role %q: want viewer, operator, admin or none", r)
		}
	}
	for _, u := range users {
		p.Roles[u.Name] = u.Role
	}
	return p, nil
}

// isLoopback reports whether addr (host:port) listens only on loopback.
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

func runWeb(c *ucli.Context) error {
	if c.NArg() > 0 {
		return usagef("web takes no argument")
	}
	log, err := newLogger(c)
	if err != nil {
		return err
	}
	users, err := webUsers(c)
	if err != nil {
		return err
	}
	addr := c.String("addr")
	loopback, err := isLoopback(addr)
	if err != nil {
		return usagef("--addr %q: %v", addr, err)
	}
	proxy, err := webProxy(c, users)
	if err != nil {
		return err
	}
	if !loopback && len(users) == 0 && proxy == nil {
		return usagef("--addr %s is reachable from other machines: configure credentials (--users-file, %s or --proxy-user-header) or listen on 127.0.0.1", addr, webUsersEnv)
	}
	poll, err := parseSeconds("--poll-interval", c.String("poll-interval"))
	if err != nil {
		return err
	}
	r := redisConfig(c)
	tlsCfg, err := (rdb.TLSFiles{CAFile: r.TLSCAFile, CertFile: r.TLSCertFile, KeyFile: r.TLSKeyFile,
		ServerName: r.TLSServerName, InsecureSkipVerify: r.TLSInsecureSkipVerify}).Config()
	if err != nil {
		return usageError{err}
	}
	cl, err := client.New(client.Options{URL: r.URL, Namespace: r.Namespace, TLS: tlsCfg, SentinelPassword: r.SentinelPassword})
	if err != nil {
		return usageError{err}
	}
	defer cl.Close()
	opt := web.Options{Client: cl, BasePath: c.String("base-path"), Users: users, PollInterval: poll}
	if proxy != nil {
		opt.Authenticate = proxy.Authenticate
	}
	if len(users) == 0 && proxy == nil {
		opt.Anonymous = web.RoleAdmin
		log.Warn().Str("addr", addr).Msg("no credentials configured: every local user of this machine may change queues and failed jobs")
	}
	h, err := web.Handler(opt)
	if err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), "web: "))
	}
	mux := http.NewServeMux()
	base := opt.BasePath
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	mux.Handle(base, h)
	if base != "/" {
		mux.Handle(strings.TrimSuffix(base, "/"), h)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("web: listen on %s: %w", addr, err)
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// requests end with the server: event streams too
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Info().Str("url", "http://"+l.Addr().String()+base).Int("users", len(users)).Msg("dashboard listening")
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("web: %w", err)
	}
	return nil
}
