package pool

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/resque-go/resque-go/failure"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/worksettings"
	"github.com/resque-go/resque-go/massqueue"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

// maxErrors bounds how many problems one Parse reports.
const maxErrors = 20

// decoder walks yaml.Node trees so that every error names the file, the line
// and the key. It collects errors instead of stopping at the first.
type decoder struct {
	file string
	errs []error
	// ignored are the resque-v3 settings that do not apply (paths).
	ignored []string
}

// field is one key of a mapping.
type field struct {
	name string
	key  *yaml.Node
	val  *yaml.Node
}

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	if len(d.errs) >= maxErrors {
		return
	}
	line := 0
	if n != nil {
		line = n.Line
	}
	d.errs = append(d.errs, &ConfigError{File: d.file, Line: line, Key: path, Msg: fmt.Sprintf(format, args...)})
}

// parseYAML reads the first document of data into a mapping node.
func parseYAML(name string, data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := yamlError(err)
		return nil, &ConfigError{File: name, Line: line, Msg: msg}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &ConfigError{File: name, Line: 1, Msg: "the file is empty"}
	}
	root := resolve(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return nil, &ConfigError{File: name, Line: root.Line, Msg: "want a mapping at the top level (key: value lines)"}
	}
	return root, nil
}

// yamlError splits a yaml.v3 error ("yaml: line 3: did not find ...") into
// the line and the rest.
func yamlError(err error) (int, string) {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return 0, msg
	}
	num, text, ok := strings.Cut(rest, ": ")
	n, err2 := strconv.Atoi(num)
	if !ok || err2 != nil {
		return 0, msg
	}
	return n, "invalid YAML: " + text
}

// resolve follows aliases (*name) to the node they point at.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// fields lists the keys of a mapping; duplicates and merge keys are errors.
func (d *decoder) fields(n *yaml.Node, path string) []field {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "want a mapping (key: value lines), got %s", describe(n))
		return nil
	}
	seen := map[string]bool{}
	var out []field
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		name := k.Value
		p := joinPath(path, name)
		switch {
		case k.Kind != yaml.ScalarNode:
			d.errorf(k, path, "a key must be a plain value, got %s", describe(k))
			continue
		case k.Tag == "!!merge":
			d.errorf(k, p, "merge keys (<<) are not supported")
			continue
		case seen[name]:
			d.errorf(k, p, "defined twice")
			continue
		}
		seen[name] = true
		out = append(out, field{name: name, key: k, val: v})
	}
	return out
}

// unknown reports a key the dialect does not have, with the known key it
// most likely misspells, or else the keys known at that level.
func (d *decoder) unknown(f field, path string, known ...string) {
	if len(d.errs) >= maxErrors {
		return
	}
	msg := fmt.Sprintf("unknown key %q", f.name)
	if path != "" {
		msg += " in " + path
	}
	if s := suggest(f.name, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	} else {
		msg += " (known here: " + strings.Join(known, ", ") + ")"
	}
	d.errs = append(d.errs, &ConfigError{File: d.file, Line: f.key.Line, Key: joinPath(path, f.name), Msg: msg, Unknown: true})
}

// ignore records a setting of a resque-v3 file that resque-go has no use
// for; Parse reports them all in one warning.
func (d *decoder) ignore(f field, path string) {
	d.ignored = append(d.ignored, joinPath(path, f.name))
}

