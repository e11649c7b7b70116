package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// enqueue writes the trace context it runs in: the TRACEPARENT of its
// environment as given, or, with tracing on, its own producer span's under
// it (the console exporter writes that span to stderr); --plain writes
// none; an exporter resque-go does not have is a usage error. Not
// parallel: it sets the environment.
func TestEnqueueTraceContext(t *testing.T) {
	e := newCLIEnv(t)
	const traceID, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	t.Setenv("TRACEPARENT", "00-"+traceID+"-"+parent+"-01")
	t.Setenv("TRACESTATE", "")
	enqueue := func(extra ...string) (int, map[string]any, string) {
		t.Helper()
		out, errOut := newSyncBuffer(), newSyncBuffer()
		code := runCommand(context.Background(), enqueueCommand(), append(append(e.redisArgs(), "--queue", "mail", "--class", "Job"), extra...), out, errOut)
		var p map[string]any
		if code == ExitOK {
			if err := json.Unmarshal([]byte(out.String()), &p); err != nil {
				t.Fatalf("payload %q: %v", out.String(), err)
			}
		}
		return code, p, errOut.String()
	}

	if code, p, _ := enqueue(); code != ExitOK || p["traceparent"] != "00-"+traceID+"-"+parent+"-01" || p["tracestate"] != nil {
		t.Errorf("tracing off, TRACEPARENT set: exit %d, payload %v; want the environment's traceparent", code, p)
	}
	if code, p, _ := enqueue("--plain"); code != ExitOK || p["traceparent"] != nil {
		t.Errorf("--plain: exit %d, payload %v; want no traceparent", code, p)
	}

	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	code, p, stderr := enqueue()
	tp, _ := p["traceparent"].(string)
	if code != ExitOK || !strings.HasPrefix(tp, "00-"+traceID+"-") || strings.Contains(tp, parent) ||
		!strings.Contains(stderr, `"Name":"send mail"`) || !strings.Contains(stderr, parent) {
		t.Errorf("tracing on: exit %d, traceparent %q, stderr %q; want a producer span of the same trace under %s", code, tp, stderr, parent)
	}

	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	if code, _, stderr := enqueue(); code != ExitUsage || !strings.Contains(stderr, `OTEL_TRACES_EXPORTER "zipkin": want otlp, console or none`) {
		t.Errorf("OTEL_TRACES_EXPORTER=zipkin: exit %d, stderr %q; want exit 2 naming it", code, stderr)
	}
}
