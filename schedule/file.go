package schedule

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/resque-go/resque-go/internal/protocol"
)

// FileError lists every bad entry of a schedule file; the entries that
// are good are returned with it.
type FileError struct {
	Path    string
	Entries []error // *EntryError
}

func (e *FileError) Error() string {
	msgs := make([]string, len(e.Entries))
	for i, err := range e.Entries {
		msgs[i] = err.Error()
	}
	what := "bad entry"
	if len(e.Entries) > 1 {
		what = fmt.Sprintf("%d bad entries", len(e.Entries))
	}
	prefix := "schedule: "
	if e.Path != "" {
		prefix += e.Path + ": "
	}
	return prefix + what + ": " + strings.Join(msgs, "; ")
}

func (e *FileError) Unwrap() []error { return e.Entries }

// LoadFile reads a resque-scheduler YAML schedule file and returns the
// entries loaded in environment (see Entry.MatchesEnv), in file order. A
// *FileError lists the bad entries (the good ones are returned with it);
// any other error means the file could not be read as a schedule.
func LoadFile(path, environment string) ([]Entry, error) {
	entries, err := ParseFile(path)
	var fe *FileError
	if err != nil && !errors.As(err, &fe) {
		return nil, err
	}
	return FilterEnv(entries, environment), err
}

// Limits of a schedule: a file larger than MaxFileSize is refused before
// it is read, and a schedule of more than MaxEntries entries before its
// entries are parsed. resque-scheduler's files hold tens of entries; these
// bounds keep a wrong file (a log, a dump) from costing a scheduler
// minutes and gigabytes to read.
const (
	MaxFileSize = 4 << 20
	MaxEntries  = 10_000
)

// ParseFile is Parse of a file's content: every entry, whatever its
// environment; errors name the file. A file over MaxFileSize is refused
// unread.
func ParseFile(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > MaxFileSize {
		return nil, fmt.Errorf("schedule: %s: %s is over the %s limit of a schedule file", path, sizeText(st.Size()), sizeText(MaxFileSize))
	}
	// read one byte past the limit: a file that grew since Stat (or a
	// pipe) is refused too
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("schedule: %s: over the %s limit of a schedule file", path, sizeText(MaxFileSize))
	}
	entries, err := Parse(data)
	var fe *FileError
	if errors.As(err, &fe) {
		fe.Path = path
	} else if err != nil {
		return nil, fmt.Errorf("schedule: %s: %w", path, err)
	}
	return entries, err
}

// FilterEnv returns the entries loaded in environment.
func FilterEnv(entries []Entry, environment string) []Entry {
	var out []Entry
	for _, e := range entries {
		if e.MatchesEnv(environment) {
			out = append(out, e)
		}
	}
	return out
}

// Parse reads a schedule in resque-scheduler's YAML form (a mapping of
// name to config) and returns every entry, whatever its environment. YAML
// is read as Ruby's Psych reads it where that changes a job's args: plain
// yes/no/on/off are booleans and :name is the string name (a symbol).
func Parse(data []byte) ([]Entry, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s is over the %s limit of a schedule", sizeText(int64(len(data))), sizeText(MaxFileSize))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil // an empty file: no schedules
	}
	root := resolve(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a mapping of schedule name to its config", root.Line)
	}
	if n := len(root.Content) / 2; n > MaxEntries {
		return nil, fmt.Errorf("%d entries: over the limit of %d entries in a schedule", n, MaxEntries)
	}
	pairs, err := mappingPairs(root, newBudget())
	if err != nil {
		return nil, err
	}
	var entries []Entry
	var bad []error
	for _, p := range pairs {
		v := resolve(p.value)
		if v.Kind != yaml.MappingNode {
			bad = append(bad, &EntryError{Name: p.key, Err: fmt.Errorf("line %d: want a mapping (class, queue, cron or every, args...)", v.Line)})
			continue
		}
		config, err := toJSON(v)
		if err != nil {
			bad = append(bad, &EntryError{Name: p.key, Err: err})
			continue
		}
		e, err := ParseEntry(p.key, config, SourceFile)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		entries = append(entries, e)
	}
	if bad != nil {
		return entries, &FileError{Entries: bad}
	}
	return entries, nil
}