// suggest returns the key of known that name most likely misspells: the
// same key in another case, or one within two edits (one for short keys);
// "" when none is that close.
func suggest(name string, known []string) string {
	best, bestDist := "", 0
	for _, k := range known {
		if strings.EqualFold(name, k) {
			return k
		}
		limit := 2
		if len(k) <= 4 {
			limit = 1
		}
		if dist := editDistance(strings.ToLower(name), k); dist <= limit && (best == "" || dist < bestDist) {
			best, bestDist = k, dist
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of neighbours ("wrokers" is
// one edit from "workers").
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

// joinPath appends a key to a path, quoting keys that are not plain words.
func joinPath(path, key string) string {
	if path == "" {
		return quoteKey(key)
	}
	return path + "." + quoteKey(key)
}

func quoteKey(key string) string {
	for _, r := range key {
		if !(r == '_' || r == '-' || r == '*' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return strconv.Quote(key)
		}
	}
	if key == "" {
		return `""`
	}
	return key
}

// str reads a non-empty scalar as a string.
func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || strings.TrimSpace(n.Value) == "" {
		d.errorf(n, path, "want a non-empty string, got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

// integer reads a whole number within [lo, hi].
func (d *decoder) integer(n *yaml.Node, path string, lo, hi int) (int, bool) {
	var v int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil {
		d.errorf(n, path, "want a whole number, got %s", describe(n))
		return 0, false
	}
	if v < lo || v > hi {
		d.errorf(n, path, "%d is out of range: want %d to %d", v, lo, hi)
		return 0, false
	}
	return v, true
}

// boolean reads true or false (YAML 1.1's yes/no/on/off too, as Ruby's
// YAML does).
func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	var v bool
	if n.Kind != yaml.ScalarNode || n.Decode(&v) != nil {
		d.errorf(n, path, "want true or false, got %s", describe(n))
		return false, false
	}
	return v, true
}

// duration reads seconds (5, 0.5) or a Go duration string (250ms, 2m), as
// the work command's flags do. min is the smallest accepted value.
func (d *decoder) duration(n *yaml.Node, path string, min time.Duration) (time.Duration, bool) {
	bad := func() (time.Duration, bool) {
		d.errorf(n, path, "want seconds (5, 0.5) or a duration (250ms, 2m), got %s", describe(n))
		return 0, false
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return bad()
	}
	s := strings.TrimSpace(n.Value)
	var v time.Duration
	if f, err := strconv.ParseFloat(s, 64); err == nil && n.Tag != "!!bool" {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > float64(math.MaxInt64)/float64(time.Second) {
			return bad()
		}
		v = time.Duration(f * float64(time.Second))
	} else if pd, err := time.ParseDuration(s); err == nil {
		v = pd
	} else {
		return bad()
	}
	if v < min {
		if min == 0 {
			d.errorf(n, path, "must not be negative")
		} else {
			d.errorf(n, path, "must be at least %s", min)
		}
		return 0, false
	}
	return v, true
}

// byteSize reads a size: bytes (536870912) or a number with a unit, B, K,
// M, G or T, with or without a trailing B or iB ("512MB", "512M", "1.5GiB"),
// every unit a power of 1024 as Docker and the Ruby worker killers read
// them.
func (d *decoder) byteSize(n *yaml.Node, path string) (int64, bool) {
	v, err := parseByteSize(n.Value)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || err != nil {
		d.errorf(n, path, "want a size (512MB, 1GB, or bytes), got %s", describe(n))
		return 0, false
	}
	return v, true
}

// parseByteSize is byteSize's parser.
func parseByteSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.ToUpper(strings.TrimSpace(s[i:]))
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("size %q: want a number and a unit", s)
	}
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "IB"), "B")
	shift, ok := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40}[unit]
	if !ok {
		return 0, fmt.Errorf("size %q: unknown unit", s)
	}
	v := f * float64(uint64(1)<<shift)
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return int64(v), nil
}

// queueList validates a queue list as the work command will.
func (d *decoder) queueList(n *yaml.Node, path, list string) bool {
	if _, err := protocol.ParseQueueSpec(list); err != nil {
		d.errorf(n, path, "bad queue list %q: %s", list, strings.TrimPrefix(err.Error(), "protocol: "))
		return false
	}
	return true
}

// Top-level keys of resque-go's format: the manager's and the file's own,
// then the worker settings every child gets (the keys of the settings
// table, decoded by workSetting). The resque-v3 style has the same ones
// with "queues" where resque-go has "workers".
var ownKeys = append([]string{"redis", "namespace", "hostname", "log", "kill_timeout", "handlers", "scheduler", "retention", "node_id", "pools", "mapping"},
	worksettings.Keys()...)

// Top-level keys only a resque-v3 file has. log_level is read; the others
// configure what resque-go does not do (its own log file, statsd, PHP task
// includes) and are ignored with a warning. log_level and log_path are the
// spelling of resque-v3 before 3.2, which later moved them under log.
var v3OnlyKeys = []string{"log_level", "log_path", "statsd", "task_include_path"}

