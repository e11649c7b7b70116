// Package otelenv builds resque-go's OpenTelemetry tracer provider from
// the standard OTEL_* environment. It holds the SDK and the exporters, so
// that only the commands link them: the client and the node take any
// trace.TracerProvider.
package otelenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ErrConfig marks an OTEL_* setting resque-go cannot use.
var ErrConfig = errors.New("otelenv: bad OTEL_* setting")

// Enabled reports whether the environment asks for traces: an exporter in
// OTEL_TRACES_EXPORTER other than none, or (that variable unset) an OTLP
// endpoint. OTEL_SDK_DISABLED=true turns everything off.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	if exp == "" {
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	}
	return slices.ContainsFunc(strings.Split(exp, ","), func(e string) bool { return strings.TrimSpace(e) != "none" })
}

// FromEnv builds a tracer provider from the OTEL_* environment, or returns
// nil when Enabled says no: nothing is set up then, and nothing costs.
// Exporters: otlp (OTLP over HTTP/protobuf; OTEL_EXPORTER_OTLP_* say where
// and how) and console (one JSON document per span on console: the
// commands pass their stderr, stdout being their output). The service
// name is OTEL_SERVICE_NAME, else defaultService; OTEL_RESOURCE_ATTRIBUTES,
// OTEL_TRACES_SAMPLER and OTEL_BSP_* are read by the SDK. Shut the
// provider down before exit: it flushes the spans.
func FromEnv(ctx context.Context, getenv func(string) string, defaultService string, console io.Writer) (*sdktrace.TracerProvider, error) {
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

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
