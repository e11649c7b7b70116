package failureio_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/failure"
	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/failureio"
)

// Every field of an entry as each origin writes it: Ruby 2.7/3.0 (also with
// TZ=America/New_York and after a requeue), php-resque (chrisboulton's
// `date` form, resque/php-resque's ISO 8601), node-resque (worker first,
// failed_at last, Date#toString).
func TestParseEntriesOfEveryOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dir, scenario                  string
		failedAt, class, exc, worker   string
		retriedAt, backtrace0, payload string
	}{
		{"ruby-resque-3.0.0", "failure", "2026/11/21 21:23:48 UTC", "FailJob", "RuntimeError", "vm:25655:high,mail", "",
			"/app/rb/jobs.rb:22:in `perform'", `{"class":"FailJob","args":[1,`},
		{"ruby-resque-3.0.0", "failure-requeue-tz-new-york", "2026/11/21 16:25:01 EST", "FailJob", "RuntimeError", "vm:27600:high,mail", "2026/11/21 16:25:03 EST",
			"/app/rb/jobs.rb:22:in `perform'", `{"class":"FailJob","args":[1,`},
		{"ruby-resque-2.7.0", "failure-requeue", "2026/11/21 21:24:23 UTC", "FailJob", "RuntimeError", "vm:26649:high,mail", "2026/11/21 21:24:25",
			"/app/rb/jobs.rb:22:in `perform'", `{"class":"FailJob","args":[1,`},
		{"ruby-resque-2.7.0", "dirty-exit-child", "2026/11/21 21:24:27 UTC", "SleepJob", "Resque::DirtyExit", "vm:26834:high,mail", "",
			"", `{"class":"SleepJob","args":[1,`},
		{"php-resque-chrisboulton", "failure", "Sat Nov 21 21:26:55 UTC 2026", "Fail_Job", "Exception", "vm:30271:high,mail", "",
			"#0 /app/chrisboulton-php-resque/lib/Resque/Job.php(194): Fail_Job->perform()", `{"class":"Fail_Job","args":[[1,`},
		{"php-resque-resque-1.3.6", "failure", "2026-11-21T21:27:13+00:00", "Fail_Job", "Exception", "vm:30973:high,mail", "",
			"#0 /app/resque-php-resque-1.3.6/lib/Resque/Job.php(201): Fail_Job->perform()", `{"class":"Fail_Job","args":[[1,`},
		{"php-resque-resque-master", "failure", "2026-11-21T21:27:33+00:00", "Fail_Job", "Exception", "vm:31692:high,mail", "",
			"#0 /app/resque-php-resque/lib/JobHandler.php(214): Fail_Job->perform()", `{"class":"Fail_Job","args":[[1,`},
		{"node-resque-9.7.1", "failure", "Sat Nov 21 2026 21:29:37 GMT+0000 (Coordinated Universal Time)", "FailJob", "Error", "vm:2568", "",
			"    at Worker.perform (/app/node/driver.js:11:50)", `{"class":"FailJob","queue":"mail","args":[1,`},
		{"node-resque-9.7.1", "stuck-worker-cleaned", "Sat Nov 21 2026 21:29:48 GMT+0000 (Coordinated Universal Time)", "SleepJob",
			"Worker Timeout (killed manually)", "vm:3036", "",
			"killed by vm at Sat Nov 21 2026 21:29:48 GMT+0000 (Coordinated Universal Time)", `{"class":"SleepJob","args":[1,`},
	} {
		raws := fixtures.MustLoad(tc.dir, tc.scenario).List("resque:failed")
		if len(raws) == 0 {
			t.Fatalf("%s/%s: no failed entry in the fixture", tc.dir, tc.scenario)
		}
		raw := []byte(raws[0])
		e := failure.Parse(3, raw)
		name := tc.dir + "/" + tc.scenario
		if e.Unreadable || e.Index != 3 || !bytes.Equal(e.Raw, raw) {
			t.Errorf("%s: unreadable %v, index %d, raw kept %v", name, e.Unreadable, e.Index, bytes.Equal(e.Raw, raw))
		}
		if e.FailedAt != tc.failedAt {
			t.Errorf("%s: failed_at %q, want %q", name, e.FailedAt, tc.failedAt)
		}
		if e.Worker != tc.worker {
			t.Errorf("%s: worker %q, want %q", name, e.Worker, tc.worker)
		}
		if e.Class != tc.class || e.Exception != tc.exc || e.Queue != "mail" || e.RetriedAt != tc.retriedAt {
			t.Errorf("%s: class %q exception %q queue %q retried_at %q", name, e.Class, e.Exception, e.Queue, e.RetriedAt)
		}
		if tc.backtrace0 == "" && len(e.Backtrace) > 0 {
			t.Errorf("%s: backtrace %q, want none", name, e.Backtrace)
		}
		if tc.backtrace0 != "" && (len(e.Backtrace) == 0 || e.Backtrace[0] != tc.backtrace0) {
			t.Errorf("%s: backtrace %q, want first line %q", name, e.Backtrace, tc.backtrace0)
		}
		// the payload is the entry's own bytes, not a re-encoding
		if !bytes.HasPrefix(e.Payload, []byte(tc.payload)) || !bytes.Contains(raw, e.Payload) {
			t.Errorf("%s: payload %s", name, e.Payload)
		}
		if e.ProcessedBy != "" || e.RetriedBy != "" {
			t.Errorf("%s: processed_by %q retried_by %q", name, e.ProcessedBy, e.RetriedBy)
		}
	}
}

