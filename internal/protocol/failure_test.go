package protocol_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/protocol"
)

// rubyFailed is a decoded Ruby failed entry with the payload kept raw.
type rubyFailed struct {
	FailedAt  string          `json:"failed_at"`
	Payload   json.RawMessage `json:"payload"`
	Exception string          `json:"exception"`
	Error     string          `json:"error"`
	Backtrace []string        `json:"backtrace"`
	Worker    string          `json:"worker"`
	Queue     string          `json:"queue"`
}

func loadRubyFailed(t *testing.T, dir, scenario string) (string, rubyFailed) {
	t.Helper()
	entries := fixtures.MustLoad(dir, scenario).List("resque:failed")
	if len(entries) != 1 {
		t.Fatalf("%s/%s: %d failed entries", dir, scenario, len(entries))
	}
	var f rubyFailed
	if err := json.Unmarshal([]byte(entries[0]), &f); err != nil {
		t.Fatal(err)
	}
	return entries[0], f
}

// TestFailureEncodeMatchesRuby builds the entry from what Ruby 3.0.0 recorded
// and compares it with Ruby's bytes up to "queue":"<q>"; resque-go adds
// processed_by and retried_by after that.
func TestFailureEncodeMatchesRuby(t *testing.T) {
	t.Parallel()
	for _, scenario := range []string{"failure", "dirty-exit-pruned", "dirty-exit-child", "dirty-exit-pruned-same-host"} {
		t.Run(scenario, func(t *testing.T) {
			t.Parallel()
			ruby, rf := loadRubyFailed(t, "ruby-resque-3.0.0", scenario)
			at, err := time.Parse(protocol.FailedAtLayout, rf.FailedAt)
			if err != nil {
				t.Fatal(err)
			}
			var bt []string
			if len(rf.Backtrace) > 0 { // Ruby's [] is built from a nil backtrace
				bt = rf.Backtrace
			}
			f := protocol.Failure{
				FailedAt:    at,
				Payload:     []byte(rf.Payload),
				Exception:   rf.Exception,
				Error:       rf.Error,
				Backtrace:   bt,
				Worker:      rf.Worker,
				Queue:       rf.Queue,
				ProcessedBy: "vm",
			}
			got := f.Encode()
			prefix := strings.TrimSuffix(ruby, "}")
			if !bytes.HasPrefix(got, []byte(prefix)) {
				t.Errorf("entry\n  %s\ndoes not start with Ruby's\n  %s", got, prefix)
			}
			if rest := string(got[min(len(prefix), len(got)):]); rest != `,"processed_by":"vm","retried_by":"no retry"}` {
				t.Errorf("entry ends with %s", rest)
			}
			if rf.Queue != "mail" || !strings.HasSuffix(prefix, `"queue":"mail"`) {
				t.Errorf("fixture %s is not the expected shape", ruby)
			}
		})
	}
}

func TestFailureEncodeFields(t *testing.T) {
	t.Parallel()
	payload := fixtures.MustLoad("php-resque-chrisboulton", "enqueue").List("resque:queue:mail")[1]
	f := protocol.Failure{
		FailedAt:    time.Date(2026, 11, 21, 16, 23, 48, 500, time.FixedZone("EST", -5*3600)),
		Payload:     []byte(payload),
		Exception:   "Exception",
		Error:       "boom <1> & \"quoted\"\nline2 é",
		Backtrace:   []string{"#0 /app/php/jobs.php(22): Fail_Job->perform()", "#1 {main}"},
		Worker:      "web1:42-3:high,mail",
		Queue:       "a:b",
		ProcessedBy: "web1",
		RetriedBy:   "0123456789abcdef0123456789abcdef",
	}
	got := f.Encode()
	if !json.Valid(got) {
		t.Fatalf("not valid JSON: %s", got)
	}
	wantKeys := "failed_at,payload,exception,error,backtrace,worker,queue,processed_by,retried_by"
	if keys := strings.Join(topLevelKeys(t, got), ","); keys != wantKeys {
		t.Errorf("keys = %s, want %s", keys, wantKeys)
	}
	fields := rawFields(t, got)
	wantRaw := map[string]string{
		"failed_at":    `"2026/11/21 21:23:48 UTC"`,
		"payload":      payload,
		"exception":    `"Exception"`,
		"error":        `"boom <1> & \"quoted\"\nline2 é"`,
		"backtrace":    `["#0 /app/php/jobs.php(22): Fail_Job->perform()","#1 {main}"]`,
		"worker":       `"web1:42-3:high,mail"`,
		"queue":        `"a:b"`,
		"processed_by": `"web1"`,
		"retried_by":   `"0123456789abcdef0123456789abcdef"`,
	}
	for k, want := range wantRaw {
		if string(fields[k]) != want {
			t.Errorf("%s = %s, want %s", k, fields[k], want)
		}
	}
	if len(fields) != len(wantRaw) {
		t.Errorf("fields = %v", fields)
	}
}

