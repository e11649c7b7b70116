package runtime_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// The HTTP handler against a local server: success, retry and reschedule
// replies, a 5xx, a timeout, {sourceId} and the bearer token.
func TestHTTPHandler(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(body))
		mu.Unlock()
		switch r.URL.Path {
		case "/ok/s-42":
			w.WriteHeader(http.StatusNoContent)
		case "/retry":
			_, _ = io.WriteString(w, `{"message":"come back later","retry":true}`)
		case "/resched":
			_, _ = io.WriteString(w, `{"message":"","rescheduleDelay":60}`)
		case "/broken":
			http.Error(w, "database down", http.StatusServiceUnavailable)
		case "/slow":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	e := newEnv(t)
	opt := worker.HTTPOptions{Token: "s3cret", Timeout: 300 * time.Millisecond}
	for class, path := range map[string]string{"Ok": "/ok/{sourceId}", "Retry": "/retry", "Resched": "/resched", "Broken": "/broken", "Slow": "/slow"} {
		e.reg.Register(class, worker.HTTPHandler(srv.URL+path, opt))
	}
	fixed := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	var rec recorder
	okJob := `{"class":"Ok","args":[1],"sourceId":"s-42"}`
	e.push("q", okJob, `{"class":"Retry","args":[]}`, `{"class":"Resched","args":[]}`,
		`{"class":"Broken","args":[],"failCount":1}`, `{"class":"Slow","args":[],"failCount":2}`)
	e.start(runtime.Config{Queues: "q", Now: func() time.Time { return fixed }, OnFinish: rec.add,
		Retry: worker.RetryPolicy{MaxAttempts: 3}})
	done := rec.waitN(t, 5)
	got := map[string]runtime.Finished{}
	for _, f := range done {
		got[f.Class] = f
	}
	for class, want := range map[string]string{"Ok": "ok", "Retry": "retry", "Resched": "reschedule", "Broken": "retry", "Slow": "fail"} {
		if got[class].Outcome != want {
			t.Errorf("%s: outcome %q (%s), want %q", class, got[class].Outcome, got[class].Error, want)
		}
	}
	if !strings.Contains(got["Broken"].Error, "503") || !strings.Contains(got["Broken"].Error, "database down") {
		t.Errorf("5xx error message = %q", got["Broken"].Error)
	}
	k := e.client.Keys()
	// Backoff 2 s for a first attempt, 4 s for a second (failCount 1).
	for ts, class := range map[int64]string{fixed.Unix() + 2: "Retry", fixed.Unix() + 4: "Broken", fixed.Unix() + 60: "Resched"} {
		items := e.list(k.Delayed(ts))
		if len(items) != 1 || !strings.Contains(items[0], `"class":"`+class+`"`) {
			t.Errorf("delayed:%d = %v, want the %s job", ts, items, class)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	found := false
	for _, s := range seen {
		if s == "POST /ok/s-42 Bearer s3cret "+okJob {
			found = true
		}
	}
	if !found {
		t.Errorf("server saw %q", seen)
	}
}

// A payload whose sourceId would move the POST (and its bearer token) to
// another path fails as a valid-JSON entry in failed naming the
// placeholder; the endpoint sees nothing of it, and the next job is served.
func TestHTTPPlaceholderOutsideItsSegmentFails(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.EscapedPath())
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	e := newEnv(t)
	e.reg.Register("Tenant", worker.HTTPHandler(srv.URL+"/t/{sourceId}/run", worker.HTTPOptions{Token: "s3cret"}))
	var rec recorder
	e.push("q", `{"class":"Tenant","args":[],"sourceId":".."}`, `{"class":"Tenant","args":[],"sourceId":"ok"}`)
	e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Retry: worker.RetryPolicy{MaxAttempts: 1}})
	rec.waitN(t, 2)
	failed := e.list(e.client.Keys().Failed())
	if len(failed) != 1 {
		t.Fatalf("failed = %q, want the job with sourceId \"..\"", failed)
	}
	var entry struct {
		Exception string `json:"exception"`
		Error     string `json:"error"`
		Payload   struct {
			SourceID string `json:"sourceId"`
		} `json:"payload"`
	}
	if err := json.Unmarshal([]byte(failed[0]), &entry); err != nil {
		t.Fatalf("failed entry is not JSON: %v: %s", err, failed[0])
	}
	if entry.Exception != "ResqueGo::HTTPPlaceholder" || !strings.Contains(entry.Error, "{sourceId}") || entry.Payload.SourceID != ".." {
		t.Errorf("failed entry = %s", failed[0])
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "/t/ok/run" {
		t.Errorf("endpoint saw %q, want only /t/ok/run", seen)
	}
}
