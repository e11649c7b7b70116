package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/resque-go/resque-go/internal/tracing/otelenv"
)

// tracerFromEnv builds the tracer provider the OTEL_* environment asks for
// (docs/tracing.md); nil when it asks for none, the default, and in a
// build without -tags otel. A setting resque-go cannot use is a usage
// error naming it.
func tracerFromEnv(ctx context.Context, console io.Writer) (otelenv.Provider, error) {
	tp, err := otelenv.FromEnv(ctx, os.Getenv, "resque-go", console)
	if errors.Is(err, otelenv.ErrConfig) {
		return nil, usageError{err}
	}
	return tp, err
}

// shutdownTracer flushes the spans not yet exported, waiting at most 5 s
// for the collector.
func shutdownTracer(tp otelenv.Provider) {
	if tp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = tp.Shutdown(ctx)
}
