package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// Every payload shape of docs/protocol.md#payloads-resque-go-runs reaches its handler with the args
// bytes unchanged.
func TestRunsEveryProducerShape(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var payloads []string
	for _, dir := range []string{"ruby-resque-3.0.0", "ruby-resque-2.7.0", "php-resque-chrisboulton", "php-resque-resque-1.3.6", "php-resque-resque-master", "node-resque-9.7.1"} {
		payloads = append(payloads, fixtures.MustLoad(dir, "enqueue").List("resque:queue:mail")...)
	}
	payloads = append(payloads,
		`{"class":"Task","args":{"k":"v"},"queue":"mail","sourceId":"s1","unique":{"uid":"u1","deferrableBy":30},"isMonitored":true,"includePath":"x/","environment":{"K":"V"},"failCount":1,"id":"0123456789abcdef0123456789abcdef","queue_time":1700000000.1234}`,
		`{"class":"ActiveJob::QueueAdapters::ResqueAdapter::JobWrapper","args":[{"job_class":"RailsJob","job_id":"x","arguments":[1]}]}`,
		`{"class":"NoArgsAtAll"}`,
	)
	var mu sync.Mutex
	got := map[string][]byte{} // payload -> args the handler saw
	capture := func(ctx context.Context, j *worker.Job) error {
		mu.Lock()
		defer mu.Unlock()
		got[string(j.Payload)] = append([]byte(nil), j.Args...)
		return nil
	}
	for _, c := range []string{"MailJob", "NoArgsJob", "Mail_Job", "NoArgs_Job", "Task", "RailsJob", "NoArgsAtAll"} {
		e.reg.Register(c, capture)
	}
	var rec recorder
	e.push("mail", payloads...)
	e.start(runtime.Config{Queues: "mail", Concurrency: 3, OnFinish: rec.add})
	done := rec.waitN(t, len(payloads))
	for _, f := range done {
		if f.Failed {
			t.Errorf("%s failed: %s: %s", f.Payload, f.Exception, f.Error)
		}
	}
	for _, p := range payloads {
		var want struct {
			Args json.RawMessage `json:"args"`
		}
		if err := json.Unmarshal([]byte(p), &want); err != nil {
			t.Fatal(err)
		}
		if string(want.Args) == "null" {
			want.Args = nil
		}
		mu.Lock()
		args, ok := got[p]
		mu.Unlock()
		if !ok {
			t.Errorf("handler never saw %s", p)
			continue
		}
		if !bytes.Equal(args, want.Args) {
			t.Errorf("args changed:\n got %s\nwant %s", args, want.Args)
		}
	}
	// The Ruby big integer survives decoding exactly.
	ruby := fixtures.MustLoad("ruby-resque-3.0.0", "enqueue").List("resque:queue:mail")[0]
	j := &worker.Job{Args: got[ruby]}
	var args []any
	if err := j.DecodeArgs(&args); err != nil {
		t.Fatal(err)
	}
	if n, ok := args[6].(json.Number); !ok || n.String() != "12345678901234567890" {
		t.Errorf("big integer = %#v, want json.Number 12345678901234567890", args[6])
	}
	if args[7] != "unicode é ✓ <tag>&" {
		t.Errorf("unicode arg = %q", args[7])
	}
	if n := e.counter(e.client.Keys().StatProcessed()); n != int64(len(payloads)) {
		t.Errorf("stat:processed = %d, want %d", n, len(payloads))
	}
}

// Queues are walked in strict priority order, re-walked after every job.
func TestStrictPriority(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	var order []string
	e.reg.Register("J", func(ctx context.Context, j *worker.Job) error {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, j.Queue)
		return nil
	})
	for i := 0; i < 3; i++ {
		e.push("low", `{"class":"J","args":[]}`)
		e.push("mid", `{"class":"J","args":[]}`)
		e.push("high", `{"class":"J","args":[]}`)
	}
	var rec recorder
	e.start(runtime.Config{Queues: "high,mid,low", OnFinish: rec.add})
	rec.waitN(t, 9)
	mu.Lock()
	defer mu.Unlock()
	want := "high,high,high,mid,mid,mid,low,low,low"
	if got := strings.Join(order, ","); got != want {
		t.Errorf("order = %s, want %s", got, want)
	}
}

