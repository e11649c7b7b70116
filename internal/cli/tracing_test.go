package cli

import "testing"

// enqueue writes the trace context it runs in: the TRACEPARENT of its
// environment as given; --plain writes none. Not parallel: it sets the
// environment. (tracing_otel_test.go: its own producer span with tracing
// on, in a build with -tags otel.)
func TestEnqueueTraceContext(t *testing.T) {
	enqueue := traceEnqueuer(t)
	if code, p, _ := enqueue(); code != ExitOK || p["traceparent"] != "00-"+testTraceID+"-"+testParent+"-01" || p["tracestate"] != nil {
		t.Errorf("tracing off, TRACEPARENT set: exit %d, payload %v; want the environment's traceparent", code, p)
	}
	if code, p, _ := enqueue("--plain"); code != ExitOK || p["traceparent"] != nil {
		t.Errorf("--plain: exit %d, payload %v; want no traceparent", code, p)
	}
}
