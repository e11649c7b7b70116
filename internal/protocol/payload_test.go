package protocol_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/protocol"
)

// fixtureItem returns item i of resque:queue:mail in <dir>/enqueue.
func fixtureItem(t *testing.T, dir string, i int) string {
	t.Helper()
	items := fixtures.MustLoad(dir, "enqueue").List("resque:queue:mail")
	if i >= len(items) {
		t.Fatalf("%s/enqueue has %d items in resque:queue:mail, want index %d", dir, len(items), i)
	}
	return items[i]
}

// resqueV3Payload is the resque-v3 (PHP fork) shape of docs/protocol.md#payloads-resque-go-runs.
const resqueV3Payload = `{"class":"Task","args":{"k":"v","big":12345678901234567890},"queue":"q","sourceId":"s1",` +
	`"unique":{"uid":"u1","deferrableBy":30},"isMonitored":true,"includePath":"x/","environment":{"K":"V"},` +
	`"failCount":1,"id":"0123456789abcdef0123456789abcdef","queue_time":1700000000.1234}`

// activeJobPayload is what Rails' Resque adapter enqueues (ActiveJob 7).
const activeJobPayload = `{"class":"ActiveJob::QueueAdapters::ResqueAdapter::JobWrapper","args":[{"job_class":"WelcomeMailJob",` +
	`"job_id":"b4c2a1e0-2d63-4d0e-9c41-6a1f8a7e2f11","provider_job_id":null,"queue_name":"mail","priority":null,` +
	`"arguments":[{"_aj_globalid":"gid://app/User/42"},"hi <b>&amp;</b> \u00e9 \/"],"executions":0,"exception_executions":{},` +
	`"locale":"en","timezone":"UTC","enqueued_at":"2026-11-21T21:23:41.123456789Z","scheduled_at":null}]}`

