package node_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

// A payload as Ruby's opentelemetry-instrumentation-resque writes it
// (Resque.push with OpenTelemetry.propagation.inject(item)): the W3C
// context as top-level fields of the payload hash.
const (
	rubyTraceID   = "4bf92f3577b34da6a3ce929d0e0e4736"
	rubySpanID    = "00f067aa0ba902b7"
	rubyTraced    = `{"class":"Traced","args":[1,"two"],"traceparent":"00-` + rubyTraceID + `-` + rubySpanID + `-01","tracestate":"congo=t61rcWkgMzE"}`
	phpTraced     = `{"class":"Traced","args":[{"n":3,"traceparent":"00-` + rubyTraceID + `-00f067aa0ba902b8-01"}],"id":"0123456789abcdef0123456789abcdef","queue_time":1700000000.5}`
	untraced      = `{"class":"Traced","args":[2]}`
	failingTraced = `{"class":"Fails","args":[],"traceparent":"00-` + rubyTraceID + `-` + rubySpanID + `-01"}`
)

// Every attempt is one consumer span with the messaging attributes; a
// payload carrying a traceparent continues that trace (the span's parent
// is the producer's span); the handler gets the span in its context and
// the payload bytes exactly as they were queued.
func TestJobSpans(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	var mu sync.Mutex
	seen := map[string]trace.SpanContext{} // payload -> the handler's span
	reg := worker.NewRegistry()
	reg.Register("Traced", func(ctx context.Context, j *worker.Job) error {
		mu.Lock()
		defer mu.Unlock()
		seen[string(j.Payload)] = trace.SpanContextFromContext(ctx)
		return nil
	})
	reg.Register("Fails", func(context.Context, *worker.Job) error { return errors.New("boom") })
	cfg := e.config("traced")
	cfg.FailRetries = 1
	n, err := node.New(cfg, reg, node.WithLogger(zerolog.New(e.log)), node.WithTitle(nil), node.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	for _, p := range []string{rubyTraced, phpTraced, untraced, failingTraced} {
		e.do("RPUSH", e.client.Keys().Queue("traced"), p)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 0, func() bool { return len(rec.Ended()) >= 4 }, "4 spans ended")
	spans := rec.Ended()
	if len(spans) != 4 {
		t.Fatalf("%d spans, want one per attempt (4)", len(spans))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range []string{rubyTraced, phpTraced, untraced} {
		if _, ok := seen[p]; !ok {
			t.Errorf("the handler never saw the payload bytes %s unchanged", p)
		}
	}
	for i, s := range spans {
		attrs := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes() {
			attrs[kv.Key] = kv.Value
		}
		if s.SpanKind() != trace.SpanKindConsumer || s.Name() != "process traced" ||
			attrs["messaging.system"].AsString() != "resque" || attrs["messaging.destination.name"].AsString() != "traced" ||
			attrs["messaging.operation"].AsString() != "process" || attrs["messaging.resque.attempt"].AsInt64() != 1 {
			t.Errorf("span %d: kind %v, name %q, attributes %v", i, s.SpanKind(), s.Name(), s.Attributes())
		}
		class, outcome := attrs["messaging.resque.job_class"].AsString(), attrs["messaging.resque.outcome"].AsString()
		switch i {
		case 0: // Ruby's fields: the parent is the producer's span
			if s.Parent().TraceID().String() != rubyTraceID || s.Parent().SpanID().String() != rubySpanID || !s.Parent().IsRemote() ||
				s.SpanContext().TraceID().String() != rubyTraceID || s.SpanContext().TraceState().Get("congo") != "t61rcWkgMzE" {
				t.Errorf("span of the Ruby payload: parent %v, context %v; want a child of %s/%s", s.Parent(), s.SpanContext(), rubyTraceID, rubySpanID)
			}
			if !seen[rubyTraced].Equal(s.SpanContext()) {
				t.Errorf("the handler's context carries %v, want the job's span %v", seen[rubyTraced], s.SpanContext())
			}
		case 1: // php-resque's args object
			if s.Parent().SpanID().String() != "00f067aa0ba902b8" || attrs["messaging.message.id"].AsString() != "0123456789abcdef0123456789abcdef" {
				t.Errorf("span of the PHP payload: parent %v, attributes %v", s.Parent(), s.Attributes())
			}
		case 2:
			if s.Parent().IsValid() {
				t.Errorf("span of a payload without a trace context has parent %v, want a new trace", s.Parent())
			}
		case 3:
			if class != "Fails" || outcome != "fail" || s.Status().Code != codes.Error || len(s.Events()) != 1 ||
				s.Events()[0].Name != "exception" {
				t.Errorf("span of the failed job: class %q, outcome %q, status %v, events %v", class, outcome, s.Status(), s.Events())
			}
			continue
		}
		if class != "Traced" || outcome != "ok" || s.Status().Code == codes.Error {
			t.Errorf("span %d: class %q, outcome %q, status %v", i, class, outcome, s.Status())
		}
	}
}
