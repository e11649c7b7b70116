package poolrun

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/resque-go/resque-go/internal/metrics"
)

// The manager asks a child's /readyz with the token: 200 is ready, a 503
// marked as a recycle's drain does not count against the pool, any other
// answer does.
func TestChildReady(t *testing.T) {
	t.Parallel()
	s := &Supervisor{p: Params{MetricsToken: "t0k"}}
	for name, tc := range map[string]struct {
		code    int
		recycle bool
		ok      bool
	}{
		"ready":     {http.StatusOK, false, true},
		"not ready": {http.StatusServiceUnavailable, false, false},
		"recycling": {http.StatusServiceUnavailable, true, true},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/readyz" || r.Header.Get("Authorization") != "Bearer t0k" {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			if tc.recycle {
				w.Header().Set(metrics.RecyclingHeader, "1")
			}
			w.WriteHeader(tc.code)
		}))
		err := s.childReady(context.Background(), srv.URL+"/readyz")
		srv.Close()
		if (err == nil) != tc.ok {
			t.Errorf("%s: childReady = %v, want ok %v", name, err, tc.ok)
		}
	}
}