// detectFormat tells the dialects apart by their top-level keys: "workers"
// holding a list or mapping is resque-go's format, "queues" holding a
// mapping the resque-v3 style. Without either, a file whose top level has a
// key of those formats (or a near miss of one, such as "wrokers") holding
// something other than a process count is read in that format, so that the
// misspelt key is reported as unknown. Anything else is a resque-pool file,
// whose keys are queue lists and environment names.
func detectFormat(root *yaml.Node) string {
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], resolve(root.Content[i+1])
		switch {
		case k.Value == "workers" && (v.Kind == yaml.SequenceNode || v.Kind == yaml.MappingNode):
			return FormatResqueGo
		case k.Value == "queues" && v.Kind == yaml.MappingNode:
			return FormatResqueV3
		}
	}
	own := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], resolve(root.Content[i+1])
		if isCount(v) { // "queue,list": 2
			continue
		}
		switch {
		case slices.Contains(v3OnlyKeys, k.Value) || suggest(k.Value, []string{"queues"}) != "":
			return FormatResqueV3
		case suggest(k.Value, append(append([]string{}, ownKeys...), "workers")) != "":
			own = true
		}
	}
	if own {
		return FormatResqueGo
	}
	return FormatResquePool
}

// isCount reports whether n is a whole number (a resque-pool process count).
func isCount(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!int" }

func (d *decoder) decodeOwn(cfg *Config, root *yaml.Node, setsKey string) {
	v3 := setsKey == "queues"
	known := append(append([]string{}, ownKeys...), setsKey)
	if v3 {
		known = append(known, v3OnlyKeys...)
	}
	sawSets, setsMisspelt := false, false
	var massNodes []*yaml.Node // node_id, pools, mapping: the mass-queue section
	var namespaceAt *yaml.Node // where the namespace was given
	setNamespace := func(n *yaml.Node, path, v string) {
		if namespaceAt != nil {
			d.errorf(n, path, "the namespace is already given at line %d", namespaceAt.Line)
			return
		}
		namespaceAt = n
		cfg.Namespace = strings.TrimSuffix(v, ":")
	}
	var levelAt *yaml.Node // where the log level was given
	setLevel := func(n *yaml.Node, path string) {
		if levelAt != nil {
			d.errorf(n, path, "the log level is already given at line %d", levelAt.Line)
			return
		}
		levelAt = n
		d.logLevel(cfg, n, path)
	}
	for _, f := range d.fields(root, "") {
		p := joinPath("", f.name)
		switch f.name {
		case "redis":
			if f.val.Kind == yaml.MappingNode {
				d.decodeRedis(cfg, f.val, p, v3, setNamespace)
			} else if v, ok := d.str(f.val, p); ok {
				if err := validRedisURL(v); err != nil {
					d.errorf(f.val, p, "%s", strings.TrimPrefix(err.Error(), "rdb: "))
				} else {
					cfg.Redis = v
				}
			}
		case "namespace":
			if v, ok := d.str(f.val, p); ok {
				setNamespace(f.val, p, v)
			}
		case "hostname":
			if v, ok := d.str(f.val, p); ok {
				if strings.ContainsAny(v, ": \t") {
					d.errorf(f.val, p, "%q: a host name must not contain ':' or spaces (it is the first part of worker ids)", v)
				} else {
					cfg.Hostname = v
				}
			}
		case "log":
			d.decodeLog(cfg, f.val, p, v3, setLevel)
		case "kill_timeout":
			if v, ok := d.duration(f.val, p, time.Millisecond); ok {
				cfg.KillTimeout = v
			}
		case "handlers":
			d.decodeHandlers(cfg, f.val, p)
		case "scheduler":
			d.decodeScheduler(cfg, f.val, p)
		case "retention":
			d.decodeRetention(cfg, f.val, p)
		case "node_id", "pools", "mapping":
			massNodes = append(massNodes, f.key, f.val)
		case setsKey:
			sawSets = true
			d.decodeSets(cfg, f.val, p)
		default:
			if s := worksettings.ByKey(f.name); s != nil {
				d.workSetting(&cfg.Work, s, f.val, p)
				continue
			}
			switch {
			case v3 && f.name == "log_level":
				setLevel(f.val, p)
			case v3 && slices.Contains(v3OnlyKeys, f.name):
				d.ignore(f, "")
			default:
				setsMisspelt = setsMisspelt || suggest(f.name, known) == setsKey
				d.unknown(f, "", known...)
			}
		}
	}
	if len(massNodes) > 0 {
		d.decodeMass(cfg, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: massNodes, Line: massNodes[0].Line})
	}
	if !sawSets && !setsMisspelt && cfg.Mass == nil {
		d.errorf(root, setsKey, "missing: list the queue sets to run")
	}
}

