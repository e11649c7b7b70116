package node

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"

	"github.com/rs/zerolog"
)

// WithSlog makes the node log through l: every line at a level l's handler
// enables, its message as the record's message and its fields (queue,
// class, job_id, worker_id, ...) as attributes, in order. Default:
// slog.Default(), which writes to stderr at info unless the program set its
// own (slog.SetDefault). WithLogger takes a zerolog.Logger instead.
func WithSlog(l *slog.Logger) Option {
	return func(o *options) { o.log, o.logSet = fromSlog(l), true }
}

// defaultLogger is the logger of a node built without WithLogger or
// WithSlog: slog.Default() at the time New is called.
func defaultLogger() zerolog.Logger { return fromSlog(slog.Default()) }

// fromSlog adapts l to the zerolog.Logger the node's services take. The
// zerolog level is the lowest one l enables, so that nothing is encoded for
// l to drop.
func fromSlog(l *slog.Logger) zerolog.Logger {
	if l == nil {
		return zerolog.Nop()
	}
	level := zerolog.Disabled
	for _, lv := range []struct {
		s slog.Level
		z zerolog.Level
	}{{slog.LevelError, zerolog.ErrorLevel}, {slog.LevelWarn, zerolog.WarnLevel}, {slog.LevelInfo, zerolog.InfoLevel}, {slog.LevelDebug, zerolog.DebugLevel}} {
		if l.Enabled(context.Background(), lv.s) {
			level = lv.z
		}
	}
	return zerolog.New(slogWriter{l}).Level(level)
}

// slogWriter receives zerolog's JSON lines and logs each as one slog record.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) { return w.WriteLevel(zerolog.NoLevel, p) }

func (w slogWriter) WriteLevel(level zerolog.Level, p []byte) (int, error) {
	msg, attrs := decodeEvent(p)
	w.l.LogAttrs(context.Background(), slogLevel(level), msg, attrs...)
	return len(p), nil
}

func slogLevel(l zerolog.Level) slog.Level {
	switch {
	case l <= zerolog.DebugLevel && l != zerolog.NoLevel:
		return slog.LevelDebug
	case l == zerolog.WarnLevel:
		return slog.LevelWarn
	case l >= zerolog.ErrorLevel && l <= zerolog.PanicLevel:
		return slog.LevelError
	}
	return slog.LevelInfo
}

// decodeEvent reads one zerolog JSON object: the message and the other
// fields in the order they were written (numbers stay exact). A line that
// is not an object is logged whole as the message.
func decodeEvent(p []byte) (string, []slog.Attr) {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return string(bytes.TrimSpace(p)), nil
	}
	var msg string
	var attrs []slog.Attr
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := t.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			break
		}
		switch key {
		case zerolog.MessageFieldName:
			msg, _ = v.(string)
		case zerolog.LevelFieldName:
		default:
			attrs = append(attrs, slog.Any(key, attrValue(v)))
		}
	}
	return msg, attrs
}

// attrValue turns a JSON number into an int64 or a float64, so that
// handlers print it as a number.
func attrValue(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	if i, err := n.Int64(); err == nil {
		return i
	}
	if f, err := n.Float64(); err == nil {
		return f
	}
	return n.String()
}
