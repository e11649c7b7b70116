// Package schedule reads resque-scheduler's recurring schedules: the YAML
// schedule file (cron with an optional time zone, every, class, queue,
// args, description, rails_env/env) and the JSON of the dynamic schedules
// Ruby's Resque.set_schedule keeps in Redis, and computes their slots. A
// program lists the schedules in Redis through package client
// (Schedules); resque-go's scheduler fires them, elected with
// resque-scheduler's own lock, each (schedule, slot) at most once.
package schedule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Sources of an entry.
const (
	SourceFile  = "file"  // the YAML schedule file
	SourceRedis = "redis" // persistent_schedules (Resque.set_schedule)
	// SourceMaster is a schedule the master scheduler published as one it
	// fires (from its schedule file), read by client.Schedules.
	SourceMaster = "master"
)

// Entry is one recurring schedule.
type Entry struct {
	Name  string `json:"name"`
	Class string `json:"class"`
	// Queue may be empty only for a manual entry.
	Queue string `json:"queue"`
	// Args is the job's args array as resque-scheduler enqueues it: no
	// args is [], an object or a scalar is wrapped in an array.
	Args        json.RawMessage `json:"args"`
	Description string          `json:"description,omitempty"`
	// Cron (with its time zone, if any) or Every, as configured; neither
	// for a manual entry (resque-scheduler skips those; resque-web can
	// queue them by hand).
	Cron  string `json:"cron,omitempty"`
	Every string `json:"every,omitempty"`
	// Options are the rufus options given with cron or every
	// (["5m", {"first_in": "1m"}]), as JSON.
	Options json.RawMessage `json:"options,omitempty"`
	// Env is rails_env (or env) as configured: the comma or space
	// separated environments the entry is loaded in; empty: all.
	Env    string `json:"env,omitempty"`
	Source string `json:"source"`

	timing *timing
	config json.RawMessage // the config as read (JSON), what a master publishes
}

// Config returns the entry's config as it was read, as JSON (the form of a
// persistent_schedules value).
func (e Entry) Config() json.RawMessage { return e.config }

// Manual reports whether the entry has neither cron nor every: it is never
// fired by a scheduler.
func (e Entry) Manual() bool { return e.timing == nil }

// When describes the entry's timing: "cron 0 3 * * * Europe/Prague",
// "every 5m" or "manual".
func (e Entry) When() string {
	switch {
	case e.Cron != "":
		return "cron " + e.Cron
	case e.Every != "":
		return "every " + e.Every
	}
	return "manual"
}

// Next returns the entry's first slot strictly after t, or the zero time for a manual entry or when
// there is none. first_in counts from when a scheduler loads the entry,
// so Next does not apply it.
func (e Entry) Next(t time.Time) time.Time {
	if e.timing == nil {
		return time.Time{}
	}
	return e.timing.next(t)
}

// FirstIn is the entry's first_in option: how long after a scheduler loads
// it the first slot may be enqueued (0 when none, or for a manual entry).
func (e Entry) FirstIn() time.Duration {
	if e.timing == nil {
		return 0
	}
	return e.timing.firstIn
}

// LoadedAt returns the entry as a scheduler that loads it at now runs it:
// a last_in option becomes the absolute end now+last_in (as last_at).
func (e Entry) LoadedAt(now time.Time) Entry {
	if e.timing != nil && e.timing.lastIn > 0 && e.timing.lastAt.IsZero() {
		t := *e.timing
		t.lastAt = now.Add(e.timing.lastIn)
		e.timing = &t
	}
	return e
}

// Latest returns the entry's latest slot s with floor <= s <= now, within
// its first_at and last_at; false when there is none or the entry is
// manual.
func (e Entry) Latest(now, floor time.Time) (time.Time, bool) {
	if e.timing == nil {
		return time.Time{}, false
	}
	return e.timing.latest(now, floor)
}

// MatchesEnv reports whether the entry is loaded in environment env, as
// resque-scheduler's env_matches? decides: an entry without rails_env/env
// always is; one with it only when env is one of its comma or space
// separated names.
func (e Entry) MatchesEnv(env string) bool {
	if e.Env == "" {
		return true
	}
	if env == "" {
		return false
	}
	for _, name := range envSplit().Split(e.Env, -1) {
		if name == env {
			return true
		}
	}
	return false
}