// decodeMass reads the mass-queue section (node_id, pools, mapping: the
// released resqu-server format) and adds a queue set per static pool (one
// process with worker_count slots) and per unit of each batch pool (one
// process with workers_per_unit slots).
func (d *decoder) decodeMass(cfg *Config, n *yaml.Node) {
	var sec massqueue.Section
	if err := n.Decode(&sec); err != nil {
		d.errorf(n, "pools", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		return
	}
	host := cfg.Hostname
	if host == "" {
		host, _ = os.Hostname()
	}
	mc, err := sec.Config(host)
	if err != nil {
		d.errorf(n, "pools", "%s", strings.TrimPrefix(err.Error(), "massqueue: bad config: "))
		return
	}
	cfg.Mass = mc
	for _, sp := range mc.StaticPools {
		if sp.WorkerCount > 0 {
			mass := "static:" + sp.Name
			cfg.Sets = append(cfg.Sets, QueueSet{Queues: mass, Mass: mass, Processes: 1, Concurrency: sp.WorkerCount, Line: n.Line})
		}
	}
	for _, bp := range mc.BatchPools {
		for k := range bp.UnitCount {
			if bp.WorkersPerUnit > 0 {
				mass := "unit:" + bp.Name + ":" + mc.UnitID(k)
				cfg.Sets = append(cfg.Sets, QueueSet{Queues: mass, Mass: mass, Processes: 1, Concurrency: bp.WorkersPerUnit, Line: n.Line})
			}
		}
	}
}

// workSetting reads the value of a worker setting of the table into c.
func (d *decoder) workSetting(c *node.Config, s *worksettings.Setting, n *yaml.Node, path string) {
	if v, ok := d.settingValue(s, n, path, s.MinDuration); ok {
		s.Set(c, v)
	}
}

// setSetting reads a queue set's value of a worker setting of the table
// into set: the table's Set fills a node.Config as work's flag would, and
// the set keeps that field, which Config.Child gives its children.
func (d *decoder) setSetting(set *QueueSet, s *worksettings.Setting, n *yaml.Node, path string) {
	v, ok := d.settingValue(s, n, path, max(s.MinDuration, s.SetMinDuration))
	if !ok {
		return
	}
	var w node.Config
	s.Set(&w, v)
	switch s.Field {
	case "Concurrency":
		set.Concurrency = w.Concurrency
	case "Polling":
		set.Polling = w.Polling
	case "Interval":
		set.Interval = w.Interval
	case "Fork":
		set.Fork = w.Fork
	case "JobTimeout":
		set.Timeout = w.JobTimeout
	default:
		d.errorf(n, path, "a queue set does not keep %s", s.Field) // a table row pool does not know yet
	}
}

// settingValue reads a setting's value as its Type says, within its bounds
// (min for a Duration).
func (d *decoder) settingValue(s *worksettings.Setting, n *yaml.Node, path string, min time.Duration) (worksettings.Value, bool) {
	var v worksettings.Value
	ok := false
	switch s.Type {
	case worksettings.Bool:
		v.Bool, ok = d.boolean(n, path)
	case worksettings.Int:
		v.Int, ok = d.integer(n, path, s.Min, s.Max)
	case worksettings.Duration:
		if v.Duration, ok = d.duration(n, path, min); ok && s.MaxDuration > 0 && v.Duration > s.MaxDuration {
			d.errorf(n, path, "must be at most %s", s.MaxDuration)
			ok = false
		}
	case worksettings.String:
		if v.String, ok = d.str(n, path); ok && d.check(n, path, s, v.String) {
			v.String = strings.TrimSpace(v.String)
		} else {
			ok = false
		}
	case worksettings.ClassMap:
		v.List, ok = d.classMap(n, path, s)
	default:
		d.errorf(n, path, "this setting is not read from a pool file")
	}
	return v, ok
}

// check runs the setting's own check of a value.
func (d *decoder) check(n *yaml.Node, path string, s *worksettings.Setting, v string) bool {
	if s.Check == nil {
		return true
	}
	if err := s.Check(v); err != nil {
		d.errorf(n, path, "%v", err)
		return false
	}
	return true
}

// classMap reads {Class: VALUE} into "Class=VALUE" entries sorted by
// class, as work's repeatable flag takes them; a bare number is a value
// too (class_retry: {Archive: 2}).
func (d *decoder) classMap(n *yaml.Node, path string, s *worksettings.Setting) ([]string, bool) {
	type entry struct{ class, value string }
	var entries []entry
	before := len(d.errs)
	for _, f := range d.fields(n, path) {
		p := joinPath(path, f.name)
		class := strings.TrimSpace(f.name)
		if class == "" || strings.Contains(class, "=") {
			d.errorf(f.key, p, "a class name must be non-empty and must not contain '='")
			continue
		}
		v, ok := d.str(f.val, p)
		if v = strings.TrimSpace(v); ok && d.check(f.val, p, s, v) {
			entries = append(entries, entry{class, v})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.class, b.class) })
	var out []string
	for _, e := range entries {
		out = append(out, e.class+"="+e.value)
	}
	return out, len(d.errs) == before && out != nil
}

