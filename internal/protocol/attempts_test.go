package protocol_test

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/protocol"
)

// TestAttemptsDigest: a job in Ruby's form is counted under the SHA-1 of its
// bytes (what the claim script computes); a job with more fields under the
// Ruby form resque-scheduler rebuilds it to, so the count survives that.
func TestAttemptsDigest(t *testing.T) {
	t.Parallel()
	decode := func(raw string) *protocol.Payload {
		p, err := protocol.DecodePayload([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ruby := `{"class":"MailJob","args":[1,"two",3.5,{"k":"v"},null,true,12345678901234567890,"unicode é ✓ <tag>&"]}`
	sum := sha1.Sum([]byte(ruby))
	if got := protocol.AttemptsDigest(decode(ruby)); got != hex.EncodeToString(sum[:]) {
		t.Errorf("digest of Ruby's form = %s, want the SHA-1 of its bytes", got)
	}
	v3 := `{"class":"MailJob","args":[1,"two",3.5,{"k":"v"},null,true,12345678901234567890,"unicode é ✓ <tag>&"],"queue":"mail","failCount":1,"id":"x"}`
	if protocol.AttemptsDigest(decode(v3)) != protocol.AttemptsDigest(decode(ruby)) {
		t.Error("a job with more fields must count under its Ruby form")
	}
	if protocol.AttemptsDigest(decode(`{"class":"A","id":"1"}`)) != protocol.AttemptsDigest(decode(`{"class":"A","args":[]}`)) {
		t.Error("absent args must count as []")
	}
	if protocol.AttemptsDigest(decode(`{"class":"A","args":[2]}`)) == protocol.AttemptsDigest(decode(`{"class":"A","args":[1]}`)) {
		t.Error("different jobs, same digest")
	}
	if got := (protocol.Keys{}).Attempts("d"); got != "resque:resque-go:attempts:d" {
		t.Errorf("Attempts key = %q", got)
	}
}

// TestRetryOfKeepsRubyBytes: a Ruby-shaped job is retried with its own bytes
// (the count lives in the attempts key), so its delayed item is
// byte-identical to what resque-scheduler writes for the same job; other
// payloads get failCount, id and queue_time.
func TestRetryOfKeepsRubyBytes(t *testing.T) {
	t.Parallel()
	now := time.Unix(1700000000, 0)
	d := fixtures.MustLoad("resque-scheduler-5.0.0", "delayed-enqueue")
	wantItems := d.List("resque:delayed:1795299965")
	for i, raw := range []string{
		`{"class":"MailJob","args":[1,"two",3.5,{"k":"v"},null,true,12345678901234567890,"unicode é ✓ <tag>&"]}`,
		`{"class":"NoArgsJob","args":[]}`,
	} {
		p, err := protocol.DecodePayload([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if !p.RubyShaped() {
			t.Fatalf("%s: not Ruby-shaped", raw)
		}
		next, err := protocol.RetryOf(p, 2, "ignored", now)
		if err != nil || string(next) != raw {
			t.Fatalf("RetryOf(%s) = %s, %v; want the same bytes", raw, next, err)
		}
		item, err := protocol.DelayedItem(next, "mail")
		if err != nil || string(item) != wantItems[i] {
			t.Errorf("delayed item = %s, %v\nresque-scheduler writes %s", item, err, wantItems[i])
		}
		// and resque-scheduler's own promotion of that item gives back Ruby's payload
		promoted, queue, err := protocol.PromotedPayload(item, now)
		if err != nil || queue != "mail" || string(promoted) != raw {
			t.Errorf("promoted = %s %q %v, want %s", promoted, queue, err, raw)
		}
	}
	v3 := `{"class":"Task","args":{"k":"v"},"queue":"q","sourceId":"s1","failCount":1,"id":"old","queue_time":1.5}`
	p, err := protocol.DecodePayload([]byte(v3))
	if err != nil || p.RubyShaped() {
		t.Fatalf("v3 payload: %v, ruby-shaped %v", err, p.RubyShaped())
	}
	next, err := protocol.RetryOf(p, 2, "new", now)
	if want := `{"class":"Task","args":{"k":"v"},"queue":"q","sourceId":"s1","failCount":2,"id":"new","queue_time":1700000000.0000}`; err != nil || string(next) != want {
		t.Errorf("RetryOf(v3) = %s, %v; want %s", next, err, want)
	}
}

// TestPromotedPayloadKeepsOwnFields: resque-v3 reads a job's queue field for
// retries and reports, so an item with fields of its own keeps them all; a
// Ruby-shaped item is promoted as resque-scheduler promotes it (the
// delayed-handled fixture).
func TestPromotedPayloadKeepsOwnFields(t *testing.T) {
	t.Parallel()
	now := time.Unix(1700000000, 0)
	item := `{"class":"Task","args":{"k":"v"},"queue":"q","sourceId":"s1","failCount":1,"id":"abc","queue_time":1.5}`
	got, queue, err := protocol.PromotedPayload([]byte(item), now)
	want := `{"class":"Task","args":{"k":"v"},"queue":"q","sourceId":"s1","failCount":1,"id":"abc","queue_time":1700000000.0000}`
	if err != nil || queue != "q" || string(got) != want {
		t.Errorf("v3 promoted = %s %q %v; want %s", got, queue, err, want)
	}
	php := `{"class":"Mail_Job","args":[{"a":1}],"queue":"mail","prefix":""}`
	got, _, err = protocol.PromotedPayload([]byte(php), now)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(got, &f); err != nil || string(f["queue"]) != `"mail"` || len(f["id"]) != 34 || string(f["prefix"]) != `""` {
		t.Errorf("php item promoted = %s", got)
	}
	before := fixtures.MustLoad("resque-scheduler-5.0.0", "delayed-enqueue").List("resque:delayed:1795299965")
	after := fixtures.MustLoad("resque-scheduler-5.0.0", "delayed-handled").List("resque:queue:mail")
	for i, it := range before {
		got, queue, err := protocol.PromotedPayload([]byte(it), now)
		if err != nil || queue != "mail" || string(got) != after[i] {
			t.Errorf("promoted %s = %s %q %v; resque-scheduler pushed %s", it, got, queue, err, after[i])
		}
	}
}

func TestFreshAttempts(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"class":"A","args":[],"failCount":3,"id":"x"}`: `{"class":"A","args":[],"id":"x"}`,
		`{"class":"A","args":[]}`:                        `{"class":"A","args":[]}`,
		`not json`:                                       `not json`,
	} {
		if got := protocol.FreshAttempts([]byte(in)); string(got) != want {
			t.Errorf("FreshAttempts(%s) = %s, want %s", in, got, want)
		}
	}
}
