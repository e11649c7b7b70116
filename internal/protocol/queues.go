package protocol

import (
	"fmt"
	"sort"
	"strings"
)

// QueueSpec is the queue list a worker was given, e.g. "critical,*,!low*".
type QueueSpec struct {
	patterns []string
	dynamic  bool
}

// ParseQueueSpec parses a comma-separated queue list. Empty entries are
// dropped; a list with no queue at all is an error. Patterns are checked here
// so a typo fails at start-up, not at the first expansion.
func ParseQueueSpec(list string) (QueueSpec, error) {
	var s QueueSpec
	include := false
	for _, p := range splitTopLevel(list) {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if _, err := compileGlob(strings.TrimPrefix(p, "!")); err != nil {
			return QueueSpec{}, fmt.Errorf("protocol: queue pattern %q: %w", p, err)
		}
		if IsGlob(p) {
			s.dynamic = true
		}
		include = include || !strings.HasPrefix(p, "!")
		s.patterns = append(s.patterns, p)
	}
	if len(s.patterns) == 0 {
		return QueueSpec{}, fmt.Errorf("protocol: no queue given (want e.g. high,low or *)")
	}
	if !include {
		return QueueSpec{}, fmt.Errorf("protocol: queue list %q only excludes; add the queues to include, e.g. *,%s", list, list)
	}
	return s, nil
}

// String is the list as given, joined with ",": the third part of worker ids.
func (s QueueSpec) String() string { return strings.Join(s.patterns, ",") }

// Dynamic reports whether the spec needs the queues set to expand.
func (s QueueSpec) Dynamic() bool { return s.dynamic }

// Expand resolves the spec against the known queue names with Ruby's rules:
// given order is priority order; each glob adds its matches in alphabetical
// order, skipping queues already listed; a "!" pattern removes its matches
// from the whole result.
func (s QueueSpec) Expand(known []string) []string {
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	var out []string
	seen := map[string]bool{}
	var excludes []glob
	for _, p := range s.patterns {
		if rest, ok := strings.CutPrefix(p, "!"); ok {
			g, _ := compileGlob(rest)
			excludes = append(excludes, g)
			continue
		}
		if !IsGlob(p) {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
			continue
		}
		g, _ := compileGlob(p)
		for _, q := range sorted {
			if !seen[q] && g.match(q) {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	if len(excludes) == 0 {
		return out
	}
	kept := out[:0]
	for _, q := range out {
		drop := false
		for _, g := range excludes {
			drop = drop || g.match(q)
		}
		if !drop {
			kept = append(kept, q)
		}
	}
	return kept
}

// IsGlob reports whether p uses glob syntax or is an exclusion.
func IsGlob(p string) bool { return strings.ContainsAny(p, "*?[]{}!") }

// MatchGlob matches name against an fnmatch-style pattern: * and ? (which
// also match ":" and "/", as Ruby's File.fnmatch without FNM_PATHNAME),
// [a-z] and [!a-z] classes, {a,b} alternatives and backslash escapes.
func MatchGlob(pattern, name string) (bool, error) {
	g, err := compileGlob(pattern)
	if err != nil {
		return false, err
	}
	return g.match(name), nil
}

type glob struct{ alts []string }

func compileGlob(p string) (glob, error) {
	alts, err := expandBraces(p)
	if err != nil {
		return glob{}, err
	}
	for _, a := range alts {
		if _, err := matchSimple(a, ""); err != nil {
			return glob{}, err
		}
	}
	return glob{alts: alts}, nil
}

func (g glob) match(name string) bool {
	for _, a := range g.alts {
		if ok, _ := matchSimple(a, name); ok {
			return true
		}
	}
	return false
}

// expandBraces turns "a{b,c}d" into ["abd", "acd"], nesting allowed.
func expandBraces(p string) ([]string, error) {
	depth, open := 0, -1
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				return nil, fmt.Errorf("unmatched }")
			}
			depth--
			if depth == 0 {
				var out []string
				rests, err := expandBraces(p[i+1:])
				if err != nil {
					return nil, err
				}
				for _, alt := range splitTopLevel(p[open+1 : i]) {
					heads, err := expandBraces(p[:open] + alt)
					if err != nil {
						return nil, err
					}
					for _, h := range heads {
						for _, r := range rests {
							out = append(out, h+r)
						}
					}
				}
				return out, nil
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unmatched {")
	}
	return []string{p}, nil
}

func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// matchSimple matches without braces, character by character (not byte by
// byte: "?" matches "é", as in Ruby). With an empty name it still walks the
// whole pattern so that syntax errors are found.
func matchSimple(p, name string) (bool, error) {
	pr := []rune(p)
	if err := checkClasses(pr); err != nil {
		return false, err
	}
	return matchFrom(pr, []rune(name)), nil
}

func checkClasses(p []rune) error {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			end := classEnd(p, i)
			if end < 0 {
				return fmt.Errorf("unmatched [")
			}
			i = end
		case ']':
			return fmt.Errorf("unmatched ]")
		}
	}
	return nil
}

// classEnd returns the index of the "]" closing the class opened at i, or -1.
func classEnd(p []rune, i int) int {
	j := i + 1
	if j < len(p) && (p[j] == '!' || p[j] == '^') {
		j++
	}
	if j < len(p) && p[j] == ']' {
		j++
	}
	for ; j < len(p); j++ {
		if p[j] == '\\' {
			j++
			continue
		}
		if p[j] == ']' {
			return j
		}
	}
	return -1
}

func matchFrom(p, s []rune) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if matchFrom(p, s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			p, s = p[1:], s[1:]
		case '[':
			end := classEnd(p, 0)
			if len(s) == 0 || end < 0 || !matchClass(p[1:end], s[0]) {
				return false
			}
			p, s = p[end+1:], s[1:]
		case '\\':
			if len(p) > 1 {
				p = p[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || p[0] != s[0] {
				return false
			}
			p, s = p[1:], s[1:]
		}
	}
	return len(s) == 0
}

func matchClass(class []rune, c rune) bool {
	negate := false
	if len(class) > 0 && (class[0] == '!' || class[0] == '^') {
		negate, class = true, class[1:]
	}
	found := false
	for i := 0; i < len(class); i++ {
		lo := class[i]
		if lo == '\\' && i+1 < len(class) {
			i++
			lo = class[i]
		}
		hi := lo
		if i+2 < len(class) && class[i+1] == '-' {
			hi = class[i+2]
			i += 2
		}
		if lo <= c && c <= hi {
			found = true
		}
	}
	return found != negate
}

// ValidateQueueName rejects names no Resque system can use: empty, or
// containing "," (worker ids join queue names with it) or glob characters.
func ValidateQueueName(q string) error {
	if q == "" {
		return fmt.Errorf("protocol: queue name is empty")
	}
	if strings.ContainsAny(q, ",*?[]{}!") || strings.TrimSpace(q) != q {
		return fmt.Errorf("protocol: queue name %q: must not contain , * ? [ ] { } ! or surrounding spaces", q)
	}
	return nil
}

// LiteralQueues is the queue names of a queue list given as is: no glob,
// no exclusion, no "*".
func LiteralQueues(list string) []string {
	var out []string
	for _, q := range strings.Split(list, ",") {
		q = strings.TrimSpace(q)
		if q == "" || strings.ContainsAny(q, "*?[]{}!") {
			continue
		}
		out = append(out, q)
	}
	return out
}