// Log levels of resque-v3 (PSR-3, upper case in its files) and what they
// become here.
var v3Levels = map[string]string{"notice": "info", "warning": "warn", "critical": "error", "alert": "error", "emergency": "error"}

// logLevel reads a level: debug, info, warn or error, or a resque-v3 level.
func (d *decoder) logLevel(cfg *Config, n *yaml.Node, path string) {
	v, ok := d.str(n, path)
	if !ok {
		return
	}
	level := strings.ToLower(v)
	if mapped, ok := v3Levels[level]; ok {
		level = mapped
	}
	if !oneOf(level, "debug", "info", "warn", "error") {
		d.errorf(n, path, "%q: want debug, info, warn or error", v)
		return
	}
	cfg.LogLevel = level
}

// Keys of resque-v3's log section that configure its own log file and
// logstash fields: ignored.
var v3LogKeys = []string{"path", "application_name", "system_name", "extra_prefix", "context_prefix", "logstash_version"}

func (d *decoder) decodeLog(cfg *Config, n *yaml.Node, path string, v3 bool, setLevel func(*yaml.Node, string)) {
	known := []string{"level", "format"}
	if v3 {
		known = append(known, v3LogKeys...)
	}
	for _, f := range d.fields(n, path) {
		p := joinPath(path, f.name)
		switch f.name {
		case "level":
			setLevel(f.val, p)
		case "format":
			v, ok := d.str(f.val, p)
			if !ok {
				continue
			}
			if !oneOf(v, "console", "json") {
				d.errorf(f.val, p, "%q: want console or json", v)
			} else {
				cfg.LogFormat = v
			}
		default:
			if v3 && slices.Contains(v3LogKeys, f.name) {
				d.ignore(f, path)
				continue
			}
			d.unknown(f, path, known...)
		}
	}
}

// Keys of the redis mapping: resque-v3 writes hostname and port; the rest
// are the spellings other Resque configs use for the same settings.
var redisKeys = []string{"hostname", "host", "port", "database", "db", "username", "password", "namespace", "prefix"}

// decodeRedis reads the redis mapping of a resque-v3 file ({hostname,
// port}) into a URL. Defaults: localhost, 6379, database 0. timeout, which
// resque-go sets itself, is ignored in a resque-v3 file.
func (d *decoder) decodeRedis(cfg *Config, n *yaml.Node, path string, v3 bool, setNamespace func(*yaml.Node, string, string)) {
	host, port, db := "localhost", 6379, 0
	var user, password string
	var hostAt, dbAt *field
	before := len(d.errs)
	for _, f := range d.fields(n, path) {
		p := joinPath(path, f.name)
		switch f.name {
		case "hostname", "host":
			if hostAt != nil {
				d.errorf(f.key, p, "%s is already given: host and hostname are the same setting", hostAt.name)
				continue
			}
			hostAt = &f
			if v, ok := d.str(f.val, p); ok {
				host = strings.Trim(v, "[]")
			}
		case "port":
			if v, ok := d.integer(f.val, p, 1, 65535); ok {
				port = v
			}
		case "database", "db":
			if dbAt != nil {
				d.errorf(f.key, p, "%s is already given: database and db are the same setting", dbAt.name)
				continue
			}
			dbAt = &f
			if v, ok := d.integer(f.val, p, 0, 1<<20); ok {
				db = v
			}
		case "username":
			if v, ok := d.str(f.val, p); ok {
				user = v
			}
		case "password":
			// A number is a password too (YAML reads 1234 as one).
			if f.val.Kind == yaml.ScalarNode && f.val.Tag != "!!null" {
				password = f.val.Value
			} else {
				d.errorf(f.val, p, "want a string, got %s", describe(f.val))
			}
		case "namespace", "prefix":
			if v, ok := d.str(f.val, p); ok {
				setNamespace(f.val, p, v)
			}
		default:
			if v3 && f.name == "timeout" {
				d.ignore(f, path)
				continue
			}
			d.unknown(f, path, redisKeys...)
		}
	}
	if len(d.errs) > before {
		return
	}
	u := url.URL{Scheme: "redis", Host: net.JoinHostPort(host, strconv.Itoa(port))}
	if db != 0 {
		u.Path = "/" + strconv.Itoa(db)
	}
	switch {
	case password != "":
		u.User = url.UserPassword(user, password)
	case user != "":
		u.User = url.User(user)
	}
	if err := validRedisURL(u.String()); err != nil {
		d.errorf(n, path, "%s", strings.TrimPrefix(err.Error(), "rdb: "))
		return
	}
	cfg.Redis = u.String()
}