func TestDecodePayloadShapes(t *testing.T) {
	t.Parallel()
	const (
		rubyArgs = `[1,"two",3.5,{"k":"v"},null,true,12345678901234567890,"unicode é ✓ <tag>&"]`
		phpArgs  = `[[1,"two",3.5,{"k":"v"},null,true,1.2345678901234567e+19,"unicode \u00e9 \u2713 <tag>&"]]`
		phpAssoc = `[{"k":"v","n":3.5,"big":1.2345678901234567e+19,"u":"unicode \u00e9 \u2713 <tag>&","path":"a\/b"}]`
		nodeArgs = `[1,"two",3.5,{"k":"v"},null,true,12345678901234567000,"unicode é ✓ <tag>&"]`
	)
	type want struct {
		class        string
		handlerClass string
		args         string // "" means nil
		id           string
		queue        string
		queueTime    float64
		hasQueueTime bool
		failCount    int
		isMonitored  bool
		sourceID     string
		fields       map[string]string // raw JSON of selected fields
	}
	tests := []struct {
		name string
		dir  string // fixture origin: item of resque:queue:mail in <dir>/enqueue
		item int
		raw  string // used when dir is empty
		want want
	}{
		{
			name: "ruby 3.0.0 eight args",
			dir:  "ruby-resque-3.0.0", item: 0,
			want: want{class: "MailJob", args: rubyArgs},
		},
		{
			name: "ruby 3.0.0 no args",
			dir:  "ruby-resque-3.0.0", item: 1,
			want: want{class: "NoArgsJob", args: `[]`},
		},
		{
			name: "ruby 2.7.0 eight args",
			dir:  "ruby-resque-2.7.0", item: 0,
			want: want{class: "MailJob", args: rubyArgs},
		},
		{
			name: "chrisboulton eight args",
			dir:  "php-resque-chrisboulton", item: 0,
			want: want{class: "Mail_Job", args: phpArgs, id: "b43b12917df99a3fc079a8852f9f4f32",
				queueTime: 1795296409.837122, hasQueueTime: true},
		},
		{
			name: "chrisboulton assoc args",
			dir:  "php-resque-chrisboulton", item: 1,
			want: want{class: "Mail_Job", args: phpAssoc, id: "90b5db48728ff56f4f2c8129eb47d1df",
				queueTime: 1795296409.838974, hasQueueTime: true},
		},
		{
			name: "chrisboulton no args",
			dir:  "php-resque-chrisboulton", item: 2,
			want: want{class: "NoArgs_Job", args: `[null]`, id: "0685ce64c5fbfc444c8424109396a281",
				queueTime: 1795296409.839041, hasQueueTime: true},
		},
		{
			name: "php-resque 1.3.6 eight args with prefix",
			dir:  "php-resque-resque-1.3.6", item: 0,
			want: want{class: "Mail_Job", args: phpArgs, id: "e8deb8dcb07a1b16d23c6d481bf25f8d",
				queueTime: 1795296426.884147, hasQueueTime: true, fields: map[string]string{"prefix": `""`}},
		},
		{
			name: "php-resque 1.3.6 assoc args",
			dir:  "php-resque-resque-1.3.6", item: 1,
			want: want{class: "Mail_Job", args: phpAssoc, id: "fd67a24ca97ee7f7ecbecc5259be4082",
				queueTime: 1795296426.88607, hasQueueTime: true},
		},
		{
			name: "php-resque master eight args",
			dir:  "php-resque-resque-master", item: 0,
			want: want{class: "Mail_Job", args: phpArgs, id: "621d9f6e8550364dbd85fcf85d7ca215",
				queueTime: 1795296447.247114, hasQueueTime: true, fields: map[string]string{"prefix": `""`}},
		},
		{
			name: "php-resque master no args",
			dir:  "php-resque-resque-master", item: 2,
			want: want{class: "NoArgs_Job", args: `[null]`, id: "b1a0cb513e21823f6f837952ea2cbc96",
				queueTime: 1795296447.248746, hasQueueTime: true},
		},
		{
			name: "node-resque eight args",
			dir:  "node-resque-9.7.1", item: 0,
			want: want{class: "MailJob", args: nodeArgs, queue: "mail"},
		},
		{
			name: "node-resque no args",
			dir:  "node-resque-9.7.1", item: 1,
			want: want{class: "NoArgsJob", args: `[]`, queue: "mail"},
		},
		{
			name: "resque-v3",
			raw:  resqueV3Payload,
			want: want{class: "Task", args: `{"k":"v","big":12345678901234567890}`, id: "0123456789abcdef0123456789abcdef",
				queue: "q", queueTime: 1700000000.1234, hasQueueTime: true, failCount: 1, isMonitored: true,
				sourceID: "s1", fields: map[string]string{
					"unique":      `{"uid":"u1","deferrableBy":30}`,
					"includePath": `"x/"`,
					"environment": `{"K":"V"}`,
				}},
		},
		{
			name: "resque-v3 falsy fields absent",
			raw:  `{"class":"Task","args":{"k":"v"},"id":"ffffffffffffffffffffffffffffffff"}`,
			want: want{class: "Task", args: `{"k":"v"}`, id: "ffffffffffffffffffffffffffffffff"},
		},
		{
			name: "rails activejob",
			raw:  activeJobPayload,
			want: want{class: protocol.ActiveJobWrapper, handlerClass: "WelcomeMailJob",
				args: activeJobPayload[strings.Index(activeJobPayload, `[{"job_class"`) : len(activeJobPayload)-1]},
		},
		{
			name: "args absent",
			raw:  `{"class":"A"}`,
			want: want{class: "A"},
		},
		{
			name: "args null",
			raw:  `{"class":"A","args":null}`,
			want: want{class: "A"},
		},
		{
			name: "whitespace kept in Raw and args",
			raw:  " {\n \"class\" : \"A\" , \"args\" : [ 1 , \"\\/\" ] }\n",
			want: want{class: "A", args: `[ 1 , "\/" ]`},
		},
		{
			name: "numeric id kept as its text",
			raw:  `{"class":"A","args":[],"id":12345678901234567890}`,
			want: want{class: "A", args: `[]`, id: "12345678901234567890"},
		},
		{
			name: "queue_time and failCount as strings",
			raw:  `{"class":"A","queue_time":"1700000000.5","failCount":"2"}`,
			want: want{class: "A", queueTime: 1700000000.5, hasQueueTime: true, failCount: 2},
		},
		{
			name: "queue_time integer",
			raw:  `{"class":"A","queue_time":1700000000}`,
			want: want{class: "A", queueTime: 1700000000, hasQueueTime: true},
		},
		{
			name: "queue_time not a number is ignored",
			raw:  `{"class":"A","queue_time":"soon","failCount":"x","isMonitored":1}`,
			want: want{class: "A"},
		},
		{
			name: "escaped class name",
			raw:  `{"class":"Jobs::Caf\u00e9\/X","args":[]}`,
			want: want{class: "Jobs::Café/X", args: `[]`},
		},
		{
			name: "activejob wrapper without job_class",
			raw:  `{"class":"` + protocol.ActiveJobWrapper + `","args":[{"x":1}]}`,
			want: want{class: protocol.ActiveJobWrapper, args: `[{"x":1}]`},
		},
		{
			name: "activejob wrapper with object args",
			raw:  `{"class":"` + protocol.ActiveJobWrapper + `","args":{"job_class":"X"}}`,
			want: want{class: protocol.ActiveJobWrapper, args: `{"job_class":"X"}`},
		},
		{
			name: "activejob wrapper with empty args",
			raw:  `{"class":"` + protocol.ActiveJobWrapper + `","args":[]}`,
			want: want{class: protocol.ActiveJobWrapper, args: `[]`},
		},
		{
			name: "job_class ignored for other classes",
			raw:  `{"class":"MailJob","args":[{"job_class":"X"}]}`,
			want: want{class: "MailJob", args: `[{"job_class":"X"}]`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw := []byte(tt.raw)
			if tt.dir != "" {
				raw = []byte(fixtureItem(t, tt.dir, tt.item))
			}
			orig := bytes.Clone(raw)
			p, err := protocol.DecodePayload(raw)
			if err != nil {
				t.Fatalf("DecodePayload(%s): %v", raw, err)
			}
			if !bytes.Equal(raw, orig) {
				t.Errorf("input modified: %s", raw)
			}
			if !bytes.Equal(p.Raw, orig) {
				t.Errorf("Raw = %q, want the input %q", p.Raw, orig)
			}
			w := tt.want
			if p.Class != w.class {
				t.Errorf("Class = %q, want %q", p.Class, w.class)
			}
			if got := p.HandlerClass(); got != w.handlerClass {
				t.Errorf("HandlerClass() = %q, want %q", got, w.handlerClass)
			}
			if w.args == "" {
				if p.Args != nil {
					t.Errorf("Args = %s, want nil", p.Args)
				}
			} else if string(p.Args) != w.args {
				t.Errorf("Args =\n  %s\nwant\n  %s", p.Args, w.args)
			}
			if p.ID != w.id {
				t.Errorf("ID = %q, want %q", p.ID, w.id)
			}
			if p.Queue != w.queue {
				t.Errorf("Queue = %q, want %q", p.Queue, w.queue)
			}
			if p.HasQueueTime != w.hasQueueTime || p.QueueTime != w.queueTime {
				t.Errorf("QueueTime = %v (has %v), want %v (has %v)", p.QueueTime, p.HasQueueTime, w.queueTime, w.hasQueueTime)
			}
			if p.FailCount != w.failCount {
				t.Errorf("FailCount = %d, want %d", p.FailCount, w.failCount)
			}
			if p.IsMonitored != w.isMonitored {
				t.Errorf("IsMonitored = %v, want %v", p.IsMonitored, w.isMonitored)
			}
			if p.SourceID != w.sourceID {
				t.Errorf("SourceID = %q, want %q", p.SourceID, w.sourceID)
			}
			for k, v := range w.fields {
				if got := string(p.Fields[k]); got != v {
					t.Errorf("Fields[%q] = %s, want %s", k, got, v)
				}
			}
			if got := string(p.Fields["class"]); !strings.HasPrefix(got, `"`) {
				t.Errorf("Fields[class] = %s, want the raw JSON string", got)
			}
		})
	}
}

