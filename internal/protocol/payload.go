package protocol

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ActiveJobWrapper is the class Rails' Resque adapter enqueues; the real job
// class is args[0].job_class.
const ActiveJobWrapper = "ActiveJob::QueueAdapters::ResqueAdapter::JobWrapper"

// ErrBadPayload is wrapped by every payload decoding error.
var ErrBadPayload = errors.New("bad payload")

// Payload is a read-only view of a job payload. Raw holds the bytes exactly as
// they were popped; everything else is decoded from them and never written back.
type Payload struct {
	Raw   []byte
	Class string
	// Args is the raw JSON of "args" (array, object, or nil when absent).
	Args json.RawMessage
	ID   string
	// Queue is the optional "queue" field (node-resque, resque-v3).
	Queue string
	// QueueTime is the enqueue time in Unix seconds; HasQueueTime says whether
	// the payload carried one.
	QueueTime    float64
	HasQueueTime bool
	// FailCount is resque-v3's count of failed attempts.
	FailCount   int
	IsMonitored bool
	SourceID    string
	// Fields keeps every top-level field's raw JSON for code that needs more.
	Fields map[string]json.RawMessage
}

// DecodePayload decodes raw into a view. The error, wrapping ErrBadPayload,
// says what is wrong in words fit for a failed entry.
func DecodePayload(raw []byte) (*Payload, error) {
	p := &Payload{Raw: raw}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return p, fmt.Errorf("%w: empty payload", ErrBadPayload)
	}
	if trimmed[0] != '{' {
		return p, fmt.Errorf("%w: payload is not a JSON object: %s", ErrBadPayload, excerpt(raw))
	}
	if at := invalidUTF8At(raw); at >= 0 {
		// Ruby's and PHP's JSON parsers refuse such a payload, and Go would
		// silently turn the bytes into U+FFFD: the job's data is not what
		// its producer meant, so it is not run.
		return p, fmt.Errorf("%w: payload is not valid UTF-8 (bad byte 0x%02x at offset %d): %s", ErrBadPayload, raw[at], at, excerpt(raw))
	}
	if !json.Valid(trimmed) {
		err := json.Unmarshal(trimmed, &p.Fields) // its words for what is wrong
		return p, fmt.Errorf("%w: payload is not valid JSON (%v): %s", ErrBadPayload, err, excerpt(raw))
	}
	p.Fields = splitObject(trimmed)
	cls, ok := p.Fields["class"]
	if !ok {
		return p, fmt.Errorf("%w: payload has no \"class\" field: %s", ErrBadPayload, excerpt(raw))
	}
	if p.Class = optString(cls); p.Class == "" || cls[0] != '"' {
		p.Class = ""
		return p, fmt.Errorf("%w: payload \"class\" is not a non-empty string: %s", ErrBadPayload, excerpt(raw))
	}
	if a, ok := p.Fields["args"]; ok && !bytes.Equal(a, []byte("null")) {
		if a[0] != '[' && a[0] != '{' {
			return p, fmt.Errorf("%w: payload \"args\" is not an array or object: %s", ErrBadPayload, excerpt(raw))
		}
		p.Args = a
	}
	p.ID = optString(p.Fields["id"])
	p.Queue = optString(p.Fields["queue"])
	p.SourceID = optString(p.Fields["sourceId"])
	if qt, ok := p.Fields["queue_time"]; ok {
		if f, ok := parseUnixSeconds(qt); ok {
			p.QueueTime, p.HasQueueTime = f, true
		}
	}
	if fc, ok := p.Fields["failCount"]; ok {
		if n, err := strconv.Atoi(string(bytes.Trim(fc, `"`))); err == nil {
			p.FailCount = n
		}
	}
	if m, ok := p.Fields["isMonitored"]; ok {
		p.IsMonitored = string(m) == "true"
	}
	return p, nil
}