func oneOf(v string, options ...string) bool {
	for _, o := range options {
		if v == o {
			return true
		}
	}
	return false
}

// decodeHandlers reads handlers: {Class: {exec: cmd} | {http: URL or {url, token, connect_timeout, timeout}}}.
func (d *decoder) decodeHandlers(cfg *Config, n *yaml.Node, path string) {
	for _, f := range d.fields(n, path) {
		p := joinPath(path, f.name)
		class := strings.TrimSpace(f.name)
		if class == "" || strings.Contains(class, "=") {
			d.errorf(f.key, p, "a class name must be non-empty and must not contain '='")
			continue
		}
		h := Handler{Class: class, Line: f.key.Line}
		kinds := 0
		for _, g := range d.fields(f.val, p) {
			q := joinPath(p, g.name)
			switch g.name {
			case "exec":
				kinds++
				if v, ok := d.str(g.val, q); ok {
					h.Exec = v
				}
			case "http":
				kinds++
				h.HTTP = d.decodeHTTP(g.val, q)
			default:
				d.unknown(g, p, "exec", "http")
			}
		}
		if kinds != 1 {
			d.errorf(f.key, p, "want exactly one of exec or http")
			continue
		}
		if h.Exec != "" || h.HTTP != nil {
			cfg.SetHandler(h)
		}
	}
}

func (d *decoder) decodeHTTP(n *yaml.Node, path string) *HTTPEndpoint {
	checkURL := func(v *yaml.Node, p, u string) bool {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			d.errorf(v, p, "%q: the URL must start with http:// or https://", u)
			return false
		}
		if err := worker.CheckHTTPEndpoint(u); err != nil {
			d.errorf(v, p, "%q: %v", u, err)
			return false
		}
		return true
	}
	if n.Kind == yaml.ScalarNode { // http: https://... (no token, default timeouts)
		u, ok := d.str(n, path)
		if !ok || !checkURL(n, path, u) {
			return nil
		}
		return &HTTPEndpoint{URL: u}
	}
	e := &HTTPEndpoint{}
	ok := true
	for _, f := range d.fields(n, path) {
		p := joinPath(path, f.name)
		switch f.name {
		case "url":
			if u, good := d.str(f.val, p); good && checkURL(f.val, p, u) {
				e.URL = u
			} else {
				ok = false
			}
		case "token":
			if v, good := d.str(f.val, p); good {
				e.Token = v
			}
		case "connect_timeout":
			e.ConnectTimeout, _ = d.duration(f.val, p, time.Millisecond)
		case "timeout":
			e.Timeout, _ = d.duration(f.val, p, time.Millisecond)
		default:
			d.unknown(f, path, "url", "token", "connect_timeout", "timeout")
		}
	}
	if e.URL == "" {
		if ok && n.Kind == yaml.MappingNode {
			d.errorf(n, joinPath(path, "url"), "missing")
		}
		return nil
	}
	return e
}

// Keys of one queue set: the pool's own (worker_count is the resque-v3
// name of processes; blocking is polling's opposite; serial makes the
// set's own queues serial), then the worker settings a set gives its
// children (the set keys of the settings table, decoded by setSetting).
var setKeys = append([]string{"queues", "processes", "worker_count", "blocking", "serial", "max_jobs", "max_rss", "max_age"},
	worksettings.SetKeys()...)

