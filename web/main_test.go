package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/redistest/rdbtest"
	"github.com/resque-go/resque-go/web"
)

const redisEnv = "RESQUE_GO_TEST_REDIS"

func TestMain(m *testing.M) { os.Exit(redistest.Main(m, redisEnv)) }

// Secrets of the test users: long enough, and searched for in every
// answer (none may show one).
const (
	viewerSecret   = "viewer-secret-0001"
	operatorSecret = "operator-secret-0002"
	adminSecret    = "admin-secret-0003"
)

// env is one test's namespace, a dashboard over it and a raw connection.
type env struct {
	t   *testing.T
	c   *client.Client
	raw *rdb.Client
	ns  string
	srv *httptest.Server
	// base is the dashboard's URL, ending in "/".
	base string
}

func newEnv(t *testing.T, mod ...func(*web.Options)) *env {
	t.Helper()
	r := rdbtest.New(t, rdb.Options{})
	raw, ns := r.Client, r.NS
	c, err := client.New(client.Options{URL: r.URL, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	opt := web.Options{Client: c, Users: []web.User{
		{Name: "vic", Role: web.RoleViewer, Secret: viewerSecret},
		{Name: "opal", Role: web.RoleOperator, Secret: operatorSecret},
		{Name: "ada", Role: web.RoleAdmin, Secret: adminSecret},
	}}
	for _, m := range mod {
		m(&opt)
	}
	h, err := web.Handler(opt)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e := &env{t: t, c: c, raw: raw, ns: ns, srv: srv, base: srv.URL + "/"}
	return e
}

func ctx() context.Context { return context.Background() }

func (e *env) do(cmd string, args ...any) any {
	e.t.Helper()
	v, err := e.raw.Do(ctx(), cmd, args...)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func (e *env) key(name string) string { return e.ns + ":" + name }

// load writes every key of a fixture dump into the test namespace.
func (e *env) load(d *fixtures.Dump) {
	e.t.Helper()
	for _, k := range d.Keys {
		name := e.key(strings.TrimPrefix(k.Key, "resque:"))
		switch k.Type {
		case "string":
			e.do("SET", name, d.String(k.Key))
		case "list":
			for _, v := range d.List(k.Key) {
				e.do("RPUSH", name, v)
			}
		case "set":
			for _, v := range d.List(k.Key) {
				e.do("SADD", name, v)
			}
		case "hash":
			for f, v := range d.Hash(k.Key) {
				e.do("HSET", name, f, v)
			}
		case "zset":
			var pairs [][2]json.Number
			if err := json.Unmarshal(k.Value, &pairs); err != nil {
				e.t.Fatal(err)
			}
			for _, p := range pairs {
				e.do("ZADD", name, p[1].String(), p[0].String())
			}
		}
	}
}

// response is one answer, read whole.
type response struct {
	code int
	head http.Header
	body string
}

// request sends method path (relative to the dashboard) with the bearer
// token (none when ""), a body, and extra headers as name, value pairs.
func (e *env) request(method, path, token, contentType, body string, headers ...string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.base+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	r := response{code: resp.StatusCode, head: resp.Header, body: string(b)}
	for _, s := range []string{viewerSecret, operatorSecret, adminSecret} {
		if strings.Contains(r.body, s) {
			e.t.Errorf("%s %s: a secret in the answer", method, path)
		}
	}
	return r
}

func (e *env) get(path, token string) response { return e.request("GET", path, token, "", "") }

// postJSON posts v as JSON.
func (e *env) postJSON(path, token string, v any) response {
	b, _ := json.Marshal(v)
	return e.request("POST", path, token, "application/json", string(b))
}

// postForm posts form fields (name, value pairs) as a browser does, from
// the dashboard's own origin.
func (e *env) postForm(path, token string, fields ...string) response {
	var b bytes.Buffer
	for i := 0; i+1 < len(fields); i += 2 {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(urlEncode(fields[i]) + "=" + urlEncode(fields[i+1]))
	}
	return e.request("POST", path, token, "application/x-www-form-urlencoded", b.String(),
		"Origin", e.srv.URL, "Sec-Fetch-Site", "same-origin")
}

// decode reads r's body as JSON into v.
func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("not JSON (%v): %.300s", err, r.body)
	}
}
