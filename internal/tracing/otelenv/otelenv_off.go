//go:build !otel

package otelenv

import (
	"context"
	"fmt"
	"io"
)

// Built says whether this binary carries the SDK and the exporters.
const Built = false

// FromEnv sets nothing up in a build without -tags otel: when the
// environment asks for traces it says once, on console, that this binary
// has no exporter, and the command runs untraced (a fleet-wide
// OTEL_EXPORTER_OTLP_ENDPOINT must not stop workers).
func FromEnv(_ context.Context, getenv func(string) string, _ string, console io.Writer) (Provider, error) {
	if Enabled(getenv) {
		fmt.Fprintf(console, "resque-go: OTEL_* asks for traces, but this binary was built without OpenTelemetry (build it with -tags otel: make build-otel); jobs run untraced (%s)\n",
			cmpOr(getenv("OTEL_TRACES_EXPORTER"), "otlp"))
	}
	return nil, nil
}