// "critical,*,!tmp*": critical first, then the rest A-Z, tmp queues excluded.
func TestGlobQueues(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	var order []string
	e.reg.Register("J", func(ctx context.Context, j *worker.Job) error {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, j.Queue)
		return nil
	})
	for _, q := range []string{"zeta", "tmp1", "alpha", "critical", "mid:sub"} {
		e.push(q, `{"class":"J","args":[]}`)
	}
	var rec recorder
	e.start(runtime.Config{Queues: "critical,*,!tmp*", OnFinish: rec.add})
	rec.waitN(t, 4)
	mu.Lock()
	got := strings.Join(order, ",")
	mu.Unlock()
	if want := "critical,alpha,mid:sub,zeta"; got != want {
		t.Errorf("order = %s, want %s", got, want)
	}
	if n := len(e.list(e.client.Keys().Queue("tmp1"))); n != 1 {
		t.Errorf("excluded queue tmp1 has %d jobs, want 1 (untouched)", n)
	}
}

// While a job runs, worker:<id>, :started and the heartbeat look like what
// Ruby Resque 3.0 wrote (fixtures/ruby-resque-3.0.0/worker-running.json).
func TestRegistrationMatchesRuby(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ruby := fixtures.MustLoad("ruby-resque-3.0.0", "worker-running")
	rubyID := ruby.List("resque:workers")[0]
	rubyRecord := ruby.String("resque:worker:" + rubyID)
	var rubyView struct {
		Payload json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal([]byte(rubyRecord), &rubyView); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	running := make(chan struct{}, 1)
	e.reg.Register("SleepJob", func(ctx context.Context, j *worker.Job) error {
		running <- struct{}{}
		<-release
		return nil
	})
	e.push("mail", string(rubyView.Payload))
	w := e.start(runtime.Config{Queues: "high,mail", Hostname: "vm"})
	<-running
	defer close(release)
	k := e.client.Keys()
	id := w.IDs()[0]
	if wid, err := protocol.ParseWorkerID(id); err != nil || wid.Host != "vm" || wid.Queues != "high,mail" {
		t.Errorf("worker id %q does not have Ruby's host:pid:queues shape (%v)", id, err)
	}
	if got := e.members(k.Workers()); len(got) != 1 || got[0] != id {
		t.Errorf("workers = %v, want [%s]", got, id)
	}
	rec := e.get(k.Worker(id))
	// Same key order and same bytes apart from run_at.
	var r struct {
		Queue string `json:"queue"`
		RunAt string `json:"run_at"`
	}
	if err := json.Unmarshal([]byte(rec), &r); err != nil {
		t.Fatal(err)
	}
	if _, err := time.Parse(protocol.RunAtLayout, r.RunAt); err != nil {
		t.Errorf("run_at %q: %v", r.RunAt, err)
	}
	var rr struct {
		RunAt string `json:"run_at"`
	}
	_ = json.Unmarshal([]byte(rubyRecord), &rr)
	if want := strings.Replace(rubyRecord, rr.RunAt, r.RunAt, 1); rec != want {
		t.Errorf("worker record differs from Ruby's:\n got %s\nwant %s", rec, want)
	}
	started := e.get(k.WorkerStarted(id))
	rubyStarted := ruby.String("resque:worker:" + rubyID + ":started")
	if len(started) != len(rubyStarted) || !strings.HasSuffix(started, " +0000") {
		t.Errorf(":started = %q, Ruby wrote %q", started, rubyStarted)
	}
	if _, err := time.Parse(protocol.StartedLayout, started); err != nil {
		t.Errorf(":started %q: %v", started, err)
	}
	hb, err := e.client.Do(e.ctx(), "HGET", k.Heartbeats(), id)
	if err != nil || hb == nil {
		t.Fatalf("no heartbeat for %s (%v)", id, err)
	}
	rubyHB := ruby.Hash("resque:workers:heartbeat")[rubyID]
	hbs := string(hb.([]byte))
	if len(hbs) != len(rubyHB) || !strings.HasSuffix(hbs, "+00:00") {
		t.Errorf("heartbeat = %q, Ruby wrote %q", hbs, rubyHB)
	}
	hbTime, err := protocol.ParseHeartbeat(hbs)
	if err != nil {
		t.Fatal(err)
	}
	now, err := e.client.Time(e.ctx())
	if err != nil {
		t.Fatal(err)
	}
	if d := now.Sub(hbTime); d < 0 || d > time.Minute {
		t.Errorf("heartbeat %s is %s away from Redis TIME %s", hbs, d, now)
	}
}

// A failing job leaves a failed entry with Ruby's fields and order, and the
// counters Ruby writes (fixtures/ruby-resque-3.0.0/failure.json).
func TestFailedEntryMatchesRuby(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ruby := fixtures.MustLoad("ruby-resque-3.0.0", "failure")
	rubyEntry := decodeFailed(t, ruby.List("resque:failed")[0])
	e.reg.Register("FailJob", func(ctx context.Context, j *worker.Job) error {
		return &worker.Error{Exception: "RuntimeError", Message: "boom <1>", Backtrace: rubyEntry.Backtrace}
	})
	var rec recorder
	e.push("mail", string(rubyEntry.Payload))
	w := e.start(runtime.Config{Queues: "high,mail", Hostname: "vm", OnFinish: rec.add, Retry: noRetry})
	rec.waitN(t, 1)
	k := e.client.Keys()
	failed := e.list(k.Failed())
	if len(failed) != 1 {
		t.Fatalf("failed has %d entries, want 1", len(failed))
	}
	got := decodeFailed(t, failed[0])
	id := w.IDs()[0]
	if _, err := time.Parse(protocol.FailedAtLayout, got.FailedAt); err != nil || !strings.HasSuffix(got.FailedAt, " UTC") {
		t.Errorf("failed_at %q not in Ruby's form (%v)", got.FailedAt, err)
	}
	if len(got.FailedAt) != len(rubyEntry.FailedAt) {
		t.Errorf("failed_at %q vs Ruby %q", got.FailedAt, rubyEntry.FailedAt)
	}
	if !bytes.Equal(got.Payload, rubyEntry.Payload) {
		t.Errorf("payload %s, want %s", got.Payload, rubyEntry.Payload)
	}
	if got.Exception != rubyEntry.Exception || got.Error != rubyEntry.Error || got.Queue != rubyEntry.Queue {
		t.Errorf("got %+v, Ruby %+v", got, rubyEntry)
	}
	if strings.Join(got.Backtrace, "|") != strings.Join(rubyEntry.Backtrace, "|") {
		t.Errorf("backtrace %q, want %q", got.Backtrace, rubyEntry.Backtrace)
	}
	if got.Worker != id || got.ProcessedBy != "vm" || got.RetriedBy != "no retry" {
		t.Errorf("worker=%q processed_by=%q retried_by=%q", got.Worker, got.ProcessedBy, got.RetriedBy)
	}
	// Ruby's keys come first, in Ruby's order; ours follow.
	if keys := jsonKeys(t, failed[0]); strings.Join(keys, ",") != strings.Join(jsonKeys(t, ruby.List("resque:failed")[0]), ",")+",processed_by,retried_by" {
		t.Errorf("key order %v", keys)
	}
	// Byte-identical to Ruby's entry up to the fields Ruby does not write.
	rubyRaw := ruby.List("resque:failed")[0]
	wantPrefix := strings.Replace(strings.Replace(strings.TrimSuffix(rubyRaw, "}"), rubyEntry.FailedAt, got.FailedAt, 1), rubyEntry.Worker, id, 1)
	if !strings.HasPrefix(failed[0], wantPrefix+",") {
		t.Errorf("entry differs from Ruby's:\n got %s\nwant %s,...", failed[0], wantPrefix)
	}
	for key, want := range map[string]int64{
		k.StatProcessed(): 1, k.StatFailed(): 1, k.StatProcessedWorker(id): 1, k.StatFailedWorker(id): 1,
		k.QueueStat("vm", protocol.QueueStatFailed, "mail"): 1, k.QueueStat("vm", protocol.QueueStatProcessed, "mail"): 0,
	} {
		if got := e.counter(key); got != want {
			t.Errorf("%s = %d, want %d", key, got, want)
		}
	}
	// the dequeue counter is batched: written within a flush interval
	redistest.Eventually(t, 0, func() bool { return e.counter(k.QueueStat("vm", protocol.QueueStatDequeued, "mail")) == 1 }, "queuestat dequeued")
	// After a clean stop the per-worker keys go, as in failure-worker-stopped.
	w.Stop()
	for _, key := range []string{k.StatProcessedWorker(id), k.StatFailedWorker(id), k.WorkerStarted(id), k.Worker(id)} {
		if v := e.get(key); v != "" {
			t.Errorf("%s still set after stop: %q", key, v)
		}
	}
	if got := e.members(k.Workers()); len(got) != 0 {
		t.Errorf("workers after stop = %v", got)
	}
	if e.counter(k.StatProcessed()) != 1 || len(e.list(k.Failed())) != 1 {
		t.Error("global stats or failed list changed by stop")
	}
}

func jsonKeys(t *testing.T, s string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// Garbage in a queue ends in failed with a clear error; the worker goes on.
func TestBadPayloadsEndInFailed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.reg.Register("Good", func(ctx context.Context, j *worker.Job) error { return nil })
	bad := map[string]string{
		`this is not JSON {`:                          "not a JSON object",
		`[1,2,3]`:                                     "not a JSON object",
		`"just a string"`:                             "not a JSON object",
		`{"args":[1]}`:                                `no "class"`,
		`{"class":5,"args":[]}`:                       `"class" is not a non-empty string`,
		`{"class":"Good","args":[1]`:                  "not valid JSON",
		"{\"class\":\"X\xff\",\"args\"":               "not valid UTF-8 (bad byte 0xff at offset 11)",
		`{"class":"Unknown","args":[]}`:               "no handler registered",
		`{"class":"Good","args":"notarray"}`:          `"args" is not an array or object`,
		"{\"class\":\"Good\",\"args\":[\"caf\xe9\"]}": "not valid UTF-8",
	}
	var rec recorder
	for p := range bad {
		e.push("q", p)
	}
	e.push("q", `{"class":"Good","args":[]}`)
	e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Retry: noRetry})
	done := rec.waitN(t, len(bad)+1)
	good := 0
	for _, f := range done {
		if !f.Failed {
			good++
		}
	}
	if good != 1 {
		t.Errorf("%d good jobs ran, want 1", good)
	}
	failed := e.list(e.client.Keys().Failed())
	if len(failed) != len(bad) {
		t.Fatalf("failed has %d entries, want %d", len(failed), len(bad))
	}
	for _, s := range failed {
		f := decodeFailed(t, s)
		if !utf8.ValidString(s) || !json.Valid([]byte(s)) {
			t.Errorf("failed entry %q is not valid UTF-8 JSON", s)
		}
		var original string
		if f.Payload[0] == '"' {
			if err := json.Unmarshal(f.Payload, &original); err != nil {
				t.Fatal(err)
			}
			original = string(protocol.UnembedPayload(original)) // invalid UTF-8 travels as base64
		} else {
			original = string(f.Payload)
		}
		want, ok := bad[original]
		if !ok {
			t.Errorf("failed entry payload %q is none of the bad payloads", original)
			continue
		}
		if !strings.Contains(f.Error, want) {
			t.Errorf("error for %q = %q, want it to say %q", original, f.Error, want)
		}
		wantExc := protocol.ExcBadPayload
		if want == "no handler registered" {
			wantExc = protocol.ExcNoHandler
		}
		if f.Exception != wantExc {
			t.Errorf("exception for %q = %q, want %q", original, f.Exception, wantExc)
		}
	}
}

