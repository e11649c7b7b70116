package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/resque-go/resque-go/worker"
)

// A {sourceId} value fills exactly one path segment of the configured
// host's URL: "/", "?", "#" and "%" are escaped, and a value that would
// name another path (".", "..", empty) or is no string fails the job,
// naming the placeholder, without any request.
func TestHTTPPlaceholderStaysInItsSegment(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.EscapedPath()+" "+r.URL.RawQuery+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	h := worker.HTTPHandler(srv.URL+"/tenants/{sourceId}/jobs", worker.HTTPOptions{Token: "s3cret"})
	run := func(sourceID string) error {
		fields := map[string]json.RawMessage{}
		if sourceID != "" {
			fields["sourceId"] = json.RawMessage(sourceID)
		}
		payload := `{"class":"C","args":[]}`
		return h(context.Background(), worker.NewJob(worker.Job{Class: "C", Attempt: 1, Payload: []byte(payload)}, fields))
	}
	for _, tc := range []struct{ sourceID, path string }{
		{`"s-42"`, "/tenants/s-42/jobs"},
		{`"a/../../admin"`, "/tenants/a%2F..%2F..%2Fadmin/jobs"},
		{`"x?y=1#z"`, "/tenants/x%3Fy=1%23z/jobs"},
		{`"%2e%2e"`, "/tenants/%252e%252e/jobs"},
		{`"..."`, "/tenants/.../jobs"},
	} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		if err := run(tc.sourceID); err != nil {
			t.Errorf("sourceId %s: %v", tc.sourceID, err)
			continue
		}
		mu.Lock()
		if want := tc.path + "  Bearer s3cret"; len(seen) != 1 || seen[0] != want {
			t.Errorf("sourceId %s: server saw %q, want %q", tc.sourceID, seen, want)
		}
		mu.Unlock()
	}
	mu.Lock()
	seen = nil
	mu.Unlock()
	for _, sid := range []string{`".."`, `"."`, `""`, `42`, `null`, ""} {
		err := run(sid)
		var e *worker.Error
		if !errors.As(err, &e) || e.Exception != "ResqueGo::HTTPPlaceholder" || !strings.Contains(e.Message, "{sourceId}") {
			t.Errorf("sourceId %q: %v, want a ResqueGo::HTTPPlaceholder failure naming {sourceId}", sid, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 0 {
		t.Errorf("a refused placeholder still sent requests: %q", seen)
	}
}

// Placeholders stand only in an endpoint's path: in the host, user info,
// query or fragment a value could send the request and its token elsewhere.
func TestCheckHTTPEndpoint(t *testing.T) {
	t.Parallel()
	for endpoint, ok := range map[string]bool{
		"http://api.example/jobs":                      true,
		"https://api.example/t/{sourceId}/jobs":        true,
		"http://api.example/{sourceId}":                true,
		"http://{sourceId}.api.example/jobs":           false,
		"http://api.example:{sourceId}/jobs":           false,
		"http://{sourceId}@api.example/jobs":           false,
		"http://api.example/jobs?tenant={sourceId}":    false,
		"http://api.example/jobs#{sourceId}":           false,
		"ftp://api.example/jobs":                       false,
		"http:///jobs":                                 false,
		"http://user:pw@api.example/t/{sourceId}/jobs": true,
	} {
		if err := worker.CheckHTTPEndpoint(endpoint); (err == nil) != ok {
			t.Errorf("CheckHTTPEndpoint(%q) = %v, want ok %v", endpoint, err, ok)
		}
	}
	// a handler built on a bad endpoint fails its jobs rather than guess
	h := worker.HTTPHandler("http://{sourceId}.api.example/jobs", worker.HTTPOptions{})
	err := h(context.Background(), worker.NewJob(worker.Job{Class: "C", Attempt: 1}, map[string]json.RawMessage{"sourceId": json.RawMessage(`"evil.example/"`)}))
	if err == nil || !strings.Contains(err.Error(), "may stand only in the URL's path") {
		t.Errorf("handler on a bad endpoint: %v", err)
	}
}

// A redirect to another host is not followed: the job is retried (then
// failed) with the 3xx answer, and the other host sees nothing.
func TestHTTPRedirectStaysOnTheConfiguredHost(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var elsewhere []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		elsewhere = append(elsewhere, r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/here", http.StatusTemporaryRedirect)
			return
		}
		if r.URL.Path == "/here" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	job := func() *worker.Job {
		return worker.NewJob(worker.Job{Class: "C", Attempt: 1, Payload: []byte(`{"class":"C","args":[]}`)}, nil)
	}
	if err := worker.HTTPHandler(srv.URL+"/moved", worker.HTTPOptions{Token: "s3cret"})(context.Background(), job()); err != nil {
		t.Errorf("a redirect on the same host: %v", err)
	}
	err := worker.HTTPHandler(srv.URL+"/jobs", worker.HTTPOptions{Token: "s3cret"})(context.Background(), job())
	var r *worker.RetryError
	if !errors.As(err, &r) || !strings.Contains(err.Error(), "307") {
		t.Errorf("a redirect to another host: %v, want a retry naming the 307", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(elsewhere) != 0 {
		t.Errorf("the other host saw %q", elsewhere)
	}
}
