package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// LimitKind says what a limit bounds: the jobs running at once (a cap) or
// the jobs started per period (a rate).
type LimitKind string

// Limit kinds.
const (
	LimitCap  LimitKind = "cap"
	LimitRate LimitKind = "rate"
)

// Limit is one concurrency cap or rate limit (docs/limits.md): which jobs
// it counts (a queue, a class, or a class and a value read from its
// payload) and how many.
type Limit struct {
	Kind LimitKind
	// Queue, for a queue's limit, is its name; Class, for a class's, the
	// job class. Exactly one is set.
	Queue, Class string
	// Path, for a per-key limit of a class, is the payload path its key is
	// read from (args.0.tenant), as Steps.
	Path  string
	Steps []string
	// N is the cap (running at once) or the starts per Period.
	N      int
	Period time.Duration
}

// Name is the limit's name in its keys and in the limits index: class:C,
// queue:Q, or class:C[PATH]= followed by the key (Key appends it).
func (l Limit) Name() string {
	if l.Queue != "" {
		return "queue:" + l.Queue
	}
	if l.Path != "" {
		return "class:" + l.Class + "[" + l.Path + "]="
	}
	return "class:" + l.Class
}

// Spec is the limit as --limit or --rate takes it.
func (l Limit) Spec() string {
	s := l.Class
	if l.Queue != "" {
		s = "queue:" + l.Queue
	}
	if l.Path != "" {
		s += "[" + l.Path + "]"
	}
	if l.Kind == LimitRate {
		return s + "=" + strconv.Itoa(l.N) + "/" + l.Period.String()
	}
	return s + "=" + strconv.Itoa(l.N)
}

// Interval is a rate's emission interval, Period/N, in milliseconds (a
// fraction for more than 1,000 a second): the time one start takes of the
// period.
func (l Limit) Interval() float64 {
	return float64(l.Period.Microseconds()) / 1000 / float64(l.N)
}

// ParseLimit reads a cap: Class=N, queue:Q=N or Class[PATH]=N, PATH a
// dotted path into the payload whose numbers index arrays from 0
// (args.0.tenant: the tenant field of the first argument).
func ParseLimit(spec string) (Limit, error) {
	l, v, err := parseLimitTarget(spec)
	if err != nil {
		return l, err
	}
	l.Kind = LimitCap
	if l.N, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || l.N < 1 || l.N > 1_000_000 {
		return l, fmt.Errorf("limit %q: want a count from 1 to 1000000 after '=' (Import=5)", spec)
	}
	return l, nil
}

// ParseRate reads a rate: Class=N/PERIOD (Import=100/1m), queue:Q=N/PERIOD
// or Class[PATH]=N/PERIOD; PERIOD is a duration (1s, 1m, 1h, 90s) or a bare
// unit (s, m, h).
func ParseRate(spec string) (Limit, error) {
	l, v, err := parseLimitTarget(spec)
	if err != nil {
		return l, err
	}
	l.Kind = LimitRate
	n, per, ok := strings.Cut(strings.TrimSpace(v), "/")
	bad := fmt.Errorf("rate %q: want N/PERIOD after '=' (Import=100/1m), N from 1 to 1000000, PERIOD from 1s to 24h", spec)
	if !ok {
		return l, bad
	}
	if l.N, err = strconv.Atoi(n); err != nil || l.N < 1 || l.N > 1_000_000 {
		return l, bad
	}
	if per != "" && (per[0] < '0' || per[0] > '9') {
		per = "1" + per
	}
	if l.Period, err = time.ParseDuration(per); err != nil || l.Period < time.Second || l.Period > 24*time.Hour {
		return l, bad
	}
	return l, nil
}

