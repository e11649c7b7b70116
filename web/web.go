// Package web is resque-go's dashboard: queues, failed jobs, workers,
// delayed jobs, plans, resque-scheduler's schedules, unique ids, serial
// locks, mass queues, plan calendars and Redis at a glance, with the actions an operator needs (retry or remove a
// failed job, every failed job a filter selects, remove jobs from a queue,
// clear a queue), a JSON API under api/ for everything the pages show and
// do, and live updates by server-sent events. It is an http.Handler over a
// client.Client, mountable under any path of a Go program's own server:
//
//	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL")})
//	...
//	h, err := web.Handler(web.Options{
//		Client:   c,
//		BasePath: "/resque/",
//		Users:    []web.User{{Name: "ops", Role: web.RoleOperator, Secret: os.Getenv("RESQUE_WEB_OPS")}},
//	})
//	...
//	http.Handle("/resque/", h)
//
// Every request is authenticated: a bearer token (Authorization: Bearer
// SECRET, for scripts) or basic auth (NAME and SECRET, for browsers), or
// Options.Authenticate (a trusted proxy's user header), or else it gets
// Options.Anonymous, which by default is no role at all (401). Roles:
// a viewer reads everything; an operator also retries and removes failed
// jobs, removes jobs from queues, pauses and resumes queues, removes one
// delayed item, pauses, resumes or removes plans, and pauses, resumes,
// weighs and limits mass-queue sources; an admin also removes every failed
// job or delayed item a filter selects, clears queues, clears unique ids,
// releases serial locks and removes calendars.
// Roles are checked on the server.
// Every change is written to an audit log in Redis. Unsafe requests from
// another origin are refused (http.CrossOriginProtection); pages carry a
// strict Content-Security-Policy and no inline script or style.
package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/resque-go/resque-go/client"
)

// Role is what a user may do. The zero Role may do nothing.
type Role int

// Roles, each allowed what the one before it is.
const (
	RoleNone Role = iota
	// RoleViewer reads every page and API route and changes nothing.
	RoleViewer
	// RoleOperator also retries failed jobs (one, a selection, or all a
	// filter selects), removes one failed job or a selection, enqueues a
	// job, removes jobs from a queue by class and args, pauses or resumes
	// a queue, removes one delayed item or queues it now, adds a plan,
	// pauses, resumes, removes or queues now a plan, queues a schedule
	// now, cancels a running job, quiets, resumes or stops a resque-go
	// process, pauses or resumes a mass-queue source, sets its weight or
	// limit, and reallocates mass allocation failures.
	RoleOperator
	// RoleAdmin also removes every failed job or delayed item a filter
	// selects, clears queues (and the delayed queue), clears unique ids,
	// releases a serial queue's lock, and adds, replaces or removes a
	// calendar.
	RoleAdmin
)

// String is the role's name: viewer, operator, admin ("none" for none).
func (r Role) String() string {
	switch r {
	case RoleViewer:
		return "viewer"
	case RoleOperator:
		return "operator"
	case RoleAdmin:
		return "admin"
	}
	return "none"
}

// ParseRole reads viewer, operator or admin.
func ParseRole(s string) (Role, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "viewer":
		return RoleViewer, nil
	case "operator":
		return RoleOperator, nil
	case "admin":
		return RoleAdmin, nil
	}
	return RoleNone, fmt.Errorf("web: role %q: want viewer, operator or admin", s)
}

// User is one credential: Name and Secret for basic auth, Secret alone as
// a bearer token.
type User struct {
	Name   string
	Role   Role
	Secret string
}

// Options configures the dashboard. Zero values mean the documented
// defaults.
type Options struct {
	// Client is the Redis the dashboard shows; required. The dashboard
	// does not close it.
	Client *client.Client
	// BasePath is the path the handler is mounted under, e.g. "/resque/";
	// default "/". Links and redirects are built on it, and the handler
	// strips it from the requests it gets.
	BasePath string
	// Users are the credentials accepted. Names and secrets must be unique
	// and secrets at least 12 characters long.
	Users []User
	// Authenticate, when set, is asked first: a request it accepts has the
	// user and role it returns (for example from a user header set by a
	// trusted proxy in front of the dashboard). Otherwise Users are
	// checked.
	Authenticate func(r *http.Request) (name string, role Role, ok bool)
	// Anonymous is the role of a request without credentials; the default
	// RoleNone refuses it (401). resque-go web sets RoleAdmin when it
	// listens on a loopback address with no credentials configured.
	Anonymous Role
	// PollInterval is how often the live view reads Redis while at least
	// one page listens, whatever the number of pages; default 2 s.
	PollInterval time.Duration
	// PageSize is the number of jobs or entries per page; default 50.
	PageSize int
	// AuditKeep bounds the audit log; default client.DefaultAuditKeep.
	AuditKeep int
	// Now is the clock for ages and the audit log; default time.Now.
	Now func() time.Time
}

// Handler returns the dashboard. It fails when Options are unusable (no
// Client, a bad user list, a BasePath that is not an absolute path).
func Handler(opt Options) (http.Handler, error) {
	if opt.Client == nil {
		return nil, errors.New("web: Options.Client is required")
	}
	base := opt.BasePath
	if base == "" {
		base = "/"
	}
	if !strings.HasPrefix(base, "/") || strings.ContainsAny(base, "?#\"'<> ") {
		return nil, fmt.Errorf("web: BasePath %q: want an absolute path such as /resque/", opt.BasePath)
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	users, err := newUserSet(opt.Users)
	if err != nil {
		return nil, err
	}
	if opt.PollInterval <= 0 {
		opt.PollInterval = 2 * time.Second
	}
	if opt.PageSize <= 0 {
		opt.PageSize = 50
	}
	if opt.AuditKeep <= 0 {
		opt.AuditKeep = client.DefaultAuditKeep
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	s := &server{opt: opt, c: opt.Client, base: base, users: users, now: opt.Now, cat: newCatalogue()}
	s.live = newHub(opt.Client, opt.PollInterval, opt.Now)
	s.evLive = newEvHub(opt.Client)
	s.tmpl, err = parseTemplates(base)
	if err != nil {
		return nil, err
	}
	return s.routes(), nil
}

// server is one dashboard.
type server struct {
	opt   Options
	c     *client.Client
	base  string
	users *userSet
	live  *hub
	// evLive is the one reader of the events stream for the job events
	// pages.
	evLive *evHub
	tmpl   map[string]*pageTemplate
	now    func() time.Time
	cat    catalogue
}
