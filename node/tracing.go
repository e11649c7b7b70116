package node

import (
	"go.opentelemetry.io/otel/trace"

	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/internal/tracing"
)

// WithTracerProvider traces every job attempt as an OpenTelemetry consumer
// span of tp (docs/tracing.md), continuing the trace whose W3C context the
// producer put in the payload (its traceparent and tracestate fields, as
// Ruby's opentelemetry-instrumentation-resque writes them); the handler's
// context carries the span. Default: no tracing, at no cost. resque-go
// work builds tp from the OTEL_* environment.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) { o.tracer = tp }
}

// jobTracer is the runtime's tracer for tp (nil: none).
func jobTracer(tp trace.TracerProvider) runtime.Tracer {
	if tp == nil {
		return nil
	}
	return tracing.NewJobTracer(tp)
}
