package protocol_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	. "github.com/resque-go/resque-go/internal/protocol"
)

// Every job the fixtures' producers wrote, enqueued again by resque-go with
// tags, still reads as the same job: the payload decodes, its class and
// args are the bytes Ruby, PHP and Node read, and the tags are one extra
// field after the others.
func TestTaggedPayloadsOfFixtureJobsDecode(t *testing.T) {
	t.Parallel()
	tags := []string{"customer-7", "import"}
	now := time.Unix(1795888990, 0)
	for _, f := range fixtureQueuePayloads(t) {
		p, err := DecodePayload([]byte(f.raw))
		if err != nil || p.Class == "" {
			continue // a payload the fixture keeps as a bad one
		}
		args := p.Args
		if len(args) == 0 {
			args = json.RawMessage(`[]`)
		}
		plain, err := NewPayload(p.Class, args, EnqueueOptions{ID: "x", Now: now})
		if err != nil {
			continue // args of a shape resque-go's producer refuses
		}
		tagged, err := NewPayload(p.Class, args, EnqueueOptions{ID: "x", Now: now, Tags: tags})
		if err != nil {
			t.Fatalf("%s: %v", f.where, err)
		}
		if !bytes.HasPrefix(tagged, plain[:len(plain)-1]) || !bytes.HasSuffix(tagged, []byte(`,"tags":["customer-7","import"]}`)) {
			t.Errorf("%s: tags are not one field after the others: %s", f.where, tagged)
		}
		q, err := DecodePayload(tagged)
		if err != nil || q.Class != p.Class || !bytes.Equal(q.Args, rawFields(t, tagged)["args"]) || !slices.Equal(q.Tags(), tags) {
			t.Errorf("%s: %s decodes as %+v, %v", f.where, tagged, q, err)
		}
		// what a Ruby, PHP or Node worker reads: class and args, as without tags
		a, b := rawFields(t, plain), rawFields(t, tagged)
		if !bytes.Equal(a["class"], b["class"]) || !bytes.Equal(a["args"], b["args"]) {
			t.Errorf("%s: class or args changed by the tags", f.where)
		}
	}
}

func TestTagChecks(t *testing.T) {
	t.Parallel()
	for tag, ok := range map[string]bool{"a": true, "customer:7": true, "": false, "a b": false, "a\tb": false, string(make([]byte, 201)): false} {
		if got := CheckTag(tag) == nil; got != ok {
			t.Errorf("CheckTag(%q) ok = %v, want %v", tag, got, ok)
		}
	}
	if _, err := NewPayload("C", nil, EnqueueOptions{Plain: true, Tags: []string{"a"}}); err == nil {
		t.Error("a plain payload took tags")
	}
	p, _ := DecodePayload([]byte(`{"class":"C","args":[],"tags":"not a list"}`))
	if p.Tags() != nil {
		t.Errorf("tags of another shape: %v", p.Tags())
	}
}

// A tag's index is under the pattern the dashboard's tag list scans.
func TestTagKeys(t *testing.T) {
	t.Parallel()
	k := NewKeys("resque")
	if got, want := k.Tag("a b<ü>"), "resque:resque-go:tag:a b<ü>"; got != want {
		t.Errorf("Tag: %q, want %q", got, want)
	}
	if got, want := k.TagPattern(), "resque:resque-go:tag:*"; got != want {
		t.Errorf("TagPattern: %q, want %q", got, want)
	}
	if ok, _ := MatchGlob(k.TagPattern(), k.Tag("x")); !ok {
		t.Errorf("%q does not match %q", k.TagPattern(), k.Tag("x"))
	}
}

func TestEventState(t *testing.T) {
	for event, want := range map[string]string{
		EventEnqueued: "queued", EventReleased: "queued", EventRequeued: "queued", EventStarted: "running",
		EventRetried: "delayed", EventRescheduled: "delayed", EventSucceeded: "succeeded", EventFailed: "failed",
		EventDiscarded: "discarded", EventCancelled: "cancelled",
	} {
		if got := EventState(event); got != want {
			t.Errorf("EventState(%q) = %q, want %q", event, got, want)
		}
	}
}