func TestFailureEncodeBacktrace(t *testing.T) {
	t.Parallel()
	for _, bt := range [][]string{nil, {}} {
		got := protocol.Failure{Payload: []byte(`{"class":"A"}`), Backtrace: bt}.Encode()
		if v := string(rawFields(t, got)["backtrace"]); v != `[]` {
			t.Errorf("backtrace %#v encodes as %s, want []", bt, v)
		}
		if v := string(rawFields(t, got)["retried_by"]); v != `"no retry"` {
			t.Errorf("empty RetriedBy encodes as %s", v)
		}
	}
	got := protocol.Failure{Backtrace: []string{"", "x\xffy"}}.Encode()
	if v := string(rawFields(t, got)["backtrace"]); v != `["","x\ufffdy"]` {
		t.Errorf("backtrace = %s", v)
	}
}

// TestFailureEncodeGarbagePayload: a payload that is not a JSON object is
// carried as a JSON string holding the original text, and the entry stays
// valid JSON whatever the bytes are.
func TestFailureEncodeGarbagePayload(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		``,
		`not json`,
		`[1,2]`,
		`"MailJob"`,
		`{"class":"A"`,
		`{"class":"A"}}`,
		`null`,
		"bin\x00ary\x01 <&>",
		`{"class":"A","args":"\"}` + "\n",
	} {
		f := protocol.Failure{
			FailedAt:  time.Unix(1795296228, 0),
			Payload:   []byte(raw),
			Exception: protocol.ExcBadPayload,
			Error:     "bad payload",
			Worker:    "vm:1:mail",
			Queue:     "mail",
		}
		got := f.Encode()
		if !json.Valid(got) {
			t.Errorf("entry for payload %q is not valid JSON: %s", raw, got)
			continue
		}
		var e struct {
			Payload   any    `json:"payload"`
			Exception string `json:"exception"`
		}
		if err := json.Unmarshal(got, &e); err != nil {
			t.Fatal(err)
		}
		if s, ok := e.Payload.(string); !ok || s != raw {
			t.Errorf("payload %q embedded as %#v, want the same text as a JSON string", raw, e.Payload)
		}
		if e.Exception != "ResqueGo::BadPayload" {
			t.Errorf("exception = %q", e.Exception)
		}
	}
	// Invalid UTF-8, inside a JSON object or not, gives an entry that strict
	// readers parse (valid UTF-8 JSON) with the original bytes recoverable.
	for _, raw := range []string{"a\xff\xfeb", "{\"class\":\"A\",\"args\":[\"caf\xe9\"]}"} {
		got := protocol.Failure{Payload: []byte(raw), Error: "bad \xff byte"}.Encode()
		if !json.Valid(got) || !utf8.Valid(got) {
			t.Fatalf("entry = %q is not valid UTF-8 JSON", got)
		}
		var e struct{ Payload, Error string }
		if err := json.Unmarshal(got, &e); err != nil {
			t.Fatal(err)
		}
		if back := protocol.UnembedPayload(e.Payload); string(back) != raw {
			t.Errorf("payload %q came back as %q", raw, back)
		}
	}
}

// TestEncodeWorkerRecordMatchesRuby rebuilds Ruby 3.0.0's worker:<id> value.
func TestEncodeWorkerRecordMatchesRuby(t *testing.T) {
	t.Parallel()
	d := fixtures.MustLoad("ruby-resque-3.0.0", "worker-running")
	ruby := d.String("resque:worker:vm:25407:high,mail")
	if ruby == "" {
		t.Fatal("fixture has no worker record")
	}
	rec, err := protocol.ParseWorkerRecord([]byte(ruby))
	if err != nil {
		t.Fatal(err)
	}
	runAt, err := time.Parse(protocol.RunAtLayout, rec.RunAt)
	if err != nil {
		t.Fatal(err)
	}
	wantPayload := `{"class":"SleepJob","args":[1,"two",3.5,{"k":"v"},null,true,12345678901234567890,"unicode é ✓ <tag>&"]}`
	if rec.Queue != "mail" || rec.RunAt != "2026-11-21T21:23:41Z" || string(rec.Payload) != wantPayload {
		t.Errorf("ParseWorkerRecord(Ruby) = %+v", rec)
	}
	got := protocol.EncodeWorkerRecord(rec.Queue, runAt, rec.Payload)
	if string(got) != ruby {
		t.Errorf("EncodeWorkerRecord =\n  %s\nRuby wrote\n  %s", got, ruby)
	}
	if keys := strings.Join(topLevelKeys(t, got), ","); keys != "queue,run_at,payload" {
		t.Errorf("keys = %s", keys)
	}
}