// decodeSets reads the queue sets: a list of mappings with a queues key, or
// a mapping from queue list to settings (or to a process count).
func (d *decoder) decodeSets(cfg *Config, n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.SequenceNode:
		for i, item := range n.Content {
			item = resolve(item)
			p := fmt.Sprintf("%s[%d]", path, i)
			if item.Kind != yaml.MappingNode {
				d.errorf(item, p, "want a mapping with queues, processes ..., got %s", describe(item))
				continue
			}
			if set, ok := d.decodeSet(item, p, "", nil); ok {
				cfg.Sets = append(cfg.Sets, set)
			}
		}
	case yaml.MappingNode:
		for _, f := range d.fields(n, path) {
			p := joinPath(path, f.name)
			if f.val.Kind == yaml.ScalarNode && f.val.Tag != "!!null" { // "high,low": 2
				set := QueueSet{Queues: f.name, Concurrency: 1, Interval: DefaultInterval, Line: f.key.Line}
				count, ok := d.integer(f.val, p, 0, 1000)
				if ok && d.queueList(f.key, p, f.name) {
					set.Processes = count
					cfg.Sets = append(cfg.Sets, set)
				}
				continue
			}
			if set, ok := d.decodeSet(f.val, p, f.name, f.key); ok {
				cfg.Sets = append(cfg.Sets, set)
			}
		}
	default:
		d.errorf(n, path, "want a list or a mapping of queue sets, got %s", describe(n))
	}
}

// decodeSet reads one queue set's settings. queues is the set's key in the
// mapping form ("" in the list form, where the queues key is required).
func (d *decoder) decodeSet(n *yaml.Node, path, queues string, keyNode *yaml.Node) (QueueSet, bool) {
	set := QueueSet{Queues: queues, Processes: 1, Concurrency: 1, Interval: DefaultInterval, Line: n.Line}
	if keyNode != nil {
		set.Line = keyNode.Line
	}
	before := len(d.errs)
	var blocking, polling, processes *field
	for _, f := range d.fields(n, path) {
		p := joinPath(path, f.name)
		switch f.name {
		case "queues":
			if keyNode != nil {
				d.errorf(f.key, p, "the queues are the key of this set (%q); remove this key or use the list form", queues)
				continue
			}
			if v, ok := d.str(f.val, p); ok && d.queueList(f.val, p, v) {
				set.Queues = v
			}
		case "processes", "worker_count":
			if processes != nil {
				d.errorf(f.key, p, "%s is already given: processes and worker_count are the same setting", processes.name)
				continue
			}
			processes = &f
			if v, ok := d.integer(f.val, p, 0, 1000); ok {
				set.Processes = v
			}
		case "blocking":
			if v, ok := d.boolean(f.val, p); ok {
				blocking = &f
				set.Polling = !v
			}
		case "serial":
			if v, ok := d.boolean(f.val, p); ok {
				set.Serial = v
			}
		case "max_jobs":
			if v, ok := d.integer(f.val, p, 0, math.MaxInt32); ok {
				set.MaxJobs = v
			}
		case "max_rss":
			if v, ok := d.byteSize(f.val, p); ok {
				set.MaxRSS = v
			}
		case "max_age":
			if v, ok := d.duration(f.val, p, 0); ok {
				set.MaxAge = v
			}
		default:
			s := worksettings.BySetKey(f.name)
			if s == nil {
				d.unknown(f, path, setKeys...)
				continue
			}
			errs := len(d.errs)
			d.setSetting(&set, s, f.val, p)
			if f.name == "polling" && len(d.errs) == errs {
				polling = &f
			}
		}
	}
	if blocking != nil && polling != nil {
		var b, pl bool
		_ = blocking.val.Decode(&b)
		_ = polling.val.Decode(&pl)
		if b == pl {
			d.errorf(polling.key, joinPath(path, "polling"), "contradicts blocking: %v (say one of them)", b)
		}
	}
	if keyNode != nil {
		d.queueList(keyNode, path, queues)
	} else if set.Queues == "" && len(d.errs) == before {
		d.errorf(n, joinPath(path, "queues"), "missing: give the queue list, e.g. queues: high,low")
	}
	return set, len(d.errs) == before
}