// sizeText writes n bytes in MiB, or in bytes below 1 MiB.
func sizeText(n int64) string {
	if n < 1<<20 {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	if n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}

type pair struct {
	key   string
	value *yaml.Node
}

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// maxNodes bounds the YAML values one entry (and the file's top level)
// may expand to through aliases and merge keys: a mapping that merges
// itself, or aliases that multiply ("billion laughs"), is an error rather
// than a crash or a hang.
const maxNodes = 10_000

// budget counts down the values a conversion may still visit.
type budget struct{ left int }

func newBudget() *budget { return &budget{left: maxNodes} }

func (b *budget) visit(n *yaml.Node) error {
	if b.left--; b.left < 0 {
		return fmt.Errorf("line %d: aliases and merge keys expand to more than %d values (a mapping that merges itself?)", n.Line, maxNodes)
	}
	return nil
}

// mappingPairs returns a mapping's pairs in order, with merge keys (<<)
// applied the way Psych applies them (Hash#merge! at that point).
func mappingPairs(n *yaml.Node, bud *budget) ([]pair, error) {
	if err := bud.visit(n); err != nil {
		return nil, err
	}
	var out []pair
	index := map[string]int{}
	set := func(p pair) {
		if i, ok := index[p.key]; ok {
			out[i].value = p.value
			return
		}
		index[p.key] = len(out)
		out = append(out, p)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			sources := []*yaml.Node{resolve(v)}
			if sources[0].Kind == yaml.SequenceNode {
				sources = sources[0].Content
			}
			for _, src := range sources {
				src = resolve(src)
				if src.Kind != yaml.MappingNode {
					return nil, fmt.Errorf("line %d: << merges a mapping", src.Line)
				}
				merged, err := mappingPairs(src, bud)
				if err != nil {
					return nil, err
				}
				for _, p := range merged {
					set(p)
				}
			}
			continue
		}
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: a key must be a plain value", k.Line)
		}
		set(pair{key: scalarKey(k), value: v})
	}
	return out, nil
}

// scalarKey is a mapping key as a JSON object key: a Ruby symbol key
// (:first_in) loses its colon, as JSON encoding a symbol does.
func scalarKey(k *yaml.Node) string {
	if k.Style == 0 && len(k.Value) > 1 && k.Value[0] == ':' {
		return k.Value[1:]
	}
	return k.Value
}

// toJSON encodes a YAML value as JSON, keeping the order of mappings and
// integers exactly (args go into the job as written).
func toJSON(n *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, n, 0, newBudget()); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, n *yaml.Node, depth int, bud *budget) error {
	if depth > 100 {
		return fmt.Errorf("line %d: nested too deep", n.Line)
	}
	if err := bud.visit(n); err != nil {
		return err
	}
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		pairs, err := mappingPairs(n, bud)
		if err != nil {
			return err
		}
		b.WriteByte('{')
		for i, p := range pairs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(protocol.MarshalString(p.key))
			b.WriteByte(':')
			if err := writeJSON(b, p.value, depth+1, bud); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, c, depth+1, bud); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		return writeScalar(b, n)
	default:
		return fmt.Errorf("line %d: unsupported YAML node", n.Line)
	}
	return nil
}

func writeScalar(b *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		b.WriteString("null")
	case "!!bool":
		var v bool
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b.WriteString(strconv.FormatBool(v))
	case "!!int":
		var v big.Int
		if _, ok := v.SetString(n.Value, 0); !ok {
			return fmt.Errorf("line %d: %q is not an integer", n.Line, n.Value)
		}
		b.WriteString(v.String())
	case "!!float":
		var v float64
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return fmt.Errorf("line %d: %s cannot be sent in JSON", n.Line, n.Value)
		}
		b.WriteString(rubyFloat(v))
	case "!!str", "!!timestamp", "!!binary":
		if n.Style == 0 {
			// Psych (YAML 1.1) reads these plain words as booleans, and
			// :name as a symbol, which JSON writes as "name".
			switch strings.ToLower(n.Value) {
			case "yes", "on":
				b.WriteString("true")
				return nil
			case "no", "off":
				b.WriteString("false")
				return nil
			}
			if len(n.Value) > 1 && n.Value[0] == ':' {
				b.Write(protocol.MarshalString(n.Value[1:]))
				return nil
			}
		}
		b.Write(protocol.MarshalString(n.Value))
	default:
		return fmt.Errorf("line %d: unsupported YAML tag %s", n.Line, n.Tag)
	}
	return nil
}

// rubyFloat writes a float as Ruby's JSON does for the usual values: 2.0
// keeps its ".0".
func rubyFloat(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e16 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