// TestDecodePayloadBigIntegerExact checks that the handler can decode args
// numbers exactly: the view must not have gone through float64.
func TestDecodePayloadBigIntegerExact(t *testing.T) {
	t.Parallel()
	p, err := protocol.DecodePayload([]byte(fixtureItem(t, "ruby-resque-3.0.0", 0)))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(p.Args))
	dec.UseNumber()
	var args []any
	if err := dec.Decode(&args); err != nil {
		t.Fatal(err)
	}
	if got := args[6]; got != json.Number("12345678901234567890") {
		t.Errorf("args[6] = %v, want 12345678901234567890", got)
	}
	if got := args[7]; got != "unicode é ✓ <tag>&" {
		t.Errorf("args[7] = %q", got)
	}
}

func TestDecodePayloadEveryFixture(t *testing.T) {
	t.Parallel()
	for _, fp := range fixtureQueuePayloads(t) {
		p, err := protocol.DecodePayload([]byte(fp.raw))
		if err != nil {
			t.Errorf("%s: %v", fp.where, err)
			continue
		}
		if p.Class == "" || string(p.Raw) != fp.raw || !json.Valid(p.Args) {
			t.Errorf("%s: Class %q, Raw %q, Args %s", fp.where, p.Class, p.Raw, p.Args)
		}
	}
}

