package runtime_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// Every form of "rate limited, retry in d" puts the job in the delayed
// queue for now+d: a Go handler's worker.RateLimited, an exec command's
// exit status 79 (alone: the default delay) or {"rate_limited": s} in
// $RESQUE_RESULT, an HTTP 429 with Retry-After in seconds or as a date,
// a 2xx reply {"rate_limited": s}. None is a failure: nothing goes to
// failed or retries.
func TestRateLimitedForms(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/secs":
			w.Header().Set("Retry-After", "20")
			w.WriteHeader(http.StatusTooManyRequests)
		case "/date":
			w.Header().Set("Retry-After", time.Now().Add(2*time.Hour).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusTooManyRequests)
		case "/none":
			w.WriteHeader(http.StatusTooManyRequests)
		case "/body":
			_, _ = io.WriteString(w, `{"rate_limited": 15}`)
		}
	}))
	defer srv.Close()
	e := newEnv(t)
	quiet := worker.ExecOptions{Stderr: &strings.Builder{}}
	e.reg.Register("Go", func(ctx context.Context, j *worker.Job) error { return worker.RateLimited(30 * time.Second) })
	e.reg.Register("ExecCode", worker.ExecHandler(`exit 79`, quiet))
	e.reg.Register("ExecResult", worker.ExecHandler(`echo '{"rate_limited": 45}' > "$RESQUE_RESULT"; exit 79`, quiet))
	for class, path := range map[string]string{"HTTPSecs": "/secs", "HTTPDate": "/date", "HTTPNone": "/none", "HTTPBody": "/body"} {
		e.reg.Register(class, worker.HTTPHandler(srv.URL+path, worker.HTTPOptions{}))
	}
	want := map[string]int64{"Go": 30, "ExecCode": 60, "ExecResult": 45, "HTTPSecs": 20, "HTTPDate": 7200, "HTTPNone": 60, "HTTPBody": 15}
	fixed := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var rec recorder
	for class := range want {
		e.push("q", `{"class":"`+class+`","args":[]}`)
	}
	e.start(runtime.Config{Queues: "q", Concurrency: 3, OnFinish: rec.add, Now: func() time.Time { return fixed },
		Retry: worker.RetryPolicy{MaxAttempts: 1}})
	for _, f := range rec.waitN(t, len(want)) {
		if f.Outcome != "reschedule" || f.Failed {
			t.Errorf("%s: outcome %q (%s %s), want reschedule", f.Class, f.Outcome, f.Exception, f.Error)
		}
	}
	k := e.client.Keys()
	for class, secs := range want {
		found := false
		// an HTTP date is read against the wall clock: a second either way
		for _, at := range []int64{fixed.Unix() + secs, fixed.Unix() + secs - 1, fixed.Unix() + secs + 1} {
			for _, item := range e.list(k.Delayed(at)) {
				found = found || strings.Contains(item, `"class":"`+class+`"`)
			}
		}
		if !found {
			t.Errorf("%s: not in the delayed queue at now+%ds", class, secs)
		}
	}
	if n := len(e.list(k.Failed())) + len(e.list(k.Retries())); n != 0 {
		t.Errorf("%d failed or retries entries, want none", n)
	}
	if n := e.counter(k.StatFailed()); n != 0 {
		t.Errorf("stat:failed = %d", n)
	}
}

// A fork-mode child's RateLimited comes back to the parent as such.
func TestRateLimitedFork(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.reg.Register("Limited", func(ctx context.Context, j *worker.Job) error { return errors.New("the parent must not run it") })
	fixed := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var rec recorder
	e.push("q", `{"class":"Limited","args":[]}`)
	e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Now: func() time.Time { return fixed },
		Fork: &worker.ForkConfig{Command: []string{os.Args[0]}, Env: []string{childEnv + "=1"}}})
	if f := rec.waitN(t, 1)[0]; f.Outcome != "reschedule" {
		t.Errorf("finished = %+v", f)
	}
	if n := len(e.list(e.client.Keys().Delayed(fixed.Unix() + 30))); n != 1 {
		t.Errorf("%d items due at now+30s, want 1", n)
	}
}

// A rate-limited attempt is not a failed one, and does not forget the
// failed attempts before it: a Ruby-form job that failed once and is then
// rate limited keeps its attempt counter at 1.
func TestRateLimitedKeepsAttempts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var calls atomic.Int32
	var attempt atomic.Int32
	e.reg.Register("Flaky", func(ctx context.Context, j *worker.Job) error {
		if calls.Add(1) == 1 {
			return errors.New("broken once")
		}
		attempt.Store(int32(j.Attempt))
		return worker.RateLimited(30 * time.Second)
	})
	payload := `{"class":"Flaky","args":[1]}`
	var rec recorder
	e.push("q", payload)
	e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Retry: worker.RetryPolicy{MaxAttempts: 3}})
	done := rec.waitN(t, 2)
	if done[0].Outcome != "retry" || done[1].Outcome != "reschedule" || attempt.Load() != 2 {
		t.Fatalf("outcomes %q, %q, second attempt %d", done[0].Outcome, done[1].Outcome, attempt.Load())
	}
	p, err := protocol.DecodePayload([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.get(e.client.Keys().Attempts(protocol.AttemptsDigest(p))); got != "1" {
		t.Errorf("attempt counter = %q, want 1 (the rate-limited attempt not counted, the failure kept)", got)
	}
}