var envSplit = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[\s,]+`) })

// Payload is the job resque-scheduler pushes for the entry:
// {"class":...,"args":[...]}, byte for byte.
func (e Entry) Payload() ([]byte, error) {
	return protocol.NewPayload(e.Class, e.Args, protocol.EnqueueOptions{Plain: true})
}

// EntryError is a schedule entry that cannot be used.
type EntryError struct {
	Name  string
	Field string // the config key at fault; "" for the entry as a whole
	Err   error
}

func (e *EntryError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("schedule %q: %v", e.Name, e.Err)
	}
	return fmt.Sprintf("schedule %q: %s: %v", e.Name, e.Field, e.Err)
}

func (e *EntryError) Unwrap() error { return e.Err }

// ParseJSON reads one dynamic schedule: a persistent_schedules value (the
// JSON of the config Resque.set_schedule was given).
func ParseJSON(name string, config []byte) (Entry, error) {
	return ParseEntry(name, config, SourceRedis)
}

// ParseEntry reads one entry's config (a JSON object) that came from
// source (SourceFile, SourceRedis or SourceMaster). A file entry
// without class takes its name as class, as Resque.schedule= does; a
// dynamic one must have one (set_schedule does not fill it in).
func ParseEntry(name string, config []byte, source string) (Entry, error) {
	fail := func(field string, format string, args ...any) (Entry, error) {
		return Entry{}, &EntryError{Name: name, Field: field, Err: fmt.Errorf(format, args...)}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(config, &m); err != nil || m == nil {
		return fail("", "want a mapping of class, queue, cron or every, args... (got %s)", excerpt(config))
	}
	e := Entry{Name: name, Source: source, config: config}
	var err error
	if e.Class, err = optString(m, "class"); err != nil {
		return fail("class", "%v", err)
	}
	if e.Queue, err = optString(m, "queue"); err != nil {
		return fail("queue", "%v", err)
	}
	if e.Description, err = optString(m, "description"); err != nil {
		e.Description = string(m["description"]) // only shown
	}
	if key, env, err := envOf(m); err != nil {
		return fail(key, "%v", err)
	} else {
		e.Env = env
	}
	if e.Args, err = protocol.ScheduleArgs(m["args"]); err != nil {
		return fail("args", "%v", err)
	}
	if !utf8.Valid(e.Args) {
		// no worker could run it: Ruby's and PHP's JSON parsers refuse it
		return fail("args", "not valid UTF-8")
	}
	// resque-scheduler takes cron before every and skips an empty one.
	for _, kind := range []string{"cron", "every"} {
		raw, ok := m[kind]
		if !ok || isEmpty(raw) {
			continue
		}
		if err := e.setTiming(kind, raw); err != nil {
			return fail(kind, "%v", err)
		}
		break
	}
	if e.Class == "" && source != SourceRedis {
		e.Class = name
	}
	if e.Manual() {
		return e, nil
	}
	if e.Class == "" {
		return fail("class", "missing (a dynamic schedule must name its job class)")
	}
	if e.Queue == "" {
		return fail("queue", "missing: resque-scheduler would ask the Ruby class %s for its queue, which resque-go cannot; give queue", e.Class)
	}
	if c, _ := optString(m, "custom_job_class"); c != "" && c != "Resque::Job" {
		return fail("custom_job_class", "%q is not supported (resque-scheduler calls the Ruby class's scheduled method)", c)
	}
	return e, nil
}

// setTiming reads cron or every: a string, or [string, {options}] (a list
// of another shape uses its first element, as resque-scheduler does).
func (e *Entry) setTiming(kind string, raw json.RawMessage) error {
	spec, opts := raw, json.RawMessage(nil)
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		if len(list) == 0 {
			return fmt.Errorf("empty list")
		}
		spec = list[0]
		if len(list) == 2 && bytes.HasPrefix(bytes.TrimSpace(list[1]), []byte("{")) {
			opts = list[1]
		}
	}
	var text string
	var num json.Number
	switch {
	case json.Unmarshal(spec, &text) == nil:
	case kind == "every" && json.Unmarshal(spec, &num) == nil:
		text = num.String() // a number of seconds
	default:
		return fmt.Errorf("want a string, got %s", excerpt(spec))
	}
	var tm *timing
	if kind == "cron" {
		t, err := parseCron(text)
		if err != nil {
			return err
		}
		tm, e.Cron = t, strings.Join(strings.Fields(text), " ")
	} else {
		d, err := ParseDuration(text)
		if err != nil {
			return err
		}
		tm, e.Every = &timing{every: d}, strings.TrimSpace(text)
	}
	if opts != nil {
		if err := tm.setOptions(opts); err != nil {
			return err
		}
		var b bytes.Buffer
		_ = json.Compact(&b, opts)
		e.Options = b.Bytes()
	}
	if tm.cron == nil && !tm.firstAt.IsZero() {
		tm.anchor = tm.firstAt.Unix()
	}
	e.timing = tm
	return nil
}

// ignoredOptions are rufus options that do not change when a job is
// enqueued (they govern how rufus runs the Ruby block).
var ignoredOptions = map[string]bool{"tag": true, "tags": true, "blocking": true, "overlap": true,
	"mutex": true, "timeout": true, "job": true, "name": true, "discard_past": true}

func (tm *timing) setOptions(raw json.RawMessage) error {
	var opts map[string]json.RawMessage
	if err := json.Unmarshal(raw, &opts); err != nil {
		return fmt.Errorf("options: %w", err)
	}
	for key, v := range opts {
		name := strings.TrimPrefix(key, ":") // a Ruby symbol written in YAML
		var err error
		switch name {
		case "first_in":
			tm.firstIn, err = optDuration(v)
		case "last_in":
			tm.lastIn, err = optDuration(v)
		case "first_at":
			tm.firstAt, err = optTime(v)
		case "last_at":
			tm.lastAt, err = optTime(v)
		case "first", "last":
			d, derr := optDuration(v)
			t, terr := optTime(v)
			switch {
			case derr == nil && name == "first":
				tm.firstIn = d
			case derr == nil:
				tm.lastIn = d
			case terr == nil && name == "first":
				tm.firstAt = t
			case terr == nil:
				tm.lastAt = t
			default:
				err = fmt.Errorf("want a duration or a time, got %s", excerpt(v))
			}
		default:
			if !ignoredOptions[name] {
				err = fmt.Errorf("not supported by resque-go (first_in, first_at, last_in, last_at are)")
			}
		}
		if err != nil {
			return fmt.Errorf("option %s: %w", name, err)
		}
	}
	return nil
}

// optDuration reads a duration option: seconds as a number, or a duration.
func optDuration(v json.RawMessage) (time.Duration, error) {
	var num json.Number
	var s string
	switch {
	case json.Unmarshal(v, &num) == nil:
		return ParseDuration(num.String())
	case json.Unmarshal(v, &s) == nil:
		return ParseDuration(s)
	}
	return 0, fmt.Errorf("want a duration, got %s", excerpt(v))
}

// timeLayouts are the forms a first_at or last_at time may take; one
// without a zone is local time.
var timeLayouts = []string{time.RFC3339Nano, protocol.LastEnqueuedAtLayout, "2006-01-02 15:04:05 MST",
	"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006/01/02 15:04:05", "2006-01-02 15:04", "2006/01/02 15:04"}

func optTime(v json.RawMessage) (time.Time, error) {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return time.Time{}, fmt.Errorf("want a time, got %s", excerpt(v))
	}
	s = strings.TrimSpace(s)
	for _, layout := range timeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time (want e.g. 2030-01-02 03:04:05 +0100 or RFC 3339)", s)
}

// optString reads a string field; absent or null is "".
func optString(m map[string]json.RawMessage, key string) (string, error) {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("want a string, got %s", excerpt(raw))
	}
	return s, nil
}

// envOf is rails_env, or env when rails_env is absent (Ruby's
// config['rails_env'] || config['env']), and the key it came from.
func envOf(m map[string]json.RawMessage) (key, env string, err error) {
	for _, key := range []string{"rails_env", "env"} {
		raw, ok := m[key]
		if !ok || string(raw) == "null" {
			continue
		}
		if err := json.Unmarshal(raw, &env); err != nil {
			return key, "", fmt.Errorf("want a comma separated string of environments, got %s", excerpt(raw))
		}
		if env == "" {
			return key, "", fmt.Errorf("empty: the entry would never be loaded")
		}
		return key, env, nil
	}
	return "", "", nil
}

// isEmpty is Ruby's nil? || empty? for a cron or every value.
func isEmpty(raw json.RawMessage) bool {
	switch s := string(bytes.TrimSpace(raw)); s {
	case "null", `""`, "[]", "{}":
		return true
	}
	return false
}

func excerpt(b []byte) string {
	s := string(bytes.TrimSpace(b))
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return strconv.Quote(s)
}