func TestDecodePayloadBad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		raw     string
		wantMsg string
	}{
		{"empty", ``, "empty payload"},
		{"whitespace", " \n\t", "empty payload"},
		{"not json", `not json`, "not a JSON object"},
		{"json array", `[{"class":"MailJob","args":[]}]`, "not a JSON object"},
		{"json string", `"MailJob"`, "not a JSON object"},
		{"json number", `42`, "not a JSON object"},
		{"json null", `null`, "not a JSON object"},
		{"truncated object", `{"class":"MailJob","args":[1,`, "not valid JSON"},
		{"trailing garbage", `{"class":"MailJob"} x`, "not valid JSON"},
		{"two objects", `{"class":"A"}{"class":"B"}`, "not valid JSON"},
		{"missing class", `{"args":[1]}`, `no "class" field`},
		{"class in other case", `{"Class":"A"}`, `no "class" field`},
		{"numeric class", `{"class":42,"args":[]}`, `"class" is not a non-empty string`},
		{"empty class", `{"class":"","args":[]}`, `"class" is not a non-empty string`},
		{"null class", `{"class":null}`, `"class" is not a non-empty string`},
		{"array class", `{"class":["A"]}`, `"class" is not a non-empty string`},
		{"object class", `{"class":{"name":"A"}}`, `"class" is not a non-empty string`},
		{"bool class", `{"class":true}`, `"class" is not a non-empty string`},
		// Ruby's Job#args would wrap a scalar and run the job with other
		// arguments than the producer wrote: refuse instead.
		{"string args", `{"class":"A","args":"notarray"}`, `"args" is not an array or object`},
		{"number args", `{"class":"A","args":5}`, `"args" is not an array or object`},
		{"bool args", `{"class":"A","args":true}`, `"args" is not an array or object`},
		{"invalid utf8 in a string", "{\"class\":\"A\",\"args\":[\"caf\xe9\"]}", "not valid UTF-8 (bad byte 0xe9 at offset 25)"},
		{"invalid utf8 in class", "{\"class\":\"\xff\"}", "not valid UTF-8 (bad byte 0xff at offset 10)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := protocol.DecodePayload([]byte(tt.raw))
			if err == nil {
				t.Fatalf("DecodePayload(%q) = %+v, want an error", tt.raw, p)
			}
			if !errors.Is(err, protocol.ErrBadPayload) {
				t.Errorf("error %v does not wrap ErrBadPayload", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not say %q", err, tt.wantMsg)
			}
			if strings.TrimSpace(tt.raw) != "" && !strings.Contains(err.Error(), strconv.Quote(tt.raw)) {
				t.Errorf("error %q does not quote the payload", err)
			}
			// The worker still holds the original bytes to move to failed.
			if p == nil || string(p.Raw) != tt.raw {
				t.Errorf("payload view on error = %+v, want Raw = input", p)
			}
		})
	}
}

