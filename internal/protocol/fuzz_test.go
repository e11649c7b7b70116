package protocol_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/protocol"
)

// fuzzPayloadSeeds are every payload in every fixture queue, the payloads
// held in worker records, delayed lists and failed entries, and a few
// hand-written bad shapes.
func fuzzPayloadSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, fp := range fixtureQueuePayloads(f) {
		seeds = append(seeds, []byte(fp.raw))
	}
	for _, dir := range fixtures.Dirs() {
		for _, sc := range fixtures.Scenarios(dir) {
			d := fixtures.MustLoad(dir, sc)
			for _, name := range d.Names() {
				switch {
				case strings.HasPrefix(name, "resque:delayed:"), name == "resque:failed":
					for _, v := range d.List(name) {
						seeds = append(seeds, []byte(v))
					}
				case strings.HasPrefix(name, "resque:worker:") && !strings.HasSuffix(name, ":started"):
					if rec, err := protocol.ParseWorkerRecord([]byte(d.String(name))); err == nil {
						seeds = append(seeds, rec.Payload)
					}
				}
			}
		}
	}
	for _, s := range []string{
		resqueV3Payload, activeJobPayload, ``, ` `, `null`, `[]`, `"x"`, `{`, `{"class":1}`, `{"class":""}`,
		`{"args":[]}`, "{\"class\":\"A\xff\"}", "\xff", `{"class":"A","queue_time":"NaN"}`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

func FuzzDecodePayload(f *testing.F) {
	for _, s := range fuzzPayloadSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		orig := bytes.Clone(in)
		p, err := protocol.DecodePayload(in)
		if !bytes.Equal(in, orig) {
			t.Fatalf("DecodePayload modified its input")
		}
		if err != nil {
			if !errors.Is(err, protocol.ErrBadPayload) {
				t.Fatalf("error %v does not wrap ErrBadPayload", err)
			}
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("error is not valid UTF-8: %q", err)
			}
		} else {
			if !bytes.Equal(p.Raw, in) {
				t.Fatalf("Raw = %q, want the input %q", p.Raw, in)
			}
			if p.Class == "" {
				t.Fatalf("no error but empty Class for %q", in)
			}
			if p.Args != nil && !json.Valid(p.Args) {
				t.Fatalf("Args %q is not valid JSON", p.Args)
			}
			_ = p.HandlerClass()
			// A decodable payload is embedded as the object itself.
			if got := protocol.EmbedPayload(in); !bytes.Equal(got, bytes.TrimSpace(in)) {
				t.Fatalf("EmbedPayload(%q) = %q, want the object itself", in, got)
			}
		}
		emb := protocol.EmbedPayload(in)
		if !json.Valid(emb) {
			t.Fatalf("EmbedPayload(%q) = %q is not valid JSON", in, emb)
		}
		entry := protocol.Failure{Payload: in, Exception: protocol.ExcBadPayload, Error: "x"}.Encode()
		if !json.Valid(entry) {
			t.Fatalf("failed entry for %q is not valid JSON: %q", in, entry)
		}
		rec, err := protocol.ParseWorkerRecord(protocol.EncodeWorkerRecord("q", time.Unix(1795296221, 0), in))
		if err != nil {
			t.Fatalf("worker record for %q does not parse: %v", in, err)
		}
		if utf8.Valid(in) && !bytes.Equal(rec.Payload, bytes.TrimSpace(in)) && !bytes.Equal(rec.Payload, in) {
			t.Fatalf("worker record payload %q, want %q", rec.Payload, in)
		}
	})
}

// canonicalWorkerID is an id whose pid and slot are written the way String
// writes them: no sign, no leading zero, not too long to overflow.
var canonicalWorkerID = regexp.MustCompile(`^[^:]+:[1-9][0-9]{0,8}(-[1-9][0-9]{0,8})?:.+$`)

func FuzzParseWorkerID(f *testing.F) {
	for _, id := range fixtureWorkerIDs(f) {
		f.Add(id)
	}
	for _, id := range []string{
		"vm:2351:high,mail", "vm:2351", "host:12-3:high,low", "host:7:a:b", "h:007:q", "h:+5:q", "h:1-2-3:q",
		"h:0:q", "::", "h:1:", ":1:q", "h:99999999999999999999:q", "é:1:✓",
	} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		w, err := protocol.ParseWorkerID(id)
		if canonicalWorkerID.MatchString(id) && err != nil {
			t.Fatalf("ParseWorkerID(%q): %v", id, err)
		}
		if err != nil {
			if w != (protocol.WorkerID{}) {
				t.Fatalf("ParseWorkerID(%q) returned %+v with error %v", id, w, err)
			}
			return
		}
		if w.Host == "" || strings.Contains(w.Host, ":") || w.PID <= 0 || w.Slot < 0 || w.Queues == "" {
			t.Fatalf("ParseWorkerID(%q) = %+v", id, w)
		}
		s := w.String()
		// Host and queues are kept verbatim; only a non-canonical pid/slot
		// (leading zeros, a sign) may be rewritten.
		if !strings.HasPrefix(id, w.Host+":") || !strings.HasSuffix(id, ":"+w.Queues) {
			t.Fatalf("ParseWorkerID(%q) = %+v does not keep host and queues", id, w)
		}
		if canonicalWorkerID.MatchString(id) && s != id {
			t.Fatalf("ParseWorkerID(%q).String() = %q", id, s)
		}
		again, err := protocol.ParseWorkerID(s)
		if err != nil || again != w {
			t.Fatalf("ParseWorkerID(%q) = %+v, %v; want %+v (from %q)", s, again, err, w, id)
		}
	})
}