// A field of an unexpected JSON type (a number, an object) costs that field,
// not the whole entry; a backtrace written as one string is split in lines.
func TestParseToleratesOddFields(t *testing.T) {
	t.Parallel()
	e := failure.Parse(0, []byte(`{"failed_at":1795296415,"payload":{"class":"A","args":[]},"exception":"E",`+
		`"error":null,"backtrace":"line 1\nline 2","worker":{"id":"w"},"queue":"q","processed_by":"h","retried_by":"no retry"}`))
	if e.Unreadable {
		t.Fatalf("unreadable: %+v", e)
	}
	if e.FailedAt != "1795296415" || e.Class != "A" || e.Exception != "E" || e.Error != "" || e.Queue != "q" ||
		e.Worker != `{"id":"w"}` || e.ProcessedBy != "h" || e.RetriedBy != "no retry" {
		t.Errorf("entry %+v", e)
	}
	if len(e.Backtrace) != 2 || e.Backtrace[1] != "line 2" {
		t.Errorf("backtrace %q", e.Backtrace)
	}
	for _, garbage := range []string{"not json", `["an","array"]`, `"a string"`, ``} {
		if e := failure.Parse(0, []byte(garbage)); !e.Unreadable || e.Error == "" {
			t.Errorf("%q: %+v, want unreadable", garbage, e)
		}
	}
}

// Ruby 3 under TZ=America/New_York (fixture failure-tz-new-york ->
// failure-requeue-tz-new-york): the entry keeps its bytes and gains
// retried_at as its last key. Ruby writes retried_at in the process's zone
// ("... EST"); resque-go writes UTC like every failed_at it writes
// (docs/protocol.md#failures-and-retries), which resque-web parses alike.
func TestRetryNewYorkEntry(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	before := fixtures.MustLoad("ruby-resque-3.0.0", "failure-tz-new-york").List("resque:failed")[0]
	after := fixtures.MustLoad("ruby-resque-3.0.0", "failure-requeue-tz-new-york")
	push(t, c, k.Failed(), before)
	at := time.Date(2026, 11, 21, 21, 25, 3, 0, time.UTC) // 16:25:03 EST
	s := failureio.New(c, func() time.Time { return at })
	e, err := s.Get(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Retry(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	rubyEntry := after.List("resque:failed")[0]
	want := strings.Replace(rubyEntry, `"retried_at":"2026/11/21 16:25:03 EST"`, `"retried_at":"2026/11/21 21:25:03 UTC"`, 1)
	if want == rubyEntry {
		t.Fatal("the fixture no longer has Ruby's retried_at")
	}
	if got := strs(t, c, k.Failed()); len(got) != 1 || got[0] != want {
		t.Errorf("entry after retry:\n got %q\nwant %q", got, want)
	}
	// Ruby re-encodes the payload as {"class","args"} (Job.create); resque-go
	// pushes the entry's payload bytes. For a Ruby payload they are the same.
	if got := strs(t, c, k.Queue("mail")); len(got) != 1 || got[0] != after.List("resque:queue:mail")[0] {
		t.Errorf("queue after retry = %q, want %q", got, after.List("resque:queue:mail"))
	}
	if n, err := c.Do(context.Background(), "SISMEMBER", k.Queues(), "mail"); err != nil || n.(int64) != 1 {
		t.Errorf("mail not in queues: %v %v", n, err)
	}
}

// A php-resque entry is retried with its own payload bytes (id, queue_time
// and the \/ and \u escapes php wrote), where Ruby would push a new
// {"class","args"}; retried_at is appended after "queue".
func TestRetryPHPEntryKeepsPayloadBytes(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	before := fixtures.MustLoad("php-resque-chrisboulton", "failure").List("resque:failed")[0]
	push(t, c, k.Failed(), before)
	at := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	s := failureio.New(c, func() time.Time { return at })
	e, err := s.Get(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Retry(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSuffix(before, "}") + `,"retried_at":"2026/11/22 08:00:00 UTC"}`
	if got := strs(t, c, k.Failed()); len(got) != 1 || got[0] != want {
		t.Errorf("entry after retry:\n got %q\nwant %q", got, want)
	}
	if got := strs(t, c, k.Queue("mail")); len(got) != 1 || got[0] != string(e.Payload) || !strings.Contains(got[0], `"id":"`) {
		t.Errorf("queue after retry = %q, want %q", got, e.Payload)
	}
}

// An entry whose payload is null or absent is not retryable, and nothing
// is pushed for it.
func TestRetryEntryWithoutPayload(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	k := c.Keys()
	push(t, c, k.Failed(),
		`{"failed_at":"x","payload":null,"exception":"E","error":"e","backtrace":[],"worker":"w","queue":"q"}`,
		`{"failed_at":"x","exception":"E","error":"e","backtrace":[],"worker":"w","queue":"q"}`)
	s := failureio.New(c, nil)
	for i := int64(0); i < 2; i++ {
		e, err := s.Get(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		if e.Retryable() {
			t.Errorf("entry %d is retryable", i)
		}
		if err := s.Retry(context.Background(), e); !errors.Is(err, failure.ErrNotRetryable) {
			t.Errorf("entry %d: %v, want ErrNotRetryable", i, err)
		}
	}
	if got := strs(t, c, k.Queue("q")); len(got) != 0 {
		t.Errorf("queue = %q", got)
	}
}
