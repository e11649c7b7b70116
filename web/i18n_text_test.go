package web

import (
	"go/ast"
	"go/parser"
	"go/token"
	"html/template"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template/parse"
)

// Every word of the dashboard goes through the catalogue: a template's own
// text outside {{$.T}} and {{$.Tf}} would be English on a German page.

// textAllowed are the words a template may hold as they are: names, not
// words of a language.
var textAllowed = map[string]bool{"resque": true, "go": true, "Redis": true, "UTC": true}

// visibleAttrs are the attributes a reader sees or hears.
var visibleAttrs = regexp.MustCompile(`(?i)\b(title|placeholder|aria-label|alt|label)\s*=\s*"([^"]*)"`)

var (
	tagRe    = regexp.MustCompile(`<[^>]*>`)
	codeRe   = regexp.MustCompile(`(?s)<code>.*?</code>`)
	entityRe = regexp.MustCompile(`&[a-zA-Z]+;|&#[0-9]+;`)
	wordRe   = regexp.MustCompile(`\p{L}+`)
	buttonRe = regexp.MustCompile(`(?i)<input[^>]*type="(submit|button|reset)"[^>]*value="([^"]*)"`)
	// action marks where a template action was in the text
	action = "\x01"
)

// templateSources are the parsed templates of templates/*.html, by file.
func templateSources(t *testing.T) map[string]*template.Template {
	t.Helper()
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil || len(names) == 0 {
		t.Fatalf("templates: %v %v", names, err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		b, err := fs.ReadFile(templateFS, n)
		if err != nil {
			t.Fatal(err)
		}
		tt, err := template.New(n).Funcs(templateFuncs("/")).Parse(string(b))
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out[n] = tt
	}
	return out
}

// walk visits every node of a tree: text with actions marked, and the
// string keys given to T and Tf.
func walk(n parse.Node, text *strings.Builder, keys map[string]bool) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walk(c, text, keys)
		}
	case *parse.TextNode:
		text.Write(n.Text)
	case *parse.ActionNode:
		text.WriteString(action)
		pipeKeys(n.Pipe, keys)
	case *parse.IfNode:
		text.WriteString(action)
		pipeKeys(n.Pipe, keys)
		walk(n.List, text, keys)
		text.WriteString(action)
		walk(n.ElseList, text, keys)
	case *parse.RangeNode:
		text.WriteString(action)
		pipeKeys(n.Pipe, keys)
		walk(n.List, text, keys)
		text.WriteString(action)
		walk(n.ElseList, text, keys)
	case *parse.WithNode:
		text.WriteString(action)
		pipeKeys(n.Pipe, keys)
		walk(n.List, text, keys)
		text.WriteString(action)
		walk(n.ElseList, text, keys)
	case *parse.TemplateNode:
		text.WriteString(action)
	}
}

// pipeKeys adds the string literals given to T or Tf in p.
func pipeKeys(p *parse.PipeNode, keys map[string]bool) {
	if p == nil {
		return
	}
	for _, c := range p.Cmds {
		if len(c.Args) >= 2 && isT(c.Args[0]) {
			if s, ok := c.Args[1].(*parse.StringNode); ok {
				keys[s.Text] = true
			}
		}
		for _, a := range c.Args {
			if sub, ok := a.(*parse.PipeNode); ok {
				pipeKeys(sub, keys)
			}
		}
	}
}

func isT(n parse.Node) bool {
	var ident []string
	switch n := n.(type) {
	case *parse.FieldNode:
		ident = n.Ident
	case *parse.VariableNode:
		ident = n.Ident
	}
	return len(ident) > 0 && (ident[len(ident)-1] == "T" || ident[len(ident)-1] == "Tf")
}

// bareWords are the words of text a reader sees that are not in an action.
func bareWords(text string) []string {
	var out []string
	words := func(s string) {
		s = entityRe.ReplaceAllString(strings.ReplaceAll(s, action, " "), " ")
		for _, w := range wordRe.FindAllString(s, -1) {
			if !textAllowed[w] {
				out = append(out, w)
			}
		}
	}
	text = codeRe.ReplaceAllString(text, " ") // commands, as they are typed
	for _, tag := range tagRe.FindAllString(text, -1) {
		for _, m := range visibleAttrs.FindAllStringSubmatch(tag, -1) {
			words(m[2])
		}
		for _, m := range buttonRe.FindAllStringSubmatch(tag, -1) {
			words(m[2])
		}
	}
	words(tagRe.ReplaceAllString(text, " "))
	return out
}

