package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/redistest"
)

// readmeUntested lists the commands of the ```sh blocks of README.md and
// docs/*.md that this test does not run, and why, by the start of their
// text (after any VAR=value assignments). Any other command that is not
// resque-go fails the test, so a new example is either run here or listed
// here; an entry no document uses fails it too.
var readmeUntested = map[string]string{
	"redis-server --port 6390": "starts the quick start's throwaway Redis; the test runs every example against " +
		"its own redis-server, given in REDIS_URL",
	"export REDIS_URL=":                "the test sets REDIS_URL and RESQUE_NAMESPACE for every command it runs",
	"redis-cli -p 6390 shutdown":       "stops the quick start's throwaway Redis, which the test does not start",
	"go install github.com/resque-go/": "fetches the module from the network; TestMain built the same code",
	"go install .":                     "TestMain has built the binary the other examples run",
	"make test":                        "the whole suite; this test is part of it",
	"go run ./examples/custom": "builds a second binary (slow); TestCustomBinaryGoHandler runs " +
		"examples/custom's enqueue and work the same way",
	"go run ./examples/producer": "TestExternalModuleUsesPublicPackages builds and runs examples/producer " +
		"from a module outside this one",
	"make chaos": "the full chaos ledger runs for about 11 minutes; its short version, TestChaosLedgerShort, " +
		"runs with the suite",
	"go test -count=1 -v -run TestChaosLedgerShort ./test/chaos": "runs with the suite (go test ./...)",
}

// readmeLine is one command of a ```sh block, or one line of a ```text block.
type readmeLine struct {
	line int    // 1-based line number in its file
	text string // as written, comment stripped
}

// docBlocks is what a Markdown file's fenced blocks hold for this test.
type docBlocks struct {
	cmds  []readmeLine // the commands of its ```sh blocks
	yamls []string     // the bodies of its ```yaml blocks
	texts []readmeLine // the lines of its ```text blocks (synopses)
}