// decodeResquePool reads a resque-pool file: "queue,list": count pairs at
// the top level are the defaults; a mapping at the top level is an
// environment section whose pairs override them when that environment is
// selected (resque-pool merges the section over the defaults). Sections of
// other environments are checked but not used. A count of 0 removes a list.
func (d *decoder) decodeResquePool(cfg *Config, root *yaml.Node, env string) {
	type entry struct {
		queues string
		count  int
		line   int
	}
	var order []string
	counts := map[string]entry{}
	put := func(e entry) {
		if _, ok := counts[e.queues]; !ok {
			order = append(order, e.queues)
		}
		counts[e.queues] = e
	}
	readPair := func(f field, path string) (entry, bool) {
		p := joinPath(path, f.name)
		n, ok := d.integer(f.val, p, 0, 1000)
		if !ok {
			return entry{}, false
		}
		if !d.queueList(f.key, p, f.name) {
			return entry{}, false
		}
		return entry{queues: f.name, count: n, line: f.key.Line}, true
	}
	var section []entry
	for _, f := range d.fields(root, "") {
		if f.val.Kind != yaml.MappingNode {
			if e, ok := readPair(f, ""); ok {
				put(e)
			}
			continue
		}
		path := joinPath("", f.name)
		for _, g := range d.fields(f.val, path) {
			if g.val.Kind == yaml.MappingNode {
				d.errorf(g.key, joinPath(path, g.name), "want a process count for this queue list; environment sections do not nest")
				continue
			}
			// Every section is checked; only the selected one is used.
			if e, ok := readPair(g, path); ok && f.name == env {
				section = append(section, e)
			}
		}
	}
	for _, e := range section {
		put(e)
	}
	if len(d.errs) > 0 {
		return
	}
	for _, q := range order {
		e := counts[q]
		if e.count == 0 {
			continue
		}
		cfg.Sets = append(cfg.Sets, QueueSet{Queues: e.queues, Processes: e.count, Concurrency: 1, Interval: DefaultInterval, Line: e.line})
	}
}

// decodeScheduler reads `scheduler: true|false` or a mapping with
// schedule (a file, relative to the pool file), environment and dynamic.
func (d *decoder) decodeScheduler(cfg *Config, n *yaml.Node, path string) {
	v := resolve(n)
	if v.Kind == yaml.ScalarNode {
		if on, ok := d.boolean(n, path); ok && on {
			cfg.Scheduler = &SchedulerSettings{}
		}
		return
	}
	if v.Kind != yaml.MappingNode {
		d.errorf(n, path, "want true, false, or a mapping with schedule, environment, dynamic")
		return
	}
	st := &SchedulerSettings{}
	for _, f := range d.fields(v, path) {
		p := joinPath(path, f.name)
		switch f.name {
		case "schedule":
			if s, ok := d.str(f.val, p); ok && s != "" {
				if !filepath.IsAbs(s) && cfg.Path != "" {
					s = filepath.Join(filepath.Dir(cfg.Path), s)
				}
				st.Schedule = s
			}
		case "environment":
			if s, ok := d.str(f.val, p); ok {
				st.Environment = s
			}
		case "dynamic":
			if b, ok := d.boolean(f.val, p); ok {
				st.Dynamic = b
			}
		default:
			d.unknown(f, path, "schedule", "environment", "dynamic")
		}
	}
	cfg.Scheduler = st
}

// retentionKeys are the keys of the retention mapping (failure.Retention).
var retentionKeys = []string{"failed_max", "failed_max_age", "retries_max", "retries_max_age", "archive"}

// decodeRetention reads retention: {failed_max, failed_max_age,
// retries_max, retries_max_age, archive}; a relative archive path is taken
// from the file's directory.
func (d *decoder) decodeRetention(cfg *Config, n *yaml.Node, path string) {
	var r failure.Retention
	for _, f := range d.fields(n, path) {
		p := joinPath(path, f.name)
		switch f.name {
		case "failed_max", "retries_max":
			if v, ok := d.integer(f.val, p, 0, math.MaxInt32); ok {
				if f.name == "failed_max" {
					r.FailedMax = v
				} else {
					r.RetriesMax = v
				}
			}
		case "failed_max_age", "retries_max_age":
			s, ok := d.str(f.val, p)
			if !ok {
				continue
			}
			age, err := failure.ParseAge(s)
			if err != nil {
				d.errorf(f.val, p, "%s", err)
				continue
			}
			if f.name == "failed_max_age" {
				r.FailedMaxAge = age
			} else {
				r.RetriesMaxAge = age
			}
		case "archive":
			if s, ok := d.str(f.val, p); ok {
				if !filepath.IsAbs(s) && cfg.Path != "" {
					s = filepath.Join(filepath.Dir(cfg.Path), s)
				}
				r.Archive = s
			}
		default:
			d.unknown(f, path, retentionKeys...)
		}
	}
	if r.Archive != "" && !r.On() {
		d.errorf(n, path, "archive is set but no limit is (failed_max, failed_max_age, retries_max, retries_max_age): nothing would be trimmed")
	}
	cfg.Work.Retention = r
}