// parseLimitTarget reads what a limit counts, up to its '=', and returns
// the value after it.
func parseLimitTarget(spec string) (Limit, string, error) {
	var l Limit
	target, v, ok := strings.Cut(spec, "=")
	target = strings.TrimSpace(target)
	if !ok || target == "" {
		return l, "", fmt.Errorf("limit %q: want Class=VALUE, queue:QUEUE=VALUE or Class[PATH]=VALUE", spec)
	}
	if q, ok := strings.CutPrefix(target, "queue:"); ok {
		if q == "" || strings.ContainsAny(q, "[]") {
			return l, "", fmt.Errorf("limit %q: a queue's limit names the queue (queue:imports=3) and takes no path", spec)
		}
		l.Queue = q
		return l, v, nil
	}
	class, path, hasPath := strings.Cut(target, "[")
	if hasPath {
		if !strings.HasSuffix(path, "]") || len(path) < 2 {
			return l, "", fmt.Errorf("limit %q: a path goes in brackets after the class (Import[args.0.tenant]=2)", spec)
		}
		path = strings.TrimSuffix(path, "]")
		for _, s := range strings.Split(path, ".") {
			if s == "" || strings.ContainsAny(s, "[]") {
				return l, "", fmt.Errorf("limit %q: path %q: want dotted names and indexes (args.0.tenant)", spec, path)
			}
		}
		l.Path, l.Steps = path, strings.Split(path, ".")
	}
	if class == "" || strings.ContainsAny(class, ":]") {
		return l, "", fmt.Errorf("limit %q: want a job class before '=' (Import=5), or queue:QUEUE", spec)
	}
	l.Class = class
	return l, v, nil
}

// Applies reports whether l counts a job of class from queue.
func (l Limit) Applies(queue, class string) bool {
	if l.Queue != "" {
		return l.Queue == queue
	}
	return l.Class == class
}

// LimitKey is the key a per-key limit reads from payload (the value at its
// path: a string, or an integer written as digits), and whether there is
// one: a job whose path leads to nothing, or to another type, is not
// counted by that limit. The claim script reads it the same way.
func (l Limit) LimitKey(payload []byte) (string, bool) {
	var v any
	d := json.NewDecoder(bytes.NewReader(payload))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return "", false
	}
	for _, s := range l.Steps {
		switch t := v.(type) {
		case map[string]any:
			v = t[s]
		case []any:
			i, err := strconv.Atoi(s)
			if err != nil || i < 0 || i >= len(t) {
				return "", false
			}
			v = t[i]
		default:
			return "", false
		}
	}
	switch t := v.(type) {
	case string:
		return t, true
	case json.Number:
		f, err := t.Float64()
		if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
			return "", false
		}
		return strconv.FormatInt(int64(f), 10), true
	}
	return "", false
}

// LimitHeld is the name of the cap slot a job holds under l (a per-key
// limit's with its key), and whether l counts the job at all.
func (l Limit) LimitHeld(queue, class string, payload []byte) (string, bool) {
	if !l.Applies(queue, class) {
		return "", false
	}
	if l.Path == "" {
		return l.Name(), true
	}
	k, ok := l.LimitKey(payload)
	return l.Name() + k, ok
}

// LimitPrefix is where every limit's keys start: <ns>:resque-go:limit:.
func (k Keys) LimitPrefix() string { return k.key("resque-go", "limit", "") }

// LimitBase is the start of the keys of the limit named name.
func (k Keys) LimitBase(name string) string { return k.LimitPrefix() + name }

// Limit key suffixes, after LimitBase: a cap's holders (zset of worker id
// and claim sequence, scored by the hold's lease end in Unix milliseconds)
// and parked jobs (list), a rate's theoretical arrival time (string, Unix
// milliseconds) and waiting jobs (list, due times ascending).
const (
	LimitHoldersSuffix = ":holders"
	LimitParkedSuffix  = ":parked"
	LimitTATSuffix     = ":tat"
	LimitWaitingSuffix = ":waiting"
)

// LimitsIndex is the set of the names of limits that have held or parked
// a job: resque-go limits lists them, and the sweep finds per-key ones.
func (k Keys) LimitsIndex() string { return k.key("resque-go", "limits") }

// LimitEntry is a parked or waiting job as its list holds it: the queue it
// goes back to and its payload, as a JSON string (bytes kept), and for a
// waiting one the Unix millisecond it is due (with a fraction).
type LimitEntry struct {
	Queue   string  `json:"queue"`
	Payload string  `json:"payload"`
	Due     float64 `json:"due,omitempty"`
}

// ParseLimitEntry reads a parked or waiting entry.
func ParseLimitEntry(raw []byte) (LimitEntry, error) {
	var e LimitEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, fmt.Errorf("protocol: limit entry: %w", err)
	}
	return e, nil
}