func TestDecodePayloadErrorExcerpt(t *testing.T) {
	t.Parallel()
	// 1 + 2*200 bytes: the excerpt must cut at 120 bytes on a rune boundary.
	raw := "[" + strings.Repeat("é", 200)
	_, err := protocol.DecodePayload([]byte(raw))
	if err == nil {
		t.Fatal("want an error")
	}
	msg := err.Error()
	if !utf8.ValidString(msg) {
		t.Errorf("message is not valid UTF-8: %q", msg)
	}
	if !strings.Contains(msg, `..."`) {
		t.Errorf("long payload not truncated: %q", msg)
	}
	if len(msg) > 300 {
		t.Errorf("message is %d bytes long: %q", len(msg), msg)
	}
	want := strconv.Quote("[" + strings.Repeat("é", 59) + "...")
	if !strings.HasSuffix(msg, want) {
		t.Errorf("message %q does not end with %s", msg, want)
	}

	// Invalid UTF-8 in the payload must not leak into the message.
	_, err = protocol.DecodePayload([]byte("\xff\xfe garbage"))
	if err == nil || !utf8.ValidString(err.Error()) {
		t.Errorf("error for invalid UTF-8 = %q, want valid UTF-8 text", err)
	}
}

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestNewPayloadKeyOrderAndFields(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 21, 23, 41, 123456789, time.UTC)
	got, err := protocol.NewPayload("MailJob", []byte(`[1,"two"]`), protocol.EnqueueOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if keys := topLevelKeys(t, got); strings.Join(keys, ",") != "class,args,id,queue_time" {
		t.Errorf("keys = %v, want class,args,id,queue_time", keys)
	}
	f := rawFields(t, got)
	var id string
	if err := json.Unmarshal(f["id"], &id); err != nil || !hex32.MatchString(id) {
		t.Errorf("id = %s, want 32 lowercase hex", f["id"])
	}
	if qt := string(f["queue_time"]); qt != "1795296221.1235" {
		t.Errorf("queue_time = %s, want 1795296221.1235", qt)
	}
	want := `{"class":"MailJob","args":[1,"two"],"id":"` + id + `","queue_time":1795296221.1235}`
	if string(got) != want {
		t.Errorf("payload =\n  %s\nwant\n  %s", got, want)
	}
	p, err := protocol.DecodePayload(got)
	if err != nil {
		t.Fatal(err)
	}
	if p.Class != "MailJob" || string(p.Args) != `[1,"two"]` || p.ID != id || !p.HasQueueTime || p.QueueTime != 1795296221.1235 {
		t.Errorf("decoded back: %+v", p)
	}
}

