package poolrun

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/pool"
)

// lockedBuffer is a goroutine-safe bytes.Buffer.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A child that fails at start: its last stderr line is the reason shown in
// the exit's log event, the event, the status and the status record, and
// its stderr still reaches the manager's. It used to show only "exit
// status 1".
func TestSupervisorShowsWhyAChildFails(t *testing.T) {
	t.Parallel()
	const reason = "resque-go: start: redis://:xxx@127.0.0.1:1: NOAUTH Authentication required."
	stderr, logs := &lockedBuffer{}, &lockedBuffer{}
	h := newHarness(t, "workers:\n  refused: 1\n", func(p *Params) {
		p.Stderr = stderr
		l := zerolog.New(logs)
		p.Logger = &l
	})
	h.sup.Start(context.Background())
	evs := h.waitFor("3 exits", func(evs []pool.Event) bool { return count(evs, pool.EventExited, "refused") >= 3 })
	for _, e := range evs {
		if e.Kind == pool.EventExited && e.Reason != reason {
			t.Errorf("exit event reason %q, want %q", e.Reason, reason)
		}
	}
	redistest.Eventually(t, 0, func() bool {
		c := h.sup.Status().Children[0]
		return c.State == pool.ChildCrashLoop && c.LastExit == "exit status 1" && c.LastExitReason == reason
	}, "crashloop with the reason")
	key := h.client.Keys().PoolManager("pool-test", h.sup.p.PID)
	redistest.Eventually(t, 0, func() bool {
		v, err := h.client.Do(context.Background(), "GET", key)
		if err != nil || v == nil {
			return false
		}
		rec, err := protocol.ParsePoolRecord(v.([]byte))
		return err == nil && len(rec.Children) == 1 && rec.Children[0].LastExitReason == reason &&
			rec.Children[0].State == pool.ChildCrashLoop
	}, "the reason in the status record")
	h.sup.Shutdown()
	if !strings.Contains(logs.String(), `"exit":"exit status 1","exit_reason":"`+reason+`"`) {
		t.Errorf("the exit's log event lacks the reason:\n%s", logs.String())
	}
	// Passed through as written, the last line completed with its newline.
	out := stderr.String()
	if !strings.Contains(out, "\x1b[33mWRN\x1b[0m no handler registered\n") ||
		!strings.Contains(out, "resque-go: start: redis://:sekret@127.0.0.1:1: NOAUTH Authentication required.") {
		t.Errorf("stderr not passed through:\n%q", out)
	}
}

func TestReasonCleansTheLine(t *testing.T) {
	for in, want := range map[string]string{
		"resque-go: start: dial tcp 127.0.0.1:1: connect: connection refused":                                               "resque-go: start: dial tcp 127.0.0.1:1: connect: connection refused",
		"\x1b[90m2026-01-02T03:04:05Z\x1b[0m \x1b[31mERR\x1b[0m \x1b[1mcannot start\x1b[0m":                                 "2026-01-02T03:04:05Z ERR cannot start",
		`{"level":"warn","error":"rdb: NOAUTH Authentication required.","time":"x","message":"runtime record not written"}`: "runtime record not written: rdb: NOAUTH Authentication required.",
		`{"level":"info","message":"stopped"}`:                                                                              "stopped",
		`{"not":"a log line"}`:                                                                                              `{"not":"a log line"}`,
		"  redis://user:pa55@host:6379/0 and rediss://:x@h  ":                                                               "redis://user:xxx@host:6379/0 and rediss://:xxx@h",
		"bad \xff utf-8":         "bad ? utf-8",
		strings.Repeat("é", 400): strings.Repeat("é", 256) + "...",
	} {
		if got := reason(cleanLine(in)); got != want {
			t.Errorf("reason(%q) = %q, want %q", in, got, want)
		}
	}
}

// Lines reach the manager's stderr whole, one or more per write, however
// the child's writes split them; the tail keeps the last lines.
func TestTailPassesWholeLines(t *testing.T) {
	var writes []string
	dst := writerFunc(func(p []byte) (int, error) {
		writes = append(writes, string(p))
		return len(p), nil
	})
	tl := newTail(dst)
	for _, chunk := range []string{"one\ntw", "o\nthr", "ee", "\n", "\n\n", strings.Repeat("x", 5000) + "\n" + strings.Repeat("y", 10) + "\nlast"} {
		if n, err := tl.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	tl.Flush()
	for i, w := range writes {
		if i < len(writes)-1 && !strings.HasSuffix(w, "\n") {
			t.Errorf("write %d ends mid-line: %q", i, w)
		}
		if len(w) > pipeAtomic && strings.Count(w, "\n") > 1 {
			t.Errorf("write %d is %d bytes of several lines", i, len(w))
		}
	}
	if got, want := strings.Join(writes, ""), "one\ntwo\nthree\n\n\n"+strings.Repeat("x", 5000)+"\n"+strings.Repeat("y", 10)+"\nlast"; got != want {
		t.Errorf("passed %q", got)
	}
	if tl.Reason() != "last" || len(tl.lines) != tailLines {
		t.Errorf("reason %q, lines %q", tl.Reason(), tl.lines)
	}
	// A broken manager stderr does not fail the child's writes.
	broken := newTail(writerFunc(func([]byte) (int, error) { return 0, context.Canceled }))
	if n, err := broken.Write([]byte("x\n")); n != 2 || err != nil {
		t.Errorf("Write to a broken stderr = %d, %v", n, err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A child's usage error ends with where to read the usage: its reason is
// the error line before it.
func TestTailReasonSkipsUsageHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ out, want string }{
		{"resque-go: --metrics-addr \"x\": bad\nRun 'resque-go work --help' for usage.\n", `resque-go: --metrics-addr "x": bad`},
		{"resque-go: flag provided but not defined: -x\n", "resque-go: flag provided but not defined: -x"},
		{"Run 'resque-go work --help' for usage.\n", "Run 'resque-go work --help' for usage."},
	} {
		tl := newTail(io.Discard)
		if _, err := tl.Write([]byte(tc.out)); err != nil {
			t.Fatal(err)
		}
		tl.Flush()
		if got := tl.Reason(); got != tc.want {
			t.Errorf("%q: reason %q, want %q", tc.out, got, tc.want)
		}
	}
}
