package tracing

import (
	"context"
	"encoding/json"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/worker"
)

func jobOf(t *testing.T, payload string) *worker.Job {
	t.Helper()
	p, err := protocol.DecodePayload([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	return worker.NewJob(worker.Job{Class: p.Class, Args: p.Args, Payload: []byte(payload)}, p.Fields)
}

// The context is read from the payload's top level (Ruby), else from the
// first argument's object (php-resque); a malformed one, or one of another
// type, starts a new trace.
func TestExtract(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct {
		payload string
		want    string // parent span id, "" for none
	}{
		{`{"class":"A","args":[],"traceparent":"` + tp + `"}`, "00f067aa0ba902b7"},
		{`{"class":"A","args":[{"traceparent":"` + tp + `"}]}`, "00f067aa0ba902b7"},
		{`{"class":"A","args":{"traceparent":"` + tp + `"}}`, ""}, // an args object is not php-resque's list
		{`{"class":"A","args":[],"traceparent":"00-zz-00f067aa0ba902b7-01"}`, ""},
		{`{"class":"A","args":[],"traceparent":12}`, ""},
		{`{"class":"A","args":["traceparent"]}`, ""},
		{`{"class":"A","args":[1]}`, ""},
	} {
		sc := trace.SpanContextFromContext(Extract(context.Background(), jobOf(t, tc.payload)))
		got := ""
		if sc.IsValid() {
			got = sc.SpanID().String()
		}
		if got != tc.want {
			t.Errorf("%s: parent %q, want %q", tc.payload, got, tc.want)
		}
	}
}

// Inject writes nothing without a valid span context, and what Extract
// reads with one.
func TestInjectRoundTrip(t *testing.T) {
	t.Parallel()
	if tp, ts := Inject(context.Background()); tp != "" || ts != "" {
		t.Fatalf("no span: %q %q", tp, ts)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9}, SpanID: trace.SpanID{8}, TraceFlags: trace.FlagsSampled})
	tp, _ := Inject(trace.ContextWithSpanContext(context.Background(), sc))
	b, _ := json.Marshal(map[string]any{"class": "A", "args": []any{}, "traceparent": tp})
	got := trace.SpanContextFromContext(Extract(context.Background(), jobOf(t, string(b))))
	if got.TraceID() != sc.TraceID() || got.SpanID() != sc.SpanID() || !got.IsSampled() {
		t.Fatalf("round trip %v, want %v", got, sc)
	}
}

// BenchmarkStartAttempt is what tracing on adds to each job: the span of
// an attempt continuing a Ruby producer's trace, started and ended, with
// the SDK's default (always) sampler and an in-memory span processor.
func BenchmarkStartAttempt(b *testing.B) {
	rec := tracetest.NewSpanRecorder()
	tr := NewJobTracer(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	p := `{"class":"A","args":[1],"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}`
	d, _ := protocol.DecodePayload([]byte(p))
	job := worker.NewJob(worker.Job{Queue: "q", Class: d.Class, Args: d.Args, Payload: []byte(p), Attempt: 1}, d.Fields)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, end := tr.StartAttempt(context.Background(), job)
		end("ok", "", "")
		if i%1024 == 0 {
			rec.Reset()
		}
	}
}