func TestNewPayloadIDs(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		b, err := protocol.NewPayload("A", nil, protocol.EnqueueOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var p struct{ ID string }
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		if !hex32.MatchString(p.ID) {
			t.Fatalf("id %q is not 32 lowercase hex", p.ID)
		}
		if seen[p.ID] {
			t.Fatalf("id %q repeated", p.ID)
		}
		seen[p.ID] = true
	}
	for range 100 {
		if id := protocol.NewJobID(); !hex32.MatchString(id) {
			t.Fatalf("NewJobID() = %q", id)
		}
	}

	b, err := protocol.NewPayload("A", nil, protocol.EnqueueOptions{ID: "given-id"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(rawFields(t, b)["id"]); got != `"given-id"` {
		t.Errorf("id = %s, want the given one", got)
	}
}

func TestNewPayloadQueueTime(t *testing.T) {
	t.Parallel()
	fourDecimals := regexp.MustCompile(`^[0-9]+\.[0-9]{4}$`)
	tests := []struct {
		now  time.Time
		want string
	}{
		{time.Unix(1700000000, 0), "1700000000.0000"},
		{time.Unix(1700000000, 123400000), "1700000000.1234"},
		{time.Unix(1700000000, 999900000), "1700000000.9999"},
		{time.Unix(1795296409, 837122000), "1795296409.8371"},
		{time.Unix(1700000000, 120000000).In(time.FixedZone("X", -5*3600)), "1700000000.1200"},
	}
	for _, tt := range tests {
		if got := protocol.FormatQueueTime(tt.now); got != tt.want {
			t.Errorf("FormatQueueTime(%v) = %s, want %s", tt.now, got, tt.want)
		}
		b, err := protocol.NewPayload("A", nil, protocol.EnqueueOptions{Now: tt.now, ID: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(rawFields(t, b)["queue_time"]); got != tt.want || !fourDecimals.MatchString(got) {
			t.Errorf("queue_time for %v = %s, want %s", tt.now, got, tt.want)
		}
	}

	// Zero Now means the current time.
	before := float64(time.Now().Unix())
	b, err := protocol.NewPayload("A", nil, protocol.EnqueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after := float64(time.Now().Unix() + 1)
	qt := string(rawFields(t, b)["queue_time"])
	f, err := strconv.ParseFloat(qt, 64)
	if err != nil || !fourDecimals.MatchString(qt) || f < before || f > after {
		t.Errorf("queue_time with zero Now = %s, want 4 decimals between %v and %v", qt, before, after)
	}
}

func TestNewPayloadArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, args, want string
	}{
		{"nil", "", `[]`},
		{"blank", " \n ", `[]`},
		{"array", `[1,2]`, `[1,2]`},
		{"empty array", `[]`, `[]`},
		{"array compacted", " [ 1 ,\n\t\"two\" ] ", `[1,"two"]`},
		{"object kept", `{"b":1,"a":{"c":[true]}}`, `{"b":1,"a":{"c":[true]}}`},
		{"object compacted", `{ "k" : "v" }`, `{"k":"v"}`},
		{"number wrapped", `5`, `[5]`},
		{"string wrapped", `"x"`, `["x"]`},
		{"bool wrapped", `true`, `[true]`},
		{"null wrapped", `null`, `[null]`},
		{"big integer exact", `[12345678901234567890,1e400,0.1000000000000000055511151231257827]`, `[12345678901234567890,1e400,0.1000000000000000055511151231257827]`},
		{"escapes untouched", `["a\/b","\u00e9","\"q\""]`, `["a\/b","\u00e9","\"q\""]`},
		{"html literal", `["<tag>&"]`, `["<tag>&"]`},
		{"utf8 as is", `["unicode é ✓"]`, `["unicode é ✓"]`},
		{"scalar string with spaces", ` "a b" `, `["a b"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var args []byte
			if tt.args != "" {
				args = []byte(tt.args)
			}
			b, err := protocol.NewPayload("A", args, protocol.EnqueueOptions{Plain: true})
			if err != nil {
				t.Fatalf("NewPayload(args %q): %v", tt.args, err)
			}
			want := `{"class":"A","args":` + tt.want + `}`
			if string(b) != want {
				t.Errorf("NewPayload(args %q) =\n  %s\nwant\n  %s", tt.args, b, want)
			}
		})
	}
}

func TestNewPayloadErrors(t *testing.T) {
	t.Parallel()
	for _, args := range []string{`[1,`, `{`, `nope`, `[1] [2]`, `{"a":}`, `'x'`, "[\"\x01\"]"} {
		if b, err := protocol.NewPayload("A", []byte(args), protocol.EnqueueOptions{}); err == nil {
			t.Errorf("NewPayload(args %q) = %s, want an error", args, b)
		}
	}
	if b, err := protocol.NewPayload("", nil, protocol.EnqueueOptions{}); err == nil {
		t.Errorf("NewPayload with empty class = %s, want an error", b)
	}
}

func TestNewPayloadNoHTMLEscaping(t *testing.T) {
	t.Parallel()
	b, err := protocol.NewPayload("Jobs::<A>&B", []byte(`["<tag>&","é ✓"]`), protocol.EnqueueOptions{ID: "i<d>&", Now: time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"class":"Jobs::<A>&B","args":["<tag>&","é ✓"],"id":"i<d>&","queue_time":1.0000}`
	if string(b) != want {
		t.Errorf("got\n  %s\nwant\n  %s", b, want)
	}
	if bytes.Contains(b, []byte(`\u003c`)) || bytes.Contains(b, []byte(`\u0026`)) {
		t.Errorf("HTML-escaped: %s", b)
	}
}

// TestNewPayloadPlainMatchesRuby pins --plain to what Ruby's Resque.enqueue
// wrote in fixtures/ruby-resque-3.0.0/enqueue.json.
func TestNewPayloadPlainMatchesRuby(t *testing.T) {
	t.Parallel()
	items := fixtures.MustLoad("ruby-resque-3.0.0", "enqueue").List("resque:queue:mail")
	mail, err := protocol.DecodePayload([]byte(items[0]))
	if err != nil {
		t.Fatal(err)
	}
	opt := protocol.EnqueueOptions{Plain: true, ID: "ignored", Now: time.Unix(1700000000, 0)}
	got, err := protocol.NewPayload("MailJob", mail.Args, opt)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != items[0] {
		t.Errorf("MailJob plain payload\n  %s\nRuby wrote\n  %s", got, items[0])
	}
	got, err = protocol.NewPayload("NoArgsJob", nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != items[1] || items[1] != `{"class":"NoArgsJob","args":[]}` {
		t.Errorf("NoArgsJob plain payload %s, Ruby wrote %s", got, items[1])
	}
}

func TestMarshalString(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", `""`},
		{"MailJob", `"MailJob"`},
		{"boom <1> & co", `"boom <1> & co"`},
		{"unicode é ✓", `"unicode é ✓"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"a/b", `"a/b"`},
		{"line\nnext\ttab", `"line\nnext\ttab"`},
		{"\x00", `"\u0000"`},
		{"bad \xff byte", `"bad \ufffd byte"`},
		{"/app/rb/jobs.rb:22:in `perform'", "\"/app/rb/jobs.rb:22:in `perform'\""},
	}
	for _, tt := range tests {
		got := protocol.MarshalString(tt.in)
		if string(got) != tt.want {
			t.Errorf("MarshalString(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if !json.Valid(got) {
			t.Errorf("MarshalString(%q) = %s is not valid JSON", tt.in, got)
		}
	}
}

func TestEmbedPayload(t *testing.T) {
	t.Parallel()
	ruby := fixtureItem(t, "ruby-resque-3.0.0", 0)
	php := fixtureItem(t, "php-resque-chrisboulton", 1)
	tests := []struct {
		name, raw, want string
	}{
		{"ruby object as is", ruby, ruby},
		{"php escapes untouched", php, php},
		{"surrounding space trimmed", " \n" + `{"class":"A"}` + "\n", `{"class":"A"}`},
		{"object without class still an object", `{"x":1}`, `{"x":1}`},
		{"garbage", `not json <b>&`, `"not json <b>&"`},
		{"empty", ``, `""`},
		{"array", `[1,2]`, `"[1,2]"`},
		{"json string", `"A"`, `"\"A\""`},
		{"truncated object", `{"class":"A"`, `"{\"class\":\"A\""`},
		{"invalid utf8", "\xffgarbage", `"base64:/2dhcmJhZ2U="`},
		{"invalid utf8 inside an object", "{\"class\":\"\xff\"}", `"base64:eyJjbGFzcyI6Iv8ifQ=="`},
	}
	for _, tt := range tests {
		got := protocol.EmbedPayload([]byte(tt.raw))
		if string(got) != tt.want {
			t.Errorf("%s: EmbedPayload(%q) = %s, want %s", tt.name, tt.raw, got, tt.want)
		}
		if !json.Valid(got) || !utf8.Valid(got) {
			t.Errorf("%s: EmbedPayload(%q) = %s is not valid UTF-8 JSON", tt.name, tt.raw, got)
		}
		// whatever was embedded as a string comes back byte for byte
		var s string
		if json.Unmarshal(got, &s) == nil {
			if back := protocol.UnembedPayload(s); string(back) != tt.raw && strings.TrimSpace(tt.raw) == tt.raw {
				t.Errorf("%s: UnembedPayload(%s) = %q, want %q", tt.name, got, back, tt.raw)
			}
		}
	}
}

// TestDecodePayloadQueueTimeFinite: queue_time is float Unix seconds
// (docs/protocol.md#payloads-resque-go-runs); a non-finite value must not reach the queue-time
// statistic.
func TestDecodePayloadQueueTimeFinite(t *testing.T) {
	t.Parallel()
	for _, qt := range []string{`"NaN"`, `"Inf"`, `"-Infinity"`, `"+inf"`} {
		p, err := protocol.DecodePayload([]byte(`{"class":"A","queue_time":` + qt + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if p.HasQueueTime {
			t.Errorf("queue_time %s: QueueTime = %v, HasQueueTime = true; want false", qt, p.QueueTime)
		}
	}
}

// The fields of a payload are split without encoding/json's reflection; on
// shapes that trip a hand-written scanner they must still be what
// encoding/json gives, and a handler writing into one must change neither
// the others nor the payload's bytes.
func TestDecodePayloadFieldsAsEncodingJSON(t *testing.T) {
	for _, raw := range []string{
		`{"class":"A","args":[1,"}",{"x":"]"}]}`,
		" \t\r\n{ \"class\" : \"A\" , \"args\" : [ ] , \"n\" : -1.5e3 } \n",
		`{"cl\u0061ss":"Esc\"aped","args":{"a\\b":"c\\"}}`,
		`{"class":"First","class":"Last","args":[]}`,
		`{"class":"A","args":[],"t":true,"f":false,"z":null,"e":{},"l":[]}`,
		`{"class":"A","args":["\\\"",{"k":["[{\""]}]}`,
		`{"class":"Ünïcødé ✓","args":["\u00e9"]}`,
	} {
		p, err := protocol.DecodePayload([]byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		if len(p.Fields) != len(want) {
			t.Errorf("%s: fields %q, want %q", raw, p.Fields, want)
		}
		for k, v := range want {
			if !bytes.Equal(p.Fields[k], v) {
				t.Errorf("%s: field %q = %q, want %q", raw, k, p.Fields[k], v)
			}
		}
		var cls string
		_ = json.Unmarshal(want["class"], &cls)
		if p.Class != cls {
			t.Errorf("%s: class %q, want %q", raw, p.Class, cls)
		}
		before := bytes.Clone(p.Raw)
		for k := range p.Fields {
			f := p.Fields[k]
			for i := range f {
				f[i] = 'x'
			}
			p.Fields[k] = append(f, "yyyy"...)
		}
		if !bytes.Equal(p.Raw, before) {
			t.Errorf("%s: writing into the fields changed the payload: %q", raw, p.Raw)
		}
	}
}
