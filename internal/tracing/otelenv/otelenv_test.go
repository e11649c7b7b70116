//go:build otel

package otelenv

import (
	"context"
	"errors"
	"io"
	"testing"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// Tracing is off unless the environment names an exporter or an OTLP
// endpoint; off, FromEnv sets nothing up.
func TestEnabled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_SERVICE_NAME": "x"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none,console"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}, false},
	} {
		if got := Enabled(envOf(tc.env)); got != tc.want {
			t.Errorf("%v: Enabled %v, want %v", tc.env, got, tc.want)
		}
		tp, err := FromEnv(context.Background(), envOf(tc.env), "resque-go", io.Discard)
		if err != nil || (tp != nil) != tc.want {
			t.Errorf("%v: FromEnv %v, %v", tc.env, tp, err)
		}
		if tp != nil {
			_ = tp.Shutdown(context.Background())
		}
	}
	for _, env := range []map[string]string{
		{"OTEL_TRACES_EXPORTER": "jaeger"},
		{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
	} {
		if _, err := FromEnv(context.Background(), envOf(env), "resque-go", io.Discard); !errors.Is(err, ErrConfig) {
			t.Errorf("%v: FromEnv error %v, want ErrConfig", env, err)
		}
	}
}
