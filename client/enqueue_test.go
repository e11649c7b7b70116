package client_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/protocol"
)

// rubyArgs is the args text Ruby Resque wrote for the fixtures' eight
// arguments, and the Go values that mean the same.
func rubyArgs(t *testing.T) (string, []any) {
	t.Helper()
	p := fixtures.MustLoad("ruby-resque-3.0.0", "enqueue").List("resque:queue:mail")[0]
	text, ok := strings.CutPrefix(p, `{"class":"MailJob","args":`)
	if !ok {
		t.Fatalf("fixture payload %s", p)
	}
	return strings.TrimSuffix(text, "}"),
		[]any{1, "two", 3.5, map[string]string{"k": "v"}, nil, true, uint64(12345678901234567890), "unicode é ✓ <tag>&"}
}

var hexID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// Enqueue writes the protocol's payload: class, args (as Ruby encodes
// them: exact numbers, no HTML escaping), a fresh id and queue_time with
// four decimals; the queue joins the queues set.
func TestClientEnqueueWritesTheProtocolPayload(t *testing.T) {
	t.Parallel()
	now := time.Unix(1795296447, 247114000)
	e := newEnv(t, client.Options{Now: fixedClock(now)})
	argsText, args := rubyArgs(t)
	info, err := e.c.Enqueue(ctx(), "mail", "MailJob", args...)
	if err != nil {
		t.Fatal(err)
	}
	if !hexID.MatchString(info.ID) {
		t.Fatalf("id %q", info.ID)
	}
	want := `{"class":"MailJob","args":` + argsText + `,"id":"` + info.ID + `","queue_time":1795296447.2471}`
	if string(info.Payload) != want || info.Queue != "mail" || info.Class != "MailJob" || !info.DueAt.IsZero() {
		t.Errorf("JobInfo %+v (payload %s), want payload %s", info, info.Payload, want)
	}
	if got := e.strs("LRANGE", e.key("queue:mail"), 0, -1); len(got) != 1 || got[0] != want {
		t.Errorf("queue holds %q, want %q", got, want)
	}
	if got := e.strs("SMEMBERS", e.key("queues")); len(got) != 1 || got[0] != "mail" {
		t.Errorf("queues set %q", got)
	}
	second, err := e.c.Enqueue(ctx(), "mail", "NoArgsJob")
	if err != nil {
		t.Fatal(err)
	}
	if second.ID == info.ID || !strings.HasPrefix(string(second.Payload), `{"class":"NoArgsJob","args":[],"id":"`) {
		t.Errorf("second job %s", second.Payload)
	}
}

// Plain writes exactly what Ruby's Resque.enqueue writes (the captured
// bytes), args compacted; a json.RawMessage argument is kept exact.
func TestClientEnqueuePlainIsRubyByteForByte(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	argsText, _ := rubyArgs(t)
	spaced := strings.ReplaceAll(strings.ReplaceAll(argsText, ",", ", "), "[", "[\n ")
	if _, err := e.c.EnqueueRaw(ctx(), "mail", "MailJob", []byte(spaced), client.Plain()); err != nil {
		t.Fatal(err)
	}
	info, err := e.c.EnqueueRaw(ctx(), "mail", "NoArgsJob", nil, client.Plain())
	if err != nil {
		t.Fatal(err)
	}
	want := fixtures.MustLoad("ruby-resque-3.0.0", "enqueue").List("resque:queue:mail")
	if got := e.strs("LRANGE", e.key("queue:mail"), 0, -1); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("queue holds\n%q\nRuby wrote\n%q", got, want)
	}
	if info.ID != "" || string(info.Payload) != want[1] {
		t.Errorf("plain JobInfo %+v", info)
	}
	raw, err := e.c.Enqueue(ctx(), "big", "C", json.RawMessage(`{"n": 12345678901234567890}`), "<&>")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw.Payload), `{"class":"C","args":[{"n":12345678901234567890},"<&>"],"id":`) {
		t.Errorf("payload %s", raw.Payload)
	}
}

