// Package docs checks the user documentation as text: README.md's length,
// the words of README.md, CHANGELOG.md and docs/*.md, and that every link
// and cited section (docs/X.md#anchor in code, comments and Markdown)
// leads somewhere. test/e2e runs the documentation's examples.
package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/internal/doccheck"
)

// readmeBudget is the most lines README.md may have: a front page that says
// what resque-go is, how to install and start it, and links to docs/.
const readmeBudget = 400

const root = "../.."

func TestReadmeWithinBudget(t *testing.T) {
	n := len(lines(t, filepath.Join(root, "README.md")))
	if n > readmeBudget {
		t.Errorf("README.md has %d lines, more than its budget of %d: move reference material to docs/", n, readmeBudget)
	}
}

// userDocs are the files a user reads: README.md, CHANGELOG.md, docs/*.md.
func userDocs(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("docs/*.md: %v", err)
	}
	return append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "CHANGELOG.md")}, docs...)
}

// The documentation speaks of the product, the hardware and commands anyone
// can run; how the project's own work went is in git's history.
func TestDocsHaveNoProcessWords(t *testing.T) {
	for _, path := range userDocs(t) {
		for i, line := range lines(t, path) {
			if words := doccheck.ProcessWords(line); len(words) > 0 {
				t.Errorf("%s:%d: %q: state it as a fact about the product, the hardware or a command", rel(path), i+1, words)
			}
		}
	}
}

var (
	// docs/X.md or docs/X.md#anchor, as code, comments and Markdown cite them
	citation = regexp.MustCompile(`docs/([a-z0-9-]+\.md)(#[a-z0-9_-]+)?`)
	// a Markdown link's target: [text](target)
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// a section cited by its number, after the file's name or as a link's
	// text ("[section N]"): numbers change when sections move, names stay
	numbered = regexp.MustCompile(`(?:protocol|massqueue)\.md\)?,? (?:section )?[0-9]|\[sections? [0-9]`)
)

// Every cited section exists: docs/X.md#anchor in .go, .lua and .md files
// names a heading of docs/X.md, and every relative link of the Markdown
// files leads to a file that exists and, with #anchor, to one of its
// headings.
func TestCitedSectionsExist(t *testing.T) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := headingAnchors(t, path)
		anchors[path] = a
		return a
	}
	check := func(where, target, anchor string) {
		if _, err := os.Stat(target); err != nil {
			t.Errorf("%s: %s does not exist", where, rel(target))
			return
		}
		if anchor == "" {
			return
		}
		if !strings.HasSuffix(target, ".md") {
			return
		}
		if !anchorsOf(target)[anchor] {
			t.Errorf("%s: %s has no heading #%s", where, rel(target), anchor)
		}
	}
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", "fixtures":
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		if ext != ".go" && ext != ".lua" && ext != ".md" {
			return nil
		}
		for i, line := range lines(t, path) {
			where := rel(path) + ":" + itoa(i+1)
			if !strings.Contains(line, ".md") && !strings.Contains(line, "[section") {
				continue
			}
			if m := numbered.FindString(line); m != "" {
				t.Errorf("%s: %q cites a section by number: cite docs/X.md#anchor", where, m)
			}
			for _, m := range citation.FindAllStringSubmatch(line, -1) {
				n++
				check(where, filepath.Join(root, "docs", m[1]), strings.TrimPrefix(m[2], "#"))
			}
			if ext != ".md" {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				if file == "" {
					file = path
				} else {
					file = filepath.Join(filepath.Dir(path), file)
				}
				n++
				check(where, file, anchor)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Errorf("found only %d citations and links; is the pattern still right?", n)
	}
}

// headingAnchors returns the anchors GitHub makes for the headings of a
// Markdown file: the heading's text in lower case, without punctuation
// other than - and _, spaces turned into -; a repeated one gets -1, -2 ...
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	seen := map[string]int{}
	inCode := false
	for _, line := range lines(t, path) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		slug := Slug(text)
		if k := seen[slug]; k > 0 {
			out[slug+"-"+itoa(k)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// Slug is GitHub's anchor for a heading's text.
func Slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && isLetter(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isLetter(r rune) bool {
	return strings.ContainsRune("àáâäçèéêëíîïñóôöúûüß", r)
}

func TestSlug(t *testing.T) {
	for text, want := range map[string]string{
		"A worker's life":          "a-workers-life",
		"The resque-v3 namespace":  "the-resque-v3-namespace",
		"`resque-go work`":         "resque-go-work",
		"Delayed jobs: `delayed`":  "delayed-jobs-delayed",
		"Retries, reschedules and": "retries-reschedules-and",
	} {
		if got := Slug(text); got != want {
			t.Errorf("Slug(%q) = %q, want %q", text, got, want)
		}
	}
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

func rel(path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

func itoa(i int) string { return strconv.Itoa(i) }

// Code, comments and scripts speak of the product too: what a target is and
// why, not which ticket asked for it (a user has no tracker of ours).
func TestCodeHasNoProcessWords(t *testing.T) {
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch rel(path) {
			case ".git", "internal/doccheck", "test/docs", "test/interop/node/node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".lua", ".yml", ".sh", ".js":
		default:
			if d.Name() != "Makefile" {
				return nil
			}
		}
		for i, line := range lines(t, path) {
			if words := doccheck.ProcessWords(line); len(words) > 0 {
				t.Errorf("%s:%d: %q: say what the code does and why instead", rel(path), i+1, words)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
