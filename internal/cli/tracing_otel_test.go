//go:build otel

package cli

import (
	"strings"
	"testing"
)

// With tracing on (a build with -tags otel), enqueue starts a producer span
// of its own under TRACEPARENT (the console exporter writes it to stderr);
// an exporter resque-go does not have is a usage error. Not parallel: it
// sets the environment.
func TestEnqueueTraceContextTracingOn(t *testing.T) {
	enqueue := traceEnqueuer(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	code, p, stderr := enqueue()
	tp, _ := p["traceparent"].(string)
	if code != ExitOK || !strings.HasPrefix(tp, "00-"+testTraceID+"-") || strings.Contains(tp, testParent) ||
		!strings.Contains(stderr, `"Name":"send mail"`) || !strings.Contains(stderr, testParent) {
		t.Errorf("tracing on: exit %d, traceparent %q, stderr %q; want a producer span of the same trace under %s", code, tp, stderr, testParent)
	}

	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	if code, _, stderr := enqueue(); code != ExitUsage || !strings.Contains(stderr, `OTEL_TRACES_EXPORTER "zipkin": want otlp, console or none`) {
		t.Errorf("OTEL_TRACES_EXPORTER=zipkin: exit %d, stderr %q; want exit 2 naming it", code, stderr)
	}
}