// readmeBlocks returns the commands of every ```sh block, the bodies of the
// ```yaml blocks and the lines of the ```text blocks of the Markdown file
// at path, in file order.
func readmeBlocks(t *testing.T, path string) docBlocks {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	name := docName(path)
	var out docBlocks
	sc := bufio.NewScanner(f)
	lang, inBlock, n := "", false, 0
	var body strings.Builder
	var pending *readmeLine
	for sc.Scan() {
		n++
		raw := sc.Text()
		trimmed := strings.TrimSpace(raw)
		if strings.HasPrefix(trimmed, "```") {
			if !inBlock {
				inBlock, lang = true, strings.TrimPrefix(trimmed, "```")
				body.Reset()
				switch lang {
				case "bash", "shell", "console", "zsh":
					t.Errorf("%s:%d: shell example in a ```%s block: mark it ```sh so this test runs it", name, n, lang)
				}
				continue
			}
			if pending != nil {
				t.Errorf("%s:%d: command ends with a line continuation", name, pending.line)
				pending = nil
			}
			if lang == "yaml" {
				out.yamls = append(out.yamls, body.String())
			}
			inBlock = false
			continue
		}
		if !inBlock {
			continue
		}
		body.WriteString(raw + "\n")
		if lang == "text" && strings.TrimSpace(raw) != "" {
			out.texts = append(out.texts, readmeLine{line: n, text: raw})
		}
		if lang != "sh" {
			continue
		}
		text := stripComment(raw)
		if pending != nil {
			pending.text += " " + strings.TrimSpace(text)
		} else if strings.TrimSpace(text) != "" {
			pending = &readmeLine{line: n, text: strings.TrimSpace(text)}
		}
		if pending != nil {
			if cont, ok := strings.CutSuffix(pending.text, `\`); ok {
				pending.text = strings.TrimSpace(cont)
				continue
			}
			out.cmds = append(out.cmds, *pending)
			pending = nil
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// docName is path as the repository names it: README.md, docs/X.md.
func docName(path string) string {
	root, err := filepath.Abs("../..")
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(root, path); err == nil {
		return filepath.ToSlash(rel)
	}
	return path
}

// documents returns README.md, then docs/*.md in name order: the files
// whose examples this test runs.
func documents(t *testing.T) (root string, paths []string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(docs)
	return root, append([]string{filepath.Join(root, "README.md")}, docs...)
}

// stripComment drops a shell comment: a # that starts a word outside quotes.
func stripComment(s string) string {
	var quote rune
	prev := ' '
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (prev == ' ' || prev == '\t'):
			return s[:i]
		}
		prev = r
	}
	return s
}

// shellWords splits a simple command as sh would: words separated by blanks,
// '...' and "..." quoting, backslash escapes. It refuses what it does not run
// (pipes, lists, redirections, substitutions, unquoted globs), so that a
// README example it passes is one plain command.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '\'':
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, errors.New("unterminated '")
			}
			cur.WriteString(string(rs[i+1 : j]))
			inWord, i = true, j
		case r == '"':
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				switch rs[j] {
				case '$', '`':
					return nil, fmt.Errorf("%q inside \"...\" (substitution) is not run by this test", rs[j])
				case '\\':
					if j+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[j+1]) {
						j++
					}
				}
				cur.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, errors.New(`unterminated "`)
			}
			inWord, i = true, j
		case r == '\\':
			if i+1 < len(rs) {
				i++
				cur.WriteRune(rs[i])
				inWord = true
			}
		case strings.ContainsRune("|&;<>()$`*?[]{}~", r):
			return nil, fmt.Errorf("unquoted %q: the test runs plain commands only (quote it, or list the command in readmeUntested)", r)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// TestReadmeExamples runs every command of the ```sh blocks of README.md,
// then of each docs/*.md file, in order, as a user would from the
// repository root: the real binary, the job scripts of examples/jobs, the
// file's YAML block (if it has one) saved as resque.yml, all against the
// test redis-server, each file in a namespace of its own (REDIS_URL and
// RESQUE_NAMESPACE in the environment stand in for the quick start's Redis
// and "resque"). Commands that end by themselves must exit 0. Commands that
// run until stopped are stopped as the documents say once they have done
// their work: `work` with QUIT when its queues are drained, `pool` with QUIT
// when its children are up, `scheduler` with QUIT once it runs, `stats
// --watch` with INT after its first screen; they too must exit 0.
func TestReadmeExamples(t *testing.T) {
	t.Parallel()
	root, paths := documents(t)
	used := map[string]bool{}
	total := 0
	for _, path := range paths {
		name := docName(path)
		b := readmeBlocks(t, path)
		total += len(b.cmds)
		if name == "README.md" && len(b.cmds) < 5 {
			t.Fatalf("found only %d commands in README.md's ```sh blocks", len(b.cmds))
		}
		t.Run(name, func(t *testing.T) { runDocument(t, root, name, b, used) })
	}
	if total < 40 {
		t.Errorf("found only %d commands in the ```sh blocks of README.md and docs/*.md", total)
	}
	if !t.Failed() {
		for prefix := range readmeUntested {
			if !used[prefix] {
				t.Errorf("readmeUntested lists %q, which no document's ```sh block has: remove it", prefix)
			}
		}
	}
}

// runDocument runs the commands of one document in order, in a directory
// of its own and a namespace of its own.
func runDocument(t *testing.T, root, name string, b docBlocks, used map[string]bool) {
	// A document that shows a YAML block has the reader save it as resque.yml.
	if len(b.yamls) > 1 {
		t.Fatalf("%s has %d ```yaml blocks; the test saves at most one, as resque.yml", name, len(b.yamls))
	}
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "examples"), filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	if len(b.yamls) == 1 {
		if err := os.WriteFile(filepath.Join(dir, "resque.yml"), []byte(b.yamls[0]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ns := redistest.Namespace(t)
	r := &readmeRunner{t: t, dir: dir, ns: ns, c: client(t, ns)}
	var untested []string
	for _, cmd := range b.cmds {
		where := fmt.Sprintf("%s:%d: %s", name, cmd.line, cmd.text)
		if prefix, reason, ok := untestedReason(cmd.text); ok {
			used[prefix] = true
			untested = append(untested, fmt.Sprintf("%s (%s)", where, reason))
			continue
		}
		words, err := shellWords(cmd.text)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		var env []string
		for len(words) > 0 && isAssignment(words[0]) {
			env, words = append(env, words[0]), words[1:]
		}
		if len(words) == 0 {
			continue
		}
		var args []string
		switch {
		case words[0] == "./resque-go" || words[0] == "resque-go":
			args = words[1:]
		case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == ".":
			args = words[3:] // `go run .` builds the binary TestMain built
		default:
			if prefix, reason, ok := untestedReason(strings.Join(words, " ")); ok {
				used[prefix] = true
				untested = append(untested, fmt.Sprintf("%s (%s)", where, reason))
				continue
			}
			t.Errorf("%s: not a resque-go command; run it in this test or list it in readmeUntested", where)
			continue
		}
		r.run(where, env, args)
		if t.Failed() {
			break // later examples build on this one
		}
	}
	for _, u := range untested {
		t.Logf("not run: %s", u)
	}
}

// TestReadmeSynopses checks the command lines the ```text blocks of
// README.md and docs/*.md show (synopses such as `resque-go queue peek
// [--offset N] QUEUE`): each names a command that exists, and each --flag it
// shows is one that command takes, as its --help lists it.
func TestReadmeSynopses(t *testing.T) {
	t.Parallel()
	_, paths := documents(t)
	helps := map[string]string{}
	checked := 0
	for _, path := range paths {
		name := docName(path)
		for _, l := range readmeBlocks(t, path).texts {
			for _, syn := range synopses(l.text) {
				where := fmt.Sprintf("%s:%d: resque-go %s", name, l.line, strings.Join(syn.path, " "))
				key := strings.Join(syn.path, " ")
				help, ok := helps[key]
				if !ok {
					code, out := runCLI(t, append(append([]string{}, syn.path...), "--help")...)
					if code != 0 {
						t.Errorf("%s: no such command (--help exits %d):\n%s", where, code, out)
						helps[key] = ""
						continue
					}
					help, helps[key] = out, out
				}
				if help == "" {
					continue
				}
				checked++
				for _, f := range syn.flags {
					if !regexp.MustCompile(`(^|[\s,])` + regexp.QuoteMeta(f) + `([\s,=]|$)`).MatchString(help) {
						t.Errorf("%s: shows %s, which its --help does not list", where, f)
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked only %d synopses in the ```text blocks", checked)
	}
}

// synopsis is one `resque-go ...` command line of a ```text block: the
// command's path (its words before the first flag or argument) and the
// --flags it shows.
type synopsis struct {
	path  []string
	flags []string
}

// synopses finds each `resque-go` command in a line of a ```text block. A
// command ends at a | (alternatives, pipes), ; or ) or a # comment.
func synopses(line string) []synopsis {
	var out []synopsis
	rest := line
	for {
		i := strings.Index(rest, "resque-go ")
		if i < 0 {
			return out
		}
		rest = rest[i+len("resque-go "):]
		seg := rest
		if j := strings.IndexAny(seg, "|;)#"); j >= 0 {
			seg = seg[:j]
		}
		var syn synopsis
		inPath := true
		for _, w := range strings.Fields(seg) {
			if inPath && regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(w) {
				syn.path = append(syn.path, w)
				continue
			}
			inPath = false
			if m := regexp.MustCompile(`--[a-z][a-z0-9-]*`).FindString(w); m != "" {
				syn.flags = append(syn.flags, m)
			}
		}
		if len(syn.path) > 0 {
			out = append(out, syn)
		}
	}
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func untestedReason(text string) (prefix, reason string, ok bool) {
	for p, r := range readmeUntested {
		if strings.HasPrefix(text, p) {
			return p, r, true
		}
	}
	return "", "", false
}

// readmeRunner runs README commands in one namespace, in order.
type readmeRunner struct {
	t   *testing.T
	dir string
	ns  string
	c   *rdb.Client
}

func (r *readmeRunner) command(ctx context.Context, env, args []string) (*exec.Cmd, *syncBuffer) {
	// A README command that names a Redis is pointed at the test server.
	args = append([]string(nil), args...)
	for i, a := range args {
		if a == "--redis" && i+1 < len(args) {
			args[i+1] = redisURL
		} else if strings.HasPrefix(a, "--redis=") {
			args[i] = "--redis=" + redisURL
		}
	}
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = r.dir
	cmd.Env = append(append(os.Environ(), "REDIS_URL="+redisURL, "RESQUE_NAMESPACE="+r.ns), env...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = time.Second
	return cmd, out
}

func (r *readmeRunner) run(where string, env, args []string) {
	t := r.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd, out := r.command(ctx, env, args)
	ready, sig := r.untilStopped(env, args)
	if ready == nil {
		if err := cmd.Run(); err != nil {
			t.Errorf("%s: %v\n%s", where, err, out.String())
			return
		}
		t.Logf("ran %s", where)
		return
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(15 * time.Second)
	for !ready(cmd.Process.Pid, out) {
		select {
		case err := <-done:
			t.Errorf("%s: exited before it was stopped (%v)\n%s", where, err, out.String())
			return
		case <-time.After(20 * time.Millisecond): // bounded poll
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: not ready within 15 s\n%s", where, out.String())
			_ = cmd.Process.Kill()
			<-done
			return
		}
	}
	_ = cmd.Process.Signal(sig)
	if err := <-done; err != nil {
		t.Errorf("%s: after %v: %v\n%s", where, sig, err, out.String())
		return
	}
	t.Logf("ran %s (stopped with %v)", where, sig)
}

// untilStopped says whether a command runs until it is stopped; if so it
// returns when it has done what the README shows and the signal that stops
// it the way the README says.
func (r *readmeRunner) untilStopped(env, args []string) (ready func(pid int, out *syncBuffer) bool, sig syscall.Signal) {
	if len(args) == 0 || hasFlag(args, "--help", "-h") {
		return nil, 0
	}
	switch args[0] {
	case "work":
		spec := flagValue(args, "--queues", "-q")
		for _, e := range env {
			if v, ok := strings.CutPrefix(e, "QUEUES="); ok && spec == "" {
				spec = v
			} else if v, ok := strings.CutPrefix(e, "QUEUE="); ok && spec == "" {
				spec = v
			}
		}
		return func(pid int, _ *syncBuffer) bool { return r.workerDrained(pid, spec) }, syscall.SIGQUIT
	case "pool":
		if len(args) > 1 && (args[1] == "check" || args[1] == "status") {
			return nil, 0
		}
		return func(pid int, _ *syncBuffer) bool { return r.poolUp(pid) }, syscall.SIGQUIT
	case "scheduler":
		return func(pid int, _ *syncBuffer) bool { return r.schedulerUp(pid) }, syscall.SIGQUIT
	case "stats":
		if hasFlag(args, "--watch", "-w") {
			return func(_ int, out *syncBuffer) bool { return out.String() != "" }, syscall.SIGINT
		}
	}
	return nil, 0
}

// schedulerUp: the scheduler process published its runtime record.
func (r *readmeRunner) schedulerUp(pid int) bool {
	keys, err := r.c.ScanKeys(context.Background(), r.c.Keys().SchedulerPattern())
	if err != nil {
		return false
	}
	for _, key := range keys {
		if _, p, ok := r.c.Keys().ParseSchedulerRecord(key); ok && p == pid {
			return true
		}
	}
	return false
}

// workerDrained: the process registered its worker ids, the queues it
// watches are empty, and none of its slots holds a job, in two reads 200 ms
// apart with stat:processed unchanged between them (a read that falls
// between a job's retry and its next attempt is not enough).
func (r *readmeRunner) workerDrained(pid int, spec string) bool {
	processed := func() string {
		v, _ := r.c.Do(context.Background(), "GET", r.c.Keys().StatProcessed())
		if b, ok := v.([]byte); ok {
			return string(b)
		}
		return ""
	}
	before := processed()
	if !r.workerIdle(pid, spec) {
		return false
	}
	<-time.After(200 * time.Millisecond)
	return r.workerIdle(pid, spec) && processed() == before
}

func (r *readmeRunner) workerIdle(pid int, spec string) bool {
	ctx := context.Background()
	k := r.c.Keys()
	ids, err := r.c.Do(ctx, "SMEMBERS", k.Workers())
	if err != nil {
		return false
	}
	registered := false
	for _, id := range strs(ids) {
		wid, err := protocol.ParseWorkerID(id)
		if err != nil || wid.PID != pid {
			continue
		}
		registered = true
		if held, err := r.c.Do(ctx, "EXISTS", k.Worker(id)); err != nil || held.(int64) != 0 {
			return false
		}
	}
	if !registered {
		return false
	}
	qs, err := protocol.ParseQueueSpec(spec)
	if err != nil {
		r.t.Errorf("work -q %q: %v", spec, err)
		return true
	}
	known, err := r.c.Do(ctx, "SMEMBERS", k.Queues())
	if err != nil {
		return false
	}
	for _, q := range qs.Expand(strs(known)) {
		n, err := r.c.Do(ctx, "LLEN", k.Queue(q))
		if err != nil || n.(int64) != 0 {
			return false
		}
	}
	return true
}

// poolUp: the manager published its status record and every child it lists
// has registered its worker ids.
func (r *readmeRunner) poolUp(pid int) bool {
	ctx := context.Background()
	k := r.c.Keys()
	keys, err := r.c.Do(ctx, "KEYS", k.PoolManagerPattern())
	if err != nil {
		return false
	}
	var rec protocol.PoolRecord
	found := false
	for _, key := range strs(keys) {
		if _, p, ok := k.ParsePoolManager(key); ok && p == pid {
			v, err := r.c.Do(ctx, "GET", key)
			if err != nil || v == nil {
				return false
			}
			if rec, err = protocol.ParsePoolRecord(v.([]byte)); err != nil {
				return false
			}
			found = true
		}
	}
	if !found || len(rec.Children) == 0 {
		return false
	}
	ids, err := r.c.Do(ctx, "SMEMBERS", k.Workers())
	if err != nil {
		return false
	}
	pids := map[int]bool{}
	for _, id := range strs(ids) {
		if wid, err := protocol.ParseWorkerID(id); err == nil {
			pids[wid.PID] = true
		}
	}
	for _, c := range rec.Children {
		if c.PID == 0 || !pids[c.PID] {
			return false
		}
	}
	return true
}

func hasFlag(args []string, names ...string) bool {
	for _, a := range args {
		for _, n := range names {
			if a == n || strings.HasPrefix(a, n+"=") {
				return true
			}
		}
	}
	return false
}

func flagValue(args []string, names ...string) string {
	for i, a := range args {
		for _, n := range names {
			if a == n && i+1 < len(args) {
				return args[i+1]
			}
			if v, ok := strings.CutPrefix(a, n+"="); ok {
				return v
			}
		}
	}
	return ""
}
