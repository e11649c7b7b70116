package cli

import (
	"context"
	"encoding/json"
	"testing"
)

const testTraceID, testParent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"

// traceEnqueuer runs enqueue with TRACEPARENT set to testTraceID and
// testParent and returns its exit code, the payload it printed and its
// stderr. The caller must not be parallel: it sets the environment.
func traceEnqueuer(t *testing.T) func(extra ...string) (int, map[string]any, string) {
	t.Helper()
	e := newCLIEnv(t)
	t.Setenv("TRACEPARENT", "00-"+testTraceID+"-"+testParent+"-01")
	t.Setenv("TRACESTATE", "")
	return func(extra ...string) (int, map[string]any, string) {
		t.Helper()
		out, errOut := newSyncBuffer(), newSyncBuffer()
		code := runCommand(context.Background(), enqueueCommand(), append(append(e.redisArgs(), "--queue", "mail", "--class", "Job"), extra...), out, errOut)
		var p map[string]any
		if code == ExitOK {
			if err := json.Unmarshal([]byte(out.String()), &p); err != nil {
				t.Fatalf("payload %q: %v", out.String(), err)
			}
		}
		return code, p, errOut.String()
	}
}
