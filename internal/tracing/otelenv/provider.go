// Package otelenv builds resque-go's OpenTelemetry tracer provider from
// the standard OTEL_* environment. The SDK and the exporters are linked
// only into a binary built with -tags otel (make build-otel): they cost a
// process about 4 MB of resident memory at start, traced or not, so the
// default build leaves them out and says so when OTEL_* asks for traces.
// The client and the node take any trace.TracerProvider either way.
package otelenv

import (
	"context"
	"errors"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// ErrConfig marks an OTEL_* setting resque-go cannot use.
var ErrConfig = errors.New("otelenv: bad OTEL_* setting")

// Provider is a tracer provider the command shuts down before it exits,
// which flushes the spans not yet exported.
type Provider interface {
	trace.TracerProvider
	Shutdown(ctx context.Context) error
}

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

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