// ID sets the id; object args are kept as an object (php-resque, resque-v3).
func TestClientEnqueueRawIDAndObjectArgs(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{Now: fixedClock(time.Unix(1700000000, 0))})
	info, err := e.c.EnqueueRaw(ctx(), "q", "Task", []byte(`{"k": "v"}`), client.ID("job-1"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"class":"Task","args":{"k":"v"},"id":"job-1","queue_time":1700000000.0000}`
	if info.ID != "job-1" || string(info.Payload) != want {
		t.Errorf("JobInfo %+v, payload %s", info, info.Payload)
	}
	if got := e.strs("LRANGE", e.key("queue:q"), 0, -1); len(got) != 1 || got[0] != want {
		t.Errorf("queue holds %q", got)
	}
}

// EnqueueRaw with Plain and At writes the delayed queue exactly as
// resque-scheduler's enqueue_at did in the fixture.
func TestClientEnqueueAtMatchesResqueScheduler(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	argsText, _ := rubyArgs(t)
	at := time.Unix(1795299965, 0)
	info, err := e.c.EnqueueRaw(ctx(), "mail", "MailJob", []byte(argsText), client.Plain(), client.At(at))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.EnqueueRaw(ctx(), "mail", "NoArgsJob", []byte("[]"), client.Plain(), client.At(at)); err != nil {
		t.Fatal(err)
	}
	ruby := fixtures.MustLoad("resque-scheduler-5.0.0", "delayed-enqueue")
	want := ruby.List("resque:delayed:1795299965")
	if got := e.strs("LRANGE", e.key("delayed:1795299965"), 0, -1); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("delayed bucket\n%q\nresque-scheduler wrote\n%q", got, want)
	}
	for _, item := range want {
		if got := e.strs("SMEMBERS", e.key("timestamps:"+item)); len(got) != 1 || got[0] != "delayed:1795299965" {
			t.Errorf("timestamps:%s = %q", item, got)
		}
	}
	if got := e.strs("ZRANGE", e.key("delayed_queue_schedule"), 0, -1, "WITHSCORES"); fmt.Sprint(got) != "[1795299965 1795299965]" {
		t.Errorf("schedule %q", got)
	}
	if string(info.Payload) != want[0] || !info.DueAt.Equal(at) || info.ID != "" {
		t.Errorf("JobInfo %+v", info)
	}
	if n := e.do("EXISTS", e.key("queue:mail")).(int64); n != 0 {
		t.Error("a delayed job is in its queue before it is due")
	}
}

// In goes through the delayed queue, rounded up to the second; the mover
// promotes it only when due, with the id JobInfo reported (WithID).
func TestClientEnqueueInIsPromotedWhenDue(t *testing.T) {
	t.Parallel()
	now := time.Unix(1795296000, 500_000_000)
	e := newEnv(t, client.Options{Now: fixedClock(now)})
	info, err := e.c.EnqueueRaw(ctx(), "mail", "Reminder", []byte("[7]"), client.In(90*time.Second), client.WithID())
	if err != nil {
		t.Fatal(err)
	}
	if !info.DueAt.Equal(time.Unix(1795296091, 0)) || !hexID.MatchString(info.ID) {
		t.Fatalf("JobInfo %+v", info)
	}
	if !strings.HasPrefix(string(info.Payload), `{"class":"Reminder","args":[7],"queue":"mail","id":"`+info.ID+`"`) {
		t.Errorf("delayed item %s", info.Payload)
	}
	pass := func(at time.Time) int {
		m, err := delayedio.NewMover(delayedio.MoverConfig{Client: e.raw, Now: fixedClock(at)})
		if err != nil {
			t.Fatal(err)
		}
		n, err := m.Pass(ctx())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := pass(time.Unix(1795296090, 0)); n != 0 {
		t.Fatalf("moved %d before due", n)
	}
	if n := pass(time.Unix(1795296091, 0)); n != 1 {
		t.Fatalf("moved %d when due", n)
	}
	jobs, err := e.c.Peek(ctx(), "mail", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].ID != info.ID || jobs[0].Class != "Reminder" || string(jobs[0].Args) != "[7]" {
		t.Errorf("promoted %+v", jobs)
	}

	at, err := e.c.EnqueueAt(ctx(), time.Unix(1795299964, 1), "mail", "Later")
	if err != nil {
		t.Fatal(err)
	}
	if !at.DueAt.Equal(time.Unix(1795299965, 0)) {
		t.Errorf("EnqueueAt due %v, want rounded up to the second", at.DueAt)
	}
}

// What no worker could run is refused with ErrInvalid, and nothing is
// written.
func TestClientEnqueueRefusesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	cases := []struct {
		name         string
		queue, class string
		args         string
		opts         []client.Option
	}{
		{"empty class", "q", "", "[]", nil},
		{"empty queue", "", "C", "[]", nil},
		{"comma in queue", "a,b", "C", "[]", nil},
		{"glob in queue", "a*", "C", "[]", nil},
		{"lone number", "q", "C", "5", nil},
		{"lone string", "q", "C", `"x"`, nil},
		{"not JSON", "q", "C", "[1,", nil},
		{"invalid UTF-8", "q", "C", "[\"\xff\"]", nil},
		{"invalid UTF-8 class", "q", "C\xff", "[]", nil},
		{"plain object", "q", "C", `{"k":1}`, []client.Option{client.Plain()}},
		{"plain with id", "q", "C", `[]`, []client.Option{client.Plain(), client.ID("x")}},
		// past the bounds (protocol.MaxDelay, MaxTimestamp)
		{"in over 100 years", "q", "C", `[]`, []client.Option{client.In(protocol.MaxDelay + time.Second)}},
		{"at after year 9999", "q", "C", `[]`, []client.Option{client.At(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}},
		{"at before 1970", "q", "C", `[]`, []client.Option{client.At(time.Unix(-1, 0))}},
		{"deferrable by over 100 years", "q", "C", `[]`, []client.Option{client.Unique("D"), client.DeferrableBy(protocol.MaxDelay + time.Second)}},
	}
	for _, tc := range cases {
		_, err := e.c.EnqueueRaw(ctx(), tc.queue, tc.class, []byte(tc.args), tc.opts...)
		if !errors.Is(err, client.ErrInvalid) || !strings.HasPrefix(err.Error(), "client: invalid argument: ") {
			t.Errorf("%s: err %v, want ErrInvalid", tc.name, err)
		}
	}
	if _, err := e.c.Enqueue(ctx(), "q", "C", func() {}); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("unencodable arg: err %v", err)
	}
	if _, err := e.c.EnqueueAt(ctx(), time.Time{}, "q", "C"); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("zero time: err %v", err)
	}
	if keys := e.strs("KEYS", e.ns+":*"); len(keys) != 0 {
		t.Errorf("refused jobs wrote %q", keys)
	}
}

// One client serves many goroutines; every job gets its own id.
func TestClientEnqueueConcurrently(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	const workers, each = 8, 25
	ids := make(chan string, workers*each)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				info, err := e.c.Enqueue(ctx(), "load", "Count", w, i)
				if err != nil {
					t.Error(err)
					return
				}
				ids <- info.ID
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		seen[id] = true
	}
	n, err := e.c.QueueSize(ctx(), "load")
	if err != nil {
		t.Fatal(err)
	}
	if n != workers*each || len(seen) != workers*each {
		t.Errorf("queue size %d, %d distinct ids; want %d", n, len(seen), workers*each)
	}
}
