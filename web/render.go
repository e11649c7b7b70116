package web

import (
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"
)

//go:embed templates
var templateFS embed.FS

// pageTemplate is the layout with one page's content.
type pageTemplate = template.Template

// pageData is what every page template gets.
type pageData struct {
	Title string
	Nav   string
	User  who
	Base  string
	Data  any
	// Lang is the page's language (i18n.go); Messages the words app.js
	// writes, in it.
	Lang     string
	Messages string
	cat      catalogue
}

// T is the dashboard's own text s in the page's language.
func (p pageData) T(s string) string { return p.cat.translate(p.Lang, s) }

// Tf is the dashboard's own format in the page's language, filled with
// args (which are not translated).
func (p pageData) Tf(format string, args ...any) string { return p.cat.format(p.Lang, format, args...) }

// PageTitle is the page's title in its language: Title is a catalogue
// key, or a format and its argument joined by titled.
func (p pageData) PageTitle() string {
	if format, arg, ok := strings.Cut(p.Title, titleSep); ok {
		return p.Tf(format, arg)
	}
	return p.T(p.Title)
}

// titleSep joins a title's format and argument; no format contains it.
const titleSep = "\x00"

// titled is a page title made of a format of the catalogue ("Queue %s")
// and a name from Redis, which is not translated.
func titled(format, arg string) string { return format + titleSep + arg }

// words are the dashboard's text in one language, for templates executed
// without pageData (the search page's streamed rows).
type words struct {
	cat  catalogue
	lang string
}

func (w words) T(s string) string                    { return w.cat.translate(w.lang, s) }
func (w words) Tf(format string, args ...any) string { return w.cat.format(w.lang, format, args...) }

// CanOperate and CanAdmin say which actions to offer (the server checks
// again).
func (p pageData) CanOperate() bool { return p.User.Role >= RoleOperator }
func (p pageData) CanAdmin() bool   { return p.User.Role >= RoleAdmin }

var pages = []string{"overview", "queues", "queue", "clear", "failed", "entry", "bulk", "done", "workers", "audit", "error",
	"delayed", "delayedbulk", "plans", "plan", "schedules", "unique", "serial", "mass", "calendars", "calendar", "search", "tags", "tag", "processstop", "jobevents"}

// templateFuncs are the templates' functions; base is the dashboard's path.
func templateFuncs(base string) template.FuncMap {
	return template.FuncMap{
		"url":  func(p string) string { return base + strings.TrimPrefix(p, "/") },
		"qurl": func(p, q string) string { return base + strings.TrimPrefix(p, "/") + "?" + q },
		"path": url.PathEscape,
		"q":    urlQueryEscape,
		"ts": func(t *time.Time) string {
			if t == nil {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04:05 UTC")
		},
		"iso": func(t *time.Time) string {
			if t == nil {
				return ""
			}
			return t.UTC().Format(time.RFC3339)
		},
		"age": func(s *int64) string {
			if s == nil {
				return "—"
			}
			return humanSeconds(*s)
		},
		"secs":   humanSeconds,
		"bytes":  humanBytes,
		"clip":   clip,
		"pretty": func(b json.RawMessage) string { return pretty(b, 64<<10) },
		"join":   strings.Join,
		"add":    func(a, b int) int { return a + b },
		"int64":  func(n uint64) int64 { return int64(min(n, 1<<63-1)) },
	}
}

func parseTemplates(base string) (map[string]*pageTemplate, error) {
	funcs := templateFuncs(base)
	out := map[string]*pageTemplate{}
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("web: templates: %w", err)
	}
	for _, p := range pages {
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, "templates/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %w", p, err)
		}
		out[p] = t
	}
	return out, nil
}

// render writes page name with data.
func (s *server) render(w http.ResponseWriter, r *http.Request, code int, name, title, nav string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Add("Vary", "Accept-Language")
	w.WriteHeader(code)
	lang := language(r)
	pd := pageData{Title: title, Nav: nav, User: whoOf(r), Base: s.base, Data: data, Lang: lang, cat: s.cat,
		Messages: s.cat.scriptMessages(lang)}
	_ = s.tmpl[name].ExecuteTemplate(w, "layout.html", pd) // the client went away, or a bug a test finds
}

// isAPI reports whether the request is for the JSON API (or the event
// stream, which answers errors as JSON too).
func isAPI(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/events" ||
		strings.Contains(r.Header.Get("Accept"), "application/json")
}

// fail answers an error: JSON for the API, a page for a browser.
func (s *server) fail(w http.ResponseWriter, r *http.Request, code int, msg string) {
	msg = clean(msg)
	if isAPI(r) {
		writeJSON(w, code, map[string]string{"error": msg})
		return
	}
	s.render(w, r, code, "error", http.StatusText(code), "", msg)
}

// failErr answers err with its status.
func (s *server) failErr(w http.ResponseWriter, r *http.Request, err error) {
	s.fail(w, r, statusOf(err), err.Error())
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// humanSeconds is a duration such as "3s", "4m 10s", "2h 5m", "3d 4h".
func humanSeconds(s int64) string {
	if s < 0 {
		s = 0
	}
	d, h, m := s/86400, s%86400/3600, s%3600/60
	switch {
	case d > 0:
		return fmt.Sprintf("%dd %dh", d, h)
	case h > 0:
		return fmt.Sprintf("%dh %dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm %ds", m, s%60)
	}
	return fmt.Sprintf("%ds", s)
}

// humanBytes is n as "512 B", "1.5 KiB", "3.2 MiB"...
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
