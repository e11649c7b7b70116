// Package tracing is resque-go's OpenTelemetry tracing: a tracer provider
// built from the standard OTEL_* environment (off unless it asks for an
// exporter), one consumer span per job attempt continuing the trace whose
// W3C context the producer put in the payload, and the injection of the
// current context into payloads resque-go writes.
//
// Where the context travels: the Ruby instrumentation
// (opentelemetry-instrumentation-resque) injects it into the payload hash
// itself when Resque.push runs, so a job reads
//
//	{"class":"Mailer","args":[1],"traceparent":"00-<trace id>-<span id>-01","tracestate":"..."}
//
// (tracestate only when non-empty), and extracts it from the payload in
// Resque::Job#perform. resque-go reads and writes the same two top-level
// fields. OpenTelemetry has no php-resque instrumentation; a PHP producer
// cannot add top-level fields through Resque::enqueue, so a traceparent
// (and tracestate) in the first argument's object, where
// Resque::enqueue($q, $class, ['traceparent' => ...]) puts it, is read when
// the top level has none.
package tracing

import (
	"bytes"
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/worker"
)

// ScopeName is the instrumentation scope of resque-go's spans.
const ScopeName = "github.com/resque-go/resque-go"

// Payload fields of the W3C trace context (the Ruby instrumentation's).
const (
	FieldTraceparent = "traceparent"
	FieldTracestate  = "tracestate"
)

// propagator is W3C Trace Context, what the Ruby instrumentation writes
// with its default propagators (tracecontext,baggage: baggage goes in its
// own field, which resque-go leaves alone).
var propagator = propagation.TraceContext{}

// Inject returns the W3C trace context of ctx's span as the payload fields
// carry it, or "" when ctx has no valid span context (then nothing is
// written and nothing is allocated).
func Inject(ctx context.Context) (traceparent, tracestate string) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return "", ""
	}
	c := propagation.MapCarrier{}
	propagator.Inject(ctx, c)
	return c[FieldTraceparent], c[FieldTracestate]
}

// FromEnvCarrier returns ctx with the remote span context of the TRACEPARENT
// and TRACESTATE environment variables (OpenTelemetry's environment
// carrier, as a shell script or a parent process passes it), if any.
func FromEnvCarrier(ctx context.Context, getenv func(string) string) context.Context {
	tp := getenv("TRACEPARENT")
	if tp == "" {
		return ctx
	}
	return propagator.Extract(ctx, propagation.MapCarrier{FieldTraceparent: tp, FieldTracestate: getenv("TRACESTATE")})
}

// Extract returns ctx with the remote span context a payload carries: its
// top-level traceparent and tracestate, else those of its first argument
// when that is an object (php-resque's args). The payload is not changed.
func Extract(ctx context.Context, job *worker.Job) context.Context {
	tp, ts := textOf(job.Field(FieldTraceparent)), textOf(job.Field(FieldTracestate))
	if tp == "" {
		tp, ts = fromFirstArg(job.Args)
	}
	if tp == "" {
		return ctx
	}
	return propagator.Extract(ctx, propagation.MapCarrier{FieldTraceparent: tp, FieldTracestate: ts})
}

// textOf is a JSON string's value, "" for anything else.
func textOf(raw json.RawMessage) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// fromFirstArg reads traceparent and tracestate from args[0] when it is an
// object; args that do not mention traceparent are not decoded.
func fromFirstArg(args json.RawMessage) (string, string) {
	if !bytes.Contains(args, []byte(`"traceparent"`)) {
		return "", ""
	}
	var list []json.RawMessage
	if json.Unmarshal(args, &list) != nil || len(list) == 0 {
		return "", ""
	}
	var first map[string]json.RawMessage
	if json.Unmarshal(list[0], &first) != nil {
		return "", ""
	}
	return textOf(first[FieldTraceparent]), textOf(first[FieldTracestate])
}

// JobTracer starts one consumer span per job attempt (the runtime's
// Config.Tracer).
type JobTracer struct {
	tracer trace.Tracer
}

// NewJobTracer returns a JobTracer on tp.
func NewJobTracer(tp trace.TracerProvider) *JobTracer {
	return &JobTracer{tracer: tp.Tracer(ScopeName)}
}

// Attribute keys of a job span beyond the messaging conventions' own; the
// job class key is the Ruby instrumentation's.
const (
	AttrJobClass = "messaging.resque.job_class"
	AttrAttempt  = "messaging.resque.attempt"
	AttrOutcome  = "messaging.resque.outcome"
)

// StartAttempt starts the span of one attempt of job, a child of the
// producer's span when the payload carries its context, and returns the
// context for the handler and the function that ends the span with the
// attempt's outcome ("ok", "fail", "retry", "reschedule", "discard",
// "requeued") and, for a failure, its exception and message.
func (t *JobTracer) StartAttempt(ctx context.Context, job *worker.Job) (context.Context, func(outcome, exception, message string)) {
	ctx = Extract(ctx, job)
	attrs := []attribute.KeyValue{
		attribute.String("messaging.system", "resque"),
		attribute.String("messaging.destination.name", job.Queue),
		attribute.String("messaging.operation", "process"),
		attribute.String("messaging.operation.type", "process"),
		attribute.String("messaging.operation.name", "process"),
		attribute.String(AttrJobClass, jobClass(job)),
		attribute.Int(AttrAttempt, job.Attempt),
	}
	if job.ID != "" {
		attrs = append(attrs, attribute.String("messaging.message.id", job.ID))
	}
	if job.WorkerID != "" {
		attrs = append(attrs, attribute.String("messaging.client.id", job.WorkerID))
	}
	ctx, span := t.tracer.Start(ctx, "process "+job.Queue, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...))
	return ctx, func(outcome, exception, message string) {
		span.SetAttributes(attribute.String(AttrOutcome, outcome))
		if exception != "" {
			span.AddEvent("exception", trace.WithAttributes(attribute.String("exception.type", exception),
				attribute.String("exception.message", message)))
		}
		if outcome == "fail" || outcome == "retry" {
			span.SetStatus(codes.Error, exception+": "+message)
		}
		span.End()
	}
}

// jobClass is the class a job runs as: an ActiveJob wrapper's job_class, as
// the Ruby instrumentation reports it, else the payload's class.
func jobClass(job *worker.Job) string {
	p := protocol.Payload{Class: job.Class, Args: job.Args}
	if c := p.HandlerClass(); c != "" {
		return c
	}
	return job.Class
}

// StartSend starts the producer span of an enqueue to queue on tp: the
// context whose span Inject then writes into the payload, and the function
// that ends it.
func StartSend(ctx context.Context, tp trace.TracerProvider, queue, class string) (context.Context, func()) {
	ctx, span := tp.Tracer(ScopeName).Start(ctx, "send "+queue, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(
			attribute.String("messaging.system", "resque"),
			attribute.String("messaging.destination.name", queue),
			attribute.String("messaging.operation", "publish"),
			attribute.String("messaging.operation.type", "send"),
			attribute.String(AttrJobClass, class)))
	return ctx, func() { span.End() }
}
