package client_test

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/resque-go/resque-go/client"
)

// Enqueued inside a span, a job carries the span's W3C context as the
// top-level traceparent (and tracestate) fields, where Ruby's
// opentelemetry-instrumentation-resque writes them; without a span, or
// written plain, it carries nothing more than before.
func TestEnqueueInjectsTheTraceContext(t *testing.T) {
	t.Parallel()
	now := time.Unix(1795296447, 0)
	e := newEnv(t, client.Options{Now: fixedClock(now)})
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ts, err := trace.ParseTraceState("vendor=value")
	if err != nil {
		t.Fatal(err)
	}
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5}, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
	spanCtx, span := tp.Tracer("test").Start(trace.ContextWithRemoteSpanContext(ctx(), parent), "request")
	defer span.End()
	sc := span.SpanContext()

	info, err := e.c.Enqueue(spanCtx, "mail", "MailJob", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"class":"MailJob","args":[1],"id":"` + info.ID + `","queue_time":1795296447.0000,"traceparent":"00-` +
		sc.TraceID().String() + `-` + sc.SpanID().String() + `-01","tracestate":"vendor=value"}`
	if got := e.strs("LRANGE", e.key("queue:mail"), 0, -1); len(got) != 1 || got[0] != want {
		t.Fatalf("queued %q\nwant %s", got, want)
	}

	plain, err := e.c.EnqueueRaw(spanCtx, "mail", "MailJob", []byte(`[2]`), client.Plain())
	if err != nil {
		t.Fatal(err)
	}
	bare, err := e.c.Enqueue(ctx(), "mail", "MailJob", 3)
	if err != nil {
		t.Fatal(err)
	}
	if string(plain.Payload) != `{"class":"MailJob","args":[2]}` ||
		string(bare.Payload) != `{"class":"MailJob","args":[3],"id":"`+bare.ID+`","queue_time":1795296447.0000}` {
		t.Fatalf("plain %s, without a span %s: want no trace fields", plain.Payload, bare.Payload)
	}
}
