package poolrun

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// Bounds of what a tail keeps and passes.
const (
	tailLines    = 5        // last lines kept
	tailLineMax  = 512      // bytes kept of one line
	pipeAtomic   = 4096     // PIPE_BUF: a write of at most this much is not interleaved with others
	pendingLimit = 64 << 10 // an unterminated line longer than this is passed on as it is
)

// tail is a child's stderr: it passes what the child writes to the
// manager's stderr, whole lines per write so that the lines of several
// children do not interleave mid-line, and keeps the last lines, whose last
// one is the reason a child that exits at once gives ("resque-go: ...").
type tail struct {
	mu      sync.Mutex
	dst     io.Writer
	pending []byte // the start of a line whose end has not come yet
	lines   []string
}

func newTail(dst io.Writer) *tail { return &tail{dst: dst} }

// Write never fails: a manager whose stderr is broken must not make the
// child's writes fail.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.pending = append(t.pending, p...)
	end := bytes.LastIndexByte(t.pending, '\n') + 1
	if end == 0 && len(t.pending) > pendingLimit {
		end = len(t.pending)
	}
	if end > 0 {
		t.emit(t.pending[:end])
		t.pending = append(t.pending[:0], t.pending[end:]...)
	}
	return len(p), nil
}

// Flush passes on an unterminated last line; the child has exited.
func (t *tail) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) > 0 {
		t.emit(t.pending)
		t.pending = nil
	}
}

// emit keeps the lines of b and writes b in writes of at most pipeAtomic
// bytes that end at a line end where one fits.
func (t *tail) emit(b []byte) {
	for _, line := range strings.Split(string(b), "\n") {
		if line = cleanLine(line); line != "" {
			if len(t.lines) == tailLines {
				t.lines = append(t.lines[:0], t.lines[1:]...)
			}
			t.lines = append(t.lines, line)
		}
	}
	for len(b) > 0 {
		n := len(b)
		if n > pipeAtomic {
			if n = bytes.LastIndexByte(b[:pipeAtomic], '\n') + 1; n == 0 { // one long line
				if n = bytes.IndexByte(b, '\n') + 1; n == 0 {
					n = len(b)
				}
			}
		}
		if _, err := t.dst.Write(b[:n]); err != nil {
			return
		}
		b = b[n:]
	}
}

// Reason is the child's last stderr line as a reason for its exit ("" when
// it wrote none): a JSON log line is shortened to its message and error.
// The line a usage error ends with, where to read the usage, is passed
// over for the error before it.
func (t *tail) Reason() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.lines)
	if n > 1 && strings.HasPrefix(t.lines[n-1], "Run '") && strings.Contains(t.lines[n-1], " --help' for ") {
		n--
	}
	if n == 0 {
		return ""
	}
	return reason(t.lines[n-1])
}

// reason turns a zerolog JSON line into "message: error"; other lines are
// kept as they are.
func reason(line string) string {
	if !strings.HasPrefix(line, "{") {
		return line
	}
	var ev struct {
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal([]byte(line), &ev) != nil || ev.Message == "" {
		return line
	}
	if ev.Error != "" {
		return ev.Message + ": " + ev.Error
	}
	return ev.Message
}

var (
	ansiEscape = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`) })
	// urlPassword matches the password of a URL (redis://:pw@host).
	urlPassword = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(://[^:/@\s]*:)[^@/\s]+@`) })
)

// cleanLine makes a stderr line fit for a log field and the status record:
// no colours (console logs have them), no URL password, valid UTF-8, at
// most tailLineMax bytes.
func cleanLine(s string) string {
	s = ansiEscape().ReplaceAllString(s, "")
	s = urlPassword().ReplaceAllString(s, "${1}xxx@")
	s = strings.TrimSpace(strings.ToValidUTF8(s, "?"))
	if len(s) > tailLineMax {
		cut := tailLineMax
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}
