package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseDelayedMember reads the timestamp of a timestamps:<item> member,
// "delayed:<ts>".
func ParseDelayedMember(m string) (int64, bool) {
	s, ok := strings.CutPrefix(m, "delayed:")
	if !ok {
		return 0, false
	}
	ts, err := strconv.ParseInt(s, 10, 64)
	return ts, err == nil
}

// DelayedItemForms returns the byte forms a delayed item for a job with only
// class and args, due on queue, has in the delayed queue, as the writers
// that keep the timestamps:<item> index write it: resque-scheduler and
// resque-go ({"class","args","queue"}, Ruby's key order) and node-resque
// ({"class","queue","args"}: its Queue#encode). Each comes with args as
// given (compacted, as resque-go's enqueue writes them) and as Ruby's
// JSON.generate and JavaScript's JSON.stringify write them (strings in raw
// UTF-8, only quote, backslash and control characters escaped). The index
// is keyed by these exact bytes, so a lookup tries each form. args must be
// valid JSON.
func DelayedItemForms(class string, args []byte, queue string) ([][]byte, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, bytes.TrimSpace(args)); err != nil {
		return nil, fmt.Errorf("%w: args: %v", ErrBadPayload, err)
	}
	script, err := ScriptJSON(args)
	if err != nil {
		return nil, err
	}
	var forms [][]byte
	add := func(parts ...[]byte) {
		item := bytes.Join(parts, nil)
		for _, f := range forms {
			if bytes.Equal(f, item) {
				return
			}
		}
		forms = append(forms, item)
	}
	for _, a := range [][]byte{compact.Bytes(), script} {
		for _, str := range []func(string) []byte{MarshalString, scriptString} {
			c, q := str(class), str(queue)
			add([]byte(`{"class":`), c, []byte(`,"args":`), a, []byte(`,"queue":`), q, []byte(`}`))
			add([]byte(`{"class":`), c, []byte(`,"queue":`), q, []byte(`,"args":`), a, []byte(`}`))
		}
	}
	return forms, nil
}

// ScriptJSON re-encodes JSON text the way Ruby's JSON.generate and
// JavaScript's JSON.stringify write it: no whitespace, object keys in their
// order, numbers as written, strings in raw UTF-8 with only quote,
// backslash and control characters escaped (so "\u00e9" and "\/" as PHP
// writes them become "é" and "/"). Two JSON texts that differ only in
// spacing and string escapes have the same ScriptJSON.
func ScriptJSON(raw []byte) ([]byte, error) {
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%w: not valid JSON", ErrBadPayload)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		obj bool
		n   int // tokens written in this object or array
	}
	var b bytes.Buffer
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return b.Bytes(), nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadPayload, err)
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			b.WriteByte(byte(d))
			continue
		}
		if len(stack) > 0 {
			f := &stack[len(stack)-1]
			switch {
			case f.obj && f.n%2 == 1:
				b.WriteByte(':')
			case f.n > 0:
				b.WriteByte(',')
			}
			f.n++
		}
		switch v := tok.(type) {
		case json.Delim:
			b.WriteByte(byte(v))
			stack = append(stack, frame{obj: v == '{'})
		case string:
			b.Write(scriptString(v))
		case json.Number:
			b.WriteString(v.String())
		case bool:
			b.WriteString(strconv.FormatBool(v))
		case nil:
			b.WriteString("null")
		}
	}
}

// scriptString is s as a JSON string the way Ruby's JSON.generate and
// JSON.stringify write it.
func scriptString(s string) []byte {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\b':
			b = append(b, '\\', 'b')
		case r == '\f':
			b = append(b, '\\', 'f')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
