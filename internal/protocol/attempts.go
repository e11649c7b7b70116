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

// AttemptsDigest names a job's attempt counter: the SHA-1 (hex) of the job
// in the form Ruby Resque writes it, {"class":C,"args":A}. For a payload in
// exactly that form it is the SHA-1 of its bytes, which the claim script
// computes too (redis.sha1hex) to hand the count to the worker with the job.
// A payload with more fields (resque-v3, php-resque) is counted under the
// Ruby form of its class and args, which is what resque-scheduler promotes
// it to after dropping those fields. Absent or null args count as [], the
// form Ruby writes for a job without arguments.
func AttemptsDigest(p *Payload) string {
	if p.RubyShaped() {
		sum := sha1.Sum(p.Raw)
		return hex.EncodeToString(sum[:])
	}
	sum := sha1.Sum(RubyForm(p.Class, p.Args))
	return hex.EncodeToString(sum[:])
}

// RubyForm is the payload Ruby Resque writes for class and args.
func RubyForm(class string, args json.RawMessage) []byte {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("[]")
	}
	var b bytes.Buffer
	b.WriteString(`{"class":`)
	b.Write(MarshalString(class))
	b.WriteString(`,"args":`)
	b.Write(args)
	b.WriteByte('}')
	return b.Bytes()
}

// RetryOf builds the payload of the next attempt of p after a failure.
// A Ruby-shaped job (only class and args) keeps its bytes: the
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
