package protocol

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"time"
)

// AttemptsTTL is how long a retry's attempt counter outlives the retry's due
// time: long enough for any promoter to move it, short enough that a job
// removed from the delayed queue leaves no lasting trace.
const AttemptsTTL = 24 * time.Hour

// AttemptsDigest identifies a job across re-encodings by other runtimes:
// the SHA-1 of its class and its args in a canonical form (objects with
// sorted keys, no insignificant space, numbers as written, strings with
// escapes resolved), so Ruby's re-encoding of a PHP payload (`\/` and
// `\u00e9` written literally) gives the same digest. Absent or null args
// count as [], the form Ruby writes for a job without arguments.
func AttemptsDigest(class string, args json.RawMessage) string {
	h := sha1.New()
	h.Write([]byte(class))
	h.Write([]byte{0})
	h.Write(canonicalJSON(args))
	return hex.EncodeToString(h.Sum(nil))
}

func canonicalJSON(raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return []byte("[]")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// RetryOf builds the payload of the next attempt of p after a failure.
// A Ruby-shaped job (only class, args and queue) keeps its bytes: the
// attempt count then lives in the Attempts key alone, and every Ruby tool
// sees the job it wrote. Any other payload is RetryPayload: failCount
// incremented, id set to id, a fresh queue_time.
func RetryOf(p *Payload, failCount int, id string, now time.Time) ([]byte, error) {
	if p.RubyShaped() {
		return p.Raw, nil
	}
	return RetryPayload(p.Raw, failCount, id, now)
}

// FreshAttempts returns raw without its failCount: a retry an operator asks
// for starts a new attempt budget.
func FreshAttempts(raw []byte) []byte {
	members, err := objectMembers(raw)
	if err != nil {
		return raw
	}
	for _, m := range members {
		if m.name == "failCount" {
			out, err := WithoutField(raw, "failCount")
			if err != nil {
				return raw
			}
			return out
		}
	}
	return raw
}