// A panic and a plain Go error are failures with sensible names.
func TestHandlerErrorsAndPanics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.reg.Register("Panics", func(ctx context.Context, j *worker.Job) error { panic("kaboom") })
	e.reg.Register("Errs", func(ctx context.Context, j *worker.Job) error { return fmt.Errorf("wrapped: %w", errors.New("inner")) })
	var rec recorder
	e.push("q", `{"class":"Panics","args":[]}`, `{"class":"Errs","args":[]}`)
	e.start(runtime.Config{Queues: "q", OnFinish: rec.add, Retry: noRetry})
	rec.waitN(t, 2)
	byExc := map[string]failedEntry{}
	for _, s := range e.list(e.client.Keys().Failed()) {
		f := decodeFailed(t, s)
		byExc[f.Exception] = f
	}
	if f, ok := byExc["ResqueGo::Panic"]; !ok || f.Error != "kaboom" || len(f.Backtrace) == 0 {
		t.Errorf("panic entry = %+v", f)
	}
	if f, ok := byExc["Error"]; !ok || f.Error != "wrapped: inner" || f.Backtrace == nil {
		t.Errorf("error entry = %+v", f)
	}
}

// Many slots in several workers never run a job twice or lose one.
func TestConcurrentWorkersRunEachJobOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 600
	var mu sync.Mutex
	seen := map[string]int{}
	e.reg.Register("J", func(ctx context.Context, j *worker.Job) error {
		var args []int
		if err := j.DecodeArgs(&args); err != nil {
			return err
		}
		mu.Lock()
		seen[fmt.Sprint(args[0])]++
		mu.Unlock()
		return nil
	})
	var rec recorder
	for i := 0; i < 3; i++ {
		e.start(runtime.Config{Queues: "a,b", Concurrency: 4, Hostname: fmt.Sprintf("host%d", i), OnFinish: rec.add})
	}
	for i := 0; i < n; i++ {
		e.push([]string{"a", "b"}[i%2], fmt.Sprintf(`{"class":"J","args":[%d]}`, i))
	}
	rec.waitN(t, n)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != n {
		t.Errorf("%d distinct jobs ran, want %d", len(seen), n)
	}
	var dup []string
	for k, c := range seen {
		if c != 1 {
			dup = append(dup, k)
		}
	}
	sort.Strings(dup)
	if len(dup) > 0 {
		t.Errorf("jobs run more than once: %v", dup)
	}
	if got := e.counter(e.client.Keys().StatProcessed()); got != n {
		t.Errorf("stat:processed = %d, want %d", got, n)
	}
}
