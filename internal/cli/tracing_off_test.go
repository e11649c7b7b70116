//go:build !otel

package cli

import (
	"strings"
	"testing"
)

// A build without -tags otel links no OpenTelemetry SDK: asked for traces,
// enqueue says so in one line and goes on untraced, still writing the
// TRACEPARENT it was given. Not parallel: it sets the environment.
func TestEnqueueTracingAskedOfABuildWithoutOtel(t *testing.T) {
	enqueue := traceEnqueuer(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	code, p, stderr := enqueue()
	if code != ExitOK || p["traceparent"] != "00-"+testTraceID+"-"+testParent+"-01" ||
		strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "-tags otel") {
		t.Errorf("OTEL_TRACES_EXPORTER=otlp without -tags otel: exit %d, payload %v, stderr %q; want the environment's traceparent and one line naming -tags otel", code, p, stderr)
	}
}
