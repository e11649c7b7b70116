//go:build otel

package otelenv

import (
	"context"
	"fmt"
	"io"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Built says whether this binary carries the SDK and the exporters.
const Built = true

// FromEnv builds a tracer provider from the OTEL_* environment, or returns
// nil when Enabled says no: nothing is set up then, and nothing costs.
// Exporters: otlp (OTLP over HTTP/protobuf; OTEL_EXPORTER_OTLP_* say where
// and how) and console (one JSON document per span on console: the
// commands pass their stderr, stdout being their output). The service
// name is OTEL_SERVICE_NAME, else defaultService; OTEL_RESOURCE_ATTRIBUTES,
// OTEL_TRACES_SAMPLER and OTEL_BSP_* are read by the SDK. Shut the
// provider down before exit: it flushes the spans.
func FromEnv(ctx context.Context, getenv func(string) string, defaultService string, console io.Writer) (Provider, error) {
	if !Enabled(getenv) {
		return nil, nil
	}
	if p := strings.TrimSpace(cmpOr(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))); p != "" && p != "http/protobuf" {
		return nil, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_PROTOCOL %q: resque-go exports OTLP over http/protobuf only (port 4318)", ErrConfig, p)
	}
	names := strings.Split(cmpOr(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")), "otlp"), ",")
	var opts []sdktrace.TracerProviderOption
	for _, name := range names {
		var exp sdktrace.SpanExporter
		var err error
		switch strings.TrimSpace(name) {
		case "none":
			continue
		case "otlp":
			exp, err = otlptracehttp.New(ctx)
		case "console":
			exp, err = stdouttrace.New(stdouttrace.WithWriter(console))
		default:
			return nil, fmt.Errorf("%w: OTEL_TRACES_EXPORTER %q: want otlp, console or none", ErrConfig, name)
		}
		if err != nil {
			return nil, fmt.Errorf("otelenv: %s exporter: %w", name, err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	res, err := resource.Merge(resource.NewSchemaless(attribute.String("service.name", defaultService)),
		resource.Environment()) // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	if err != nil {
		return nil, fmt.Errorf("%w: OTEL_RESOURCE_ATTRIBUTES: %v", ErrConfig, err)
	}
	return sdktrace.NewTracerProvider(append(opts, sdktrace.WithResource(res))...), nil
}