func TestI18nTemplatesHaveNoBareText(t *testing.T) {
	for name, tt := range templateSources(t) {
		for _, sub := range tt.Templates() {
			if sub.Tree == nil {
				continue
			}
			var text strings.Builder
			walk(sub.Tree.Root, &text, map[string]bool{})
			if w := bareWords(text.String()); len(w) > 0 {
				t.Errorf("%s (%s): text outside $.T: %q", name, sub.Name(), w)
			}
		}
	}
}

// The check itself finds what it is for.
func TestI18nBareTextCheck(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{`<th>Queue</th>`, []string{"Queue"}},
		{`<button title="stop it">` + action + `</button>`, []string{"stop", "it"}},
		{`<input type="submit" value="Go on">`, []string{"Go", "on"}},
		{`<input aria-label="weight">`, []string{"weight"}},
		{`<td class="num">` + action + `</td><h2>Redis</h2> · — 1 / 2 &amp; <code>resque-go delayed remove</code>`, nil},
		{`<input type="hidden" name="queue" value="failed">`, nil},
	} {
		if got := bareWords(c.text); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.text, got, c.want)
		}
	}
}

// dynamicKeys are catalogue keys a template or the server looks up by a
// value: roles, job states, chart periods, error page titles, app.js.
func dynamicKeys() []string {
	keys := []string{"viewer", "operator", "admin",
		"held", "queued", "failed", "dropped", "succeeded", "discarded", "pending",
		"per minute", "per hour", "per day"}
	for _, code := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
		http.StatusMethodNotAllowed, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable} {
		keys = append(keys, http.StatusText(code))
	}
	return append(keys, scriptWords()...)
}

// goKeys are the catalogue keys of the server's own messages: formats
// given to tf, count and titled, page titles given to render, and error
// texts given to fail.
func goKeys(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	fset := token.NewFileSet()
	lit := func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.BasicLit:
			if s, err := strconv.Unquote(e.Value); err == nil && e.Kind == token.STRING {
				keys[s] = true
			}
		case *ast.IndexExpr: // map[string]string{"retry": "...", ...}[op]
			if cl, ok := e.X.(*ast.CompositeLit); ok {
				for _, el := range cl.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						if b, ok := kv.Value.(*ast.BasicLit); ok {
							s, _ := strconv.Unquote(b.Value)
							keys[s] = true
						}
					}
				}
			}
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			name := ""
			switch fn := call.Fun.(type) {
			case *ast.SelectorExpr:
				name = fn.Sel.Name
			case *ast.Ident:
				name = fn.Name
			}
			switch {
			case name == "tf" && len(call.Args) >= 2:
				lit(call.Args[1])
			case name == "count" && len(call.Args) == 4:
				lit(call.Args[2])
				lit(call.Args[3])
			case name == "titled" && len(call.Args) == 2:
				lit(call.Args[0])
			case name == "render" && len(call.Args) == 7:
				lit(call.Args[4])
			case name == "fail" && len(call.Args) == 4:
				lit(call.Args[3])
			}
			return true
		})
	}
	return keys
}

// usedKeys are every catalogue key the dashboard looks up.
func usedKeys(t *testing.T) map[string]bool {
	keys := goKeys(t)
	for _, tt := range templateSources(t) {
		for _, sub := range tt.Templates() {
			if sub.Tree != nil {
				walk(sub.Tree.Root, &strings.Builder{}, keys)
			}
		}
	}
	for _, k := range dynamicKeys() {
		keys[k] = true
	}
	return keys
}

var verbRe = regexp.MustCompile(`%[-+# 0]*[0-9]*(\.[0-9]+)?[a-zA-Z%]`)

func TestI18nEveryKeyHasGerman(t *testing.T) {
	de := messagesDE()
	used := usedKeys(t)
	if len(used) < 200 {
		t.Fatalf("only %d keys found: the extraction is broken", len(used))
	}
	for _, k := range slices.Sorted(maps.Keys(used)) {
		g, ok := de[k]
		switch {
		case !ok:
			t.Errorf("no German for %q", k)
		case strings.TrimSpace(g) == "":
			t.Errorf("empty German for %q", k)
		case !slices.Equal(verbRe.FindAllString(k, -1), verbRe.FindAllString(g, -1)):
			t.Errorf("German for %q has other verbs: %q", k, g)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(de)) {
		if !used[k] {
			t.Errorf("German for %q, which nothing looks up", k)
		}
	}
}
