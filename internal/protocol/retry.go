package protocol

import (
	"bytes"
	"strconv"
	"time"
)

// RetryPayload builds the payload of a retry (resque-v3 semantics): the
// original object with failCount incremented (added if absent), a fresh id
// and queue_time; every other field keeps its bytes and its place.
func RetryPayload(raw []byte, failCount int, id string, now time.Time) ([]byte, error) {
	return rewriteObject(raw, []field{
		{"failCount", []byte(strconv.Itoa(failCount))},
		{"id", MarshalString(id)},
		{"queue_time", []byte(FormatQueueTime(now))},
	}, nil)
}

// WithoutField returns the object raw without the top-level field name,
// other fields untouched.
func WithoutField(raw []byte, name string) ([]byte, error) {
	return rewriteObject(raw, nil, map[string]bool{name: true})
}

// WithFields returns raw with each field set: replaced in place when
// present, appended in the given order when absent.
func WithFields(raw []byte, set ...[2]string) ([]byte, error) {
	fs := make([]field, len(set))
	for i, s := range set {
		fs[i] = field{s[0], []byte(s[1])}
	}
	return rewriteObject(raw, fs, nil)
}

type field struct {
	name  string
	value []byte // raw JSON
}

// rewriteObject replaces the fields in set (in place), drops those in drop,
// and appends the fields of set that were absent; every other member keeps
// its raw bytes and its place.
func rewriteObject(raw []byte, set []field, drop map[string]bool) ([]byte, error) {
	members, err := objectMembers(raw)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	done := map[string]bool{}
	write := func(name string, value []byte) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.Write(MarshalString(name))
		b.WriteByte(':')
		b.Write(value)
	}
	for _, m := range members {
		if drop[m.name] || done[m.name] {
			continue
		}
		value := m.value
		for _, f := range set {
			if f.name == m.name {
				value = f.value
			}
		}
		done[m.name] = true
		write(m.name, value)
	}
	for _, f := range set {
		if !done[f.name] {
			write(f.name, f.value)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
