//go:build !otel

package otelenv

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Without -tags otel nothing is set up, whatever the environment asks; a
// request for traces is answered with one line naming the build tag.
func TestFromEnvWithoutTheSDK(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		warn bool
	}{
		{nil, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
	} {
		var out bytes.Buffer
		tp, err := FromEnv(context.Background(), func(k string) string { return tc.env[k] }, "resque-go", &out)
		if tp != nil || err != nil {
			t.Errorf("%v: FromEnv %v, %v; want nothing set up", tc.env, tp, err)
		}
		if got := strings.Contains(out.String(), "-tags otel"); got != tc.warn || strings.Count(out.String(), "\n") > 1 {
			t.Errorf("%v: said %q; want a line naming -tags otel: %v", tc.env, out.String(), tc.warn)
		}
	}
}
