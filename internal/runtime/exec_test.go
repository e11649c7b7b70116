package runtime_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A job whose args exceed what one environment string may hold runs; its
// args are on stdin only.
func TestExecHugeArgs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out := filepath.Join(t.TempDir(), "out")
	big := strings.Repeat("x", 1<<20)
	payload := `{"class":"Big","args":["` + big + `"]}`
	e.reg.Register("Big", worker.ExecHandler(fmt.Sprintf(`{ wc -c; echo "${RESQUE_ARGS-unset}|$RESQUE_ARGS_OMITTED"; } > %q`, out), worker.ExecOptions{Stderr: &strings.Builder{}}))
	e.reg.Register("Small", worker.ExecHandler(fmt.Sprintf(`echo "$RESQUE_ARGS|${RESQUE_ARGS_OMITTED-unset}" >> %q`, out+".small"), worker.ExecOptions{}))
	var rec recorder
	e.push("q", payload, `{"class":"Small","args":[2]}`)
	e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Retry: noRetry})
	for _, f := range rec.waitN(t, 2) {
		if f.Failed {
			t.Fatalf("%s failed: %s", f.Class, f.Error)
		}
	}
	if got, want := strings.TrimSpace(readFile(t, out)), fmt.Sprintf("%d\nunset|1", len(payload)); got != want {
		t.Errorf("big job saw %q, want %q", got, want)
	}
	if got := readFile(t, out+".small"); got != "[2]|unset\n" {
		t.Errorf("small job saw %q", got)
	}
}