func TestParseWorkerRecord(t *testing.T) {
	t.Parallel()
	node := fixtures.MustLoad("node-resque-9.7.1", "worker-running").String("resque:worker:vm:2351:high,mail")
	chris := fixtures.MustLoad("php-resque-chrisboulton", "worker-running").String("resque:worker:vm:30031:high,mail")
	master := fixtures.MustLoad("php-resque-resque-master", "worker-running").String("resque:worker:vm:31477:high,mail")
	tests := []struct {
		name    string
		value   string
		queue   string
		runAt   string
		payload string
	}{
		{
			name:    "node-resque cjson record",
			value:   node,
			queue:   "mail",
			runAt:   "Sat Nov 21 2026 21:29:30 GMT+0000 (Coordinated Universal Time)",
			payload: `{"class":"SleepJob","args":[1,"two",3.5,{"k":"v"},null,true,1.2345678901235e+19,"unicode é ✓ <tag>&"],"queue":"mail"}`,
		},
		{
			name:    "chrisboulton record",
			value:   chris,
			queue:   "mail",
			runAt:   "Sat Nov 21 21:26:50 UTC 2026",
			payload: `{"class":"Sleep_Job","args":[[1,"two",3.5,{"k":"v"},null,true,1.2345678901234567e+19,"unicode \u00e9 \u2713 <tag>&"]],"id":"6cc8b96547ea0f33e11d7952974a55d2","queue_time":1795296409.992722}`,
		},
		{
			name:    "php-resque master record",
			value:   master,
			queue:   "mail",
			runAt:   "2026-11-21T21:27:27+00:00",
			payload: `{"class":"Sleep_Job","args":[[1,"two",3.5,{"k":"v"},null,true,1.2345678901234567e+19,"unicode \u00e9 \u2713 <tag>&"]],"id":"ce69ddfc44acf2a2eb5e231667269549","prefix":"","queue_time":1795296447.41534}`,
		},
		{
			name:    "payload as JSON string",
			value:   `{"queue":"mail","run_at":"2026-11-21T21:23:41Z","payload":"not json \"<&>\" \u00e9"}`,
			queue:   "mail",
			runAt:   "2026-11-21T21:23:41Z",
			payload: `not json "<&>" é`,
		},
		{
			name:    "numeric run_at ignored",
			value:   `{"queue":"q:1","run_at":1795296571,"payload":{"class":"A"}}`,
			queue:   "q:1",
			payload: `{"class":"A"}`,
		},
		{
			name:  "no payload",
			value: `{"queue":"mail","run_at":"x"}`,
			queue: "mail",
			runAt: "x",
		},
	}
	for _, tt := range tests {
		if tt.value == "" {
			t.Fatalf("%s: fixture value missing", tt.name)
		}
		rec, err := protocol.ParseWorkerRecord([]byte(tt.value))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if rec.Queue != tt.queue || rec.RunAt != tt.runAt || string(rec.Payload) != tt.payload {
			t.Errorf("%s: got {%q %q %s}, want {%q %q %s}", tt.name, rec.Queue, rec.RunAt, rec.Payload, tt.queue, tt.runAt, tt.payload)
		}
	}

	for _, v := range []string{``, `not json`, `null`, `[]`, `{}`, `{"queue":""}`, `{"queue":5}`, `{"run_at":"x","payload":{}}`} {
		if rec, err := protocol.ParseWorkerRecord([]byte(v)); err == nil {
			t.Errorf("ParseWorkerRecord(%q) = %+v, want an error", v, rec)
		}
	}
}

// TestWorkerRecordRoundTrip: whatever payload a worker held, the record
// decodes back to it (garbage as the original text).
func TestWorkerRecordRoundTrip(t *testing.T) {
	t.Parallel()
	runAt := time.Date(2026, 11, 21, 21, 23, 41, 999, time.FixedZone("EST", -5*3600))
	payloads := []string{`not json`, ``, `[1]`, `"s"`, `{"class":"A","args":["<&>","é"]}`}
	for _, fp := range fixtureQueuePayloads(t) {
		payloads = append(payloads, fp.raw)
	}
	for _, p := range payloads {
		v := protocol.EncodeWorkerRecord("a:b", runAt, []byte(p))
		if !json.Valid(v) {
			t.Errorf("record for %q is not valid JSON: %s", p, v)
			continue
		}
		rec, err := protocol.ParseWorkerRecord(v)
		if err != nil {
			t.Errorf("ParseWorkerRecord(%s): %v", v, err)
			continue
		}
		if rec.Queue != "a:b" || rec.RunAt != "2026-11-22T02:23:41Z" || string(rec.Payload) != p {
			t.Errorf("round trip of %q = {%q %q %q}", p, rec.Queue, rec.RunAt, rec.Payload)
		}
	}
}

// TestWorkerRecordsInFixtures parses every worker:<id> value of every origin.
func TestWorkerRecordsInFixtures(t *testing.T) {
	t.Parallel()
	n := 0
	for _, dir := range fixtures.Dirs() {
		for _, sc := range fixtures.Scenarios(dir) {
			d := fixtures.MustLoad(dir, sc)
			for _, name := range d.Names() {
				if !strings.HasPrefix(name, "resque:worker:") || strings.HasSuffix(name, ":started") ||
					strings.HasPrefix(name, "resque:worker:ping:") {
					continue
				}
				n++
				rec, err := protocol.ParseWorkerRecord([]byte(d.String(name)))
				if err != nil {
					t.Errorf("%s/%s %s: %v", dir, sc, name, err)
					continue
				}
				if _, err := protocol.DecodePayload(rec.Payload); err != nil || rec.Queue != "mail" || rec.RunAt == "" {
					t.Errorf("%s/%s %s: %+v (%v)", dir, sc, name, rec, err)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no worker records in the fixtures")
	}
}
