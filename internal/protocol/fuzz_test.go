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
		// the fields are what encoding/json makes of a valid object
		var ref map[string]json.RawMessage
		if trimmed := bytes.TrimSpace(in); utf8.Valid(in) && len(trimmed) > 0 && trimmed[0] == '{' &&
			json.Unmarshal(trimmed, &ref) == nil {
			if len(p.Fields) != len(ref) {
				t.Fatalf("fields %q, want %q", p.Fields, ref)
			}
			for k, v := range ref {
				if got, ok := p.Fields[k]; !ok || !bytes.Equal(got, v) {
					t.Fatalf("field %q = %q, want %q", k, got, v)
				}
			}
			var cls string
			if json.Unmarshal(ref["class"], &cls) != nil || cls == "" {
				if err == nil {
					t.Fatalf("no error for class %q", ref["class"])
				}
			} else if p.Class != cls {
				t.Fatalf("class %q (error %v), want %q", p.Class, err, cls)
			}
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

// FuzzNewPayload checks the round trip of what resque-go writes: any class
// and any valid JSON args give a payload that decodes to the same class,
// the args compacted (a scalar wrapped in an array), and the same unique
// field.
func FuzzNewPayload(f *testing.F) {
	for _, fp := range fixtureQueuePayloads(f) {
		if p, err := protocol.DecodePayload([]byte(fp.raw)); err == nil {
			f.Add(p.Class, []byte(p.Args), "", false, int64(0))
		}
	}
	f.Add("Mail<&>", []byte(`{"a":[1,2e3,"\u00e9"]}`), "u1", true, int64(30))
	f.Add("C", []byte(`"x"`), "", false, int64(0))
	f.Add("C", []byte(` 5 `), "42", true, int64(0))
	f.Add("C", []byte(`[`), "", false, int64(0))
	f.Add("A\xff", []byte(`[]`), "\xfe", false, int64(0))
	f.Fuzz(func(t *testing.T, class string, args []byte, uid string, deferrable bool, by int64) {
		if by < 0 {
			by = -by
		}
		if by < 0 {
			by = 0
		}
		by %= protocol.MaxDelaySeconds + 1 // a larger one is refused (TestDelayBounds)
		u := protocol.Unique{UID: uid, Deferrable: deferrable && uid != "", DeferrableBy: by}
		if !u.Deferrable {
			u.DeferrableBy = 0
		}
		raw, err := protocol.NewPayload(class, args, protocol.EnqueueOptions{ID: "id1", Now: time.Unix(1700000000, 0), Unique: u})
		if err != nil {
			if class != "" && json.Valid(bytes.TrimSpace(args)) && utf8.Valid(args) {
				t.Fatalf("NewPayload(%q, %q): %v", class, args, err)
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("NewPayload(%q, %q) = %q is not valid JSON", class, args, raw)
		}
		if !utf8.ValidString(class) || !utf8.ValidString(uid) {
			// encoding/json writes U+FFFD for the bad bytes: the payload
			// is valid but no longer carries them.
			return
		}
		p, err := protocol.DecodePayload(raw)
		if err != nil {
			t.Fatalf("payload %q does not decode: %v", raw, err)
		}
		if p.Class != class || p.ID != "id1" || !p.HasQueueTime {
			t.Fatalf("payload %q decodes to class %q id %q", raw, p.Class, p.ID)
		}
		var want bytes.Buffer
		if a := bytes.TrimSpace(args); len(a) > 0 {
			_ = json.Compact(&want, a)
			if a[0] != '[' && a[0] != '{' {
				want = *bytes.NewBufferString("[" + want.String() + "]")
			}
		} else {
			want.WriteString("[]")
		}
		if !bytes.Equal(p.Args, want.Bytes()) {
			t.Fatalf("args of %q = %s, want %s", raw, p.Args, want.Bytes())
		}
		got, ok, err := protocol.ParseUnique(raw)
		if err != nil || ok != (uid != "") || ok && got != u {
			t.Fatalf("ParseUnique(%q) = %+v, %v, %v; want %+v", raw, got, ok, err, u)
		}
	})
}

// FuzzParseUnique checks the unique field parser on any payload: no panic,
// an error only for a "unique" field that is there and malformed, a
// non-empty uid when ok, a deferral that is never negative, messages in
// valid UTF-8, and agreement with a payload rebuilt from what it read.
func FuzzParseUnique(f *testing.F) {
	for _, s := range fuzzPayloadSeeds(f) {
		f.Add(s)
	}
	for _, s := range []string{
		`{"class":"C","args":[],"unique":{"uid":"u1","deferrableBy":30}}`,
		`{"class":"C","args":[],"unique":{"uid":123456789012345678901234567890}}`,
		`{"class":"C","args":[],"unique":{"uid":1.5e3,"deferrableBy":"30"}}`,
		`{"class":"C","args":[],"unique":{"uid":"u","deferrableBy":-1}}`,
		`{"class":"C","args":[],"unique":{"uid":"u","deferrableBy":1e300}}`,
		`{"class":"C","args":[],"unique":{"uid":"u","deferrableBy":9223372036854775808}}`,
		`{"class":"C","args":[],"unique":5}`,
		`{"class":"C","args":[],"unique":"u"}`,
		`{"class":"C","args":[],"unique":{"uid":true}}`,
		`{"class":"C","args":[],"unique":{"uid":""}}`,
		`{"class":"C","args":[],"unique":{"uid":null}}`,
		`{"class":"C","args":[],"unique":null}`,
		`{"class":"C","args":[],"unique":{"uid":["ééééééééééééééééééééééééééééééééééééééééééééééééé"]}}`,
		`{"class":"C","args":[],"unique":{"uid":["aéééééééééééééééééééééééééééééééééééééééééééééé"]}}`,
		`["unique"]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		u, ok, err := protocol.ParseUnique(in)
		if err != nil {
			// only a malformed deferral leaves the uid known
			if ok != (u.UID != "") || u.Deferrable || !ok && u != (protocol.Unique{}) ||
				ok && !strings.Contains(err.Error(), "deferrableBy") {
				t.Fatalf("ParseUnique(%q) = %+v, %v with error %v", in, u, ok, err)
			}
			if utf8.Valid(in) && !utf8.ValidString(err.Error()) {
				t.Fatalf("ParseUnique(%q): error is not valid UTF-8: %q", in, err)
			}
			if !bytes.Contains(in, []byte(`"unique"`)) {
				t.Fatalf("ParseUnique(%q): error %v without a unique field", in, err)
			}
			return
		}
		if !ok {
			if u != (protocol.Unique{}) {
				t.Fatalf("ParseUnique(%q) = %+v, not ok", in, u)
			}
			return
		}
		if u.UID == "" || u.DeferrableBy < 0 || !u.Deferrable && u.DeferrableBy != 0 {
			t.Fatalf("ParseUnique(%q) = %+v", in, u)
		}
		// What was read, written again, reads the same.
		raw, err := protocol.NewPayload("C", nil, protocol.EnqueueOptions{Plain: true, Unique: u})
		if err != nil {
			t.Fatal(err)
		}
		if again, ok, err := protocol.ParseUnique(raw); err != nil || !ok || utf8.ValidString(u.UID) && again != u {
			t.Fatalf("ParseUnique(%q) = %+v, %v, %v; want %+v (read from %q)", raw, again, ok, err, u, in)
		}
	})
}

// FuzzParsePeriod checks the ISO 8601 period parser plans use: no panic, a
// non-zero period within bounds, and the form resque-go stores
// (Period.String) reads back as the same period.
func FuzzParsePeriod(f *testing.F) {
	for _, s := range []string{
		"P0Y0M0DT0H5M0S", "PT5M", "P1M", "P1D", "P2W", "P1Y2M3DT4H5M6S", "PT90M", "P1DT12H",
		"", "P", "PT", "P0D", "PT0S", "1M", "P1.5M", "P-1D", "P1H", "PT1D", "p1d", "P1M1Y", "P9999999Y",
		"P1000000W", "P1000000Y1000000M1000000DT1000000H1000000M1000000S", "P142857W2D", "PT0001S",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := protocol.ParsePeriod(s)
		if err != nil {
			if p != (protocol.Period{}) {
				t.Fatalf("ParsePeriod(%q) = %+v with error %v", s, p, err)
			}
			return
		}
		if p == (protocol.Period{}) || p.Years < 0 || p.Months < 0 || p.Days < 0 || p.Hours < 0 || p.Minutes < 0 || p.Seconds < 0 {
			t.Fatalf("ParsePeriod(%q) = %+v", s, p)
		}
		if p.Clock() < 0 {
			t.Fatalf("ParsePeriod(%q) = %+v: Clock() = %s overflows", s, p, p.Clock())
		}
		again, err := protocol.ParsePeriod(p.String())
		if err != nil || again != p {
			t.Fatalf("ParsePeriod(%q) = %+v, stored as %q, reads back as %+v, %v", s, p, p.String(), again, err)
		}
	})
}