// invalidUTF8At returns the offset of the first byte of raw that is not
// part of valid UTF-8, or -1.
func invalidUTF8At(raw []byte) int {
	if utf8.Valid(raw) {
		return -1
	}
	for i := 0; i < len(raw); {
		r, n := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// RubyShaped reports whether the payload has exactly the fields class and
// args: the form Ruby Resque writes (and resque-scheduler promotes to). Such
// a job keeps its bytes through retries and the delayed queue, so Ruby tools
// see exactly what they wrote; its count of failed attempts lives in the
// attempt counter the claim script reads (protocol.AttemptsDigest).
func (p *Payload) RubyShaped() bool {
	_, hasArgs := p.Fields["args"]
	_, hasClass := p.Fields["class"]
	return len(p.Fields) == 2 && hasArgs && hasClass
}

// optString returns the JSON string in raw, or "" for anything else. Numeric
// ids (some producers write them) are kept as their JSON text.
func optString(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	if n := len(raw); n >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		// no escape: the string is its bytes (raw is valid JSON)
		return string(raw[1 : n-1])
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	if raw[0] >= '0' && raw[0] <= '9' {
		return string(raw)
	}
	return ""
}

// HandlerClass is the class a handler is looked up by after Class itself:
// for Rails ActiveJob wrappers it is args[0].job_class, otherwise "".
func (p *Payload) HandlerClass() string {
	if p.Class != ActiveJobWrapper || len(p.Args) == 0 {
		return ""
	}
	var args []struct {
		JobClass string `json:"job_class"`
	}
	if err := json.Unmarshal(p.Args, &args); err != nil || len(args) == 0 {
		return ""
	}
	return args[0].JobClass
}

// excerpt quotes at most 120 bytes of raw for an error message.
func excerpt(raw []byte) string {
	const max = 120
	s := string(raw)
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return strconv.Quote(s)
}

// EnqueueOptions controls the payload NewPayload writes.
type EnqueueOptions struct {
	// Plain writes only class and args, byte-identical to Ruby's Resque.enqueue.
	Plain bool
	// Now is the enqueue time; zero means time.Now().
	Now time.Time
	// ID overrides the generated job id (tests).
	ID string
	// Unique, when its UID is set, adds "unique":{"uid":...} (with
	// "deferrableBy" when Deferrable), the resque-v3 field (docs/protocol.md#unique-jobs).
	Unique Unique
	// Traceparent and Tracestate, when set, are the W3C trace context of
	// the producer's span, written as top-level fields where Ruby's
	// opentelemetry-instrumentation-resque writes them (not with Plain).
	Traceparent, Tracestate string
	// Tags are written as the "tags" field, an array (not with Plain);
	// each must pass CheckTag, at most MaxTags.
	Tags []string
	// Deps adds a held job's parents and its group (deps.go; not with Plain).
	Deps DepFields
}

// NewPayload builds the payload resque-go pushes: compact JSON, no HTML
// escaping, keys class, args, id, queue_time. args is JSON text: an array or
// object is kept as given (compacted, numbers exact); any other value is
// wrapped in an array; empty means [].
func NewPayload(class string, args []byte, opt EnqueueOptions) ([]byte, error) {
	if class == "" {
		return nil, fmt.Errorf("protocol: class must not be empty")
	}
	if err := checkUnique(opt.Unique); err != nil {
		return nil, err
	}
	argJSON, err := normalizeArgs(args)
	if err != nil {
		return nil, err
	}
	if err := checkTags(opt.Tags, opt.Plain); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"class":`)
	b.Write(MarshalString(class))
	b.WriteString(`,"args":`)
	b.Write(argJSON)
	if !opt.Plain {
		id := opt.ID
		if id == "" {
			id = NewJobID()
		}
		now := opt.Now
		if now.IsZero() {
			now = time.Now()
		}
		b.WriteString(`,"id":`)
		b.Write(MarshalString(id))
		b.WriteString(`,"queue_time":`)
		b.WriteString(FormatQueueTime(now))
	}
	if u := opt.Unique; u.UID != "" {
		b.WriteString(`,"unique":{"uid":`)
		b.Write(MarshalString(u.UID))
		if u.Deferrable {
			b.WriteString(`,"deferrableBy":`)
			b.WriteString(strconv.FormatInt(u.DeferrableBy, 10))
		}
		b.WriteByte('}')
	}
	if opt.Traceparent != "" && !opt.Plain {
		b.WriteString(`,"traceparent":`)
		b.Write(MarshalString(opt.Traceparent))
		if opt.Tracestate != "" {
			b.WriteString(`,"tracestate":`)
			b.Write(MarshalString(opt.Tracestate))
		}
	}
	if len(opt.Tags) > 0 {
		b.WriteString(`,"tags":[`)
		for i, t := range opt.Tags {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(MarshalString(t))
		}
		b.WriteByte(']')
	}
	if !opt.Plain && !opt.Deps.empty() {
		opt.Deps.write(&b)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func normalizeArgs(args []byte) ([]byte, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		return []byte("[]"), nil
	}
	if !json.Valid(args) {
		return nil, fmt.Errorf("protocol: args are not valid JSON: %s", excerpt(args))
	}
	if at := invalidUTF8At(args); at >= 0 {
		// json.Valid lets such bytes through in strings; DecodePayload (and
		// Ruby's and PHP's parsers) would refuse the job.
		return nil, fmt.Errorf("protocol: args are not valid UTF-8 (bad byte 0x%02x at offset %d): %s", args[at], at, excerpt(args))
	}
	var b bytes.Buffer
	if err := json.Compact(&b, args); err != nil {
		return nil, fmt.Errorf("protocol: args: %w", err)
	}
	if args[0] == '[' || args[0] == '{' {
		return b.Bytes(), nil
	}
	return []byte("[" + b.String() + "]"), nil
}

// FormatQueueTime writes t as float Unix seconds with 4 decimals.
func FormatQueueTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 4, 64)
}

// NewJobID returns 32 lowercase hex characters, as php-resque ids look.
func NewJobID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("protocol: crypto/rand failed: %v", err))
	}
	return hex.EncodeToString(b[:])
}

// MarshalString encodes s as a JSON string without HTML escaping, the way
// Ruby and node write <, > and & literally.
func MarshalString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// EmbedPayload returns raw as it should appear inside another JSON document
// (a failed entry, a worker record): the bytes themselves when they are a
// valid JSON object, otherwise a JSON string holding them, so that a garbage
// payload never corrupts the document that carries it.
//
// Bytes that are not valid UTF-8 cannot travel inside JSON (strict readers
// reject the whole document); such a payload is embedded as a string
// holding InvalidUTF8Prefix and the bytes in standard base64, so nothing is
// lost and every reader can parse the entry.
func EmbedPayload(raw []byte) []byte {
	if !utf8.Valid(raw) {
		return MarshalString(InvalidUTF8Prefix + base64.StdEncoding.EncodeToString(raw))
	}
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return t
	}
	return MarshalString(string(raw))
}

// InvalidUTF8Prefix starts the embedded form of a payload that is not valid
// UTF-8: the rest is the original bytes in standard base64.
const InvalidUTF8Prefix = "base64:"

// UnembedPayload reverses EmbedPayload for a payload that was embedded as a
// string: the base64 form gives back the original bytes.
func UnembedPayload(s string) []byte {
	if rest, ok := strings.CutPrefix(s, InvalidUTF8Prefix); ok {
		if b, err := base64.StdEncoding.DecodeString(rest); err == nil && !utf8.Valid(b) {
			return b
		}
	}
	return []byte(s)
}

// parseUnixSeconds reads a queue_time: a JSON number, or a decimal number in
// a string (some producers quote it). NaN, infinities, hex floats and times
// outside 1970 to MaxTimestamp are refused: they would poison the
// queue-time statistics (an INCRBY that overflows fails the whole flush).
func parseUnixSeconds(raw json.RawMessage) (float64, bool) {
	s := string(bytes.Trim(raw, `"`))
	if s == "" || strings.ContainsAny(s, "xXnNiI") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > MaxTimestamp {
		return 0, false
	}
	return f, true
}

// splitObject returns the top-level fields of b, a JSON object that
// json.Valid accepted, by name, as json.Unmarshal into a
// map[string]json.RawMessage does (the last of two fields with one name
// wins) without its reflection: a payload is decoded for every job. The
// values are slices of one copy of b, each capped at its end, so a caller
// that writes into one or appends to it changes neither the others nor b.
func splitObject(b []byte) map[string]json.RawMessage {
	b = bytes.Clone(b)
	m := make(map[string]json.RawMessage, 4)
	i := skipJSONSpace(b, 1)
	for i < len(b) && b[i] == '"' {
		end, escaped := scanJSONString(b, i)
		var key string
		if escaped {
			_ = json.Unmarshal(b[i:end], &key) // valid: it decodes
		} else {
			key = string(b[i+1 : end-1])
		}
		i = skipJSONSpace(b, end)
		i = skipJSONSpace(b, i+1) // past ':'
		vend := scanJSONValue(b, i)
		m[key] = json.RawMessage(b[i:vend:vend])
		i = skipJSONSpace(b, vend)
		if i < len(b) && b[i] == ',' {
			i = skipJSONSpace(b, i+1)
		}
	}
	return m
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanJSONString returns the index just past the string that starts at
// b[i] (a quote) and whether it holds an escape.
func scanJSONString(b []byte, i int) (end int, escaped bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return len(b), escaped
}

// scanJSONValue returns the index just past the value that starts at b[i].
func scanJSONValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		end, _ := scanJSONString(b, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(b); {
			switch b[j] {
			case '"':
				j, _ = scanJSONString(b, j)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}
