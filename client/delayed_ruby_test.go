package client_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/fixtures"
)

// delayedKeys is every delayed-queue key of a namespace (prefix cut) with
// its values, for a byte comparison with a fixture.
func (e *env) delayedKeys() map[string][]string {
	e.t.Helper()
	out := map[string][]string{}
	for _, k := range e.strs("KEYS", e.ns+":*") {
		name := strings.TrimPrefix(k, e.ns+":")
		switch {
		case strings.HasPrefix(name, "delayed:"):
			out[name] = e.strs("LRANGE", k, 0, -1)
		case strings.HasPrefix(name, "timestamps:"):
			out[name] = e.strs("SMEMBERS", k)
			slices.Sort(out[name])
		case name == "delayed_queue_schedule":
			out[name] = e.strs("ZRANGE", k, 0, -1, "WITHSCORES")
		}
	}
	return out
}

// By default EnqueueAt and EnqueueIn write what resque-scheduler's
// enqueue_at, enqueue_in and enqueue_at_with_queue wrote in the fixture,
// byte for byte: every bucket, every timestamps: index entry and the
// schedule, with no id (JobInfo.ID is "").
func TestClientEnqueueAtDefaultIsResqueSchedulerBytes(t *testing.T) {
	t.Parallel()
	_, args := rubyArgs(t)
	args[6] = json.Number("12345678901234567890") // a Ruby bignum, exact
	// resque-scheduler ran enqueue_in(600) at 1795296365
	e := newEnv(t, client.Options{Now: fixedClock(time.Unix(1795296365, 0))})
	at := time.Unix(1795299965, 0)
	jobs := []func() (client.JobInfo, error){
		func() (client.JobInfo, error) { return e.c.EnqueueAt(ctx(), at, "mail", "MailJob", args...) },
		func() (client.JobInfo, error) { return e.c.EnqueueAt(ctx(), at, "mail", "NoArgsJob") },
		func() (client.JobInfo, error) {
			return e.c.EnqueueIn(ctx(), 600*time.Second, "mail", "MailJob", "in-600")
		},
		func() (client.JobInfo, error) {
			return e.c.EnqueueAt(ctx(), time.Unix(1795300025, 0), "high", "MailJob", "to-high")
		},
	}
	for i, job := range jobs {
		info, err := job()
		if err != nil {
			t.Fatal(err)
		}
		if info.ID != "" {
			t.Errorf("job %d: id %q, want none (resque-scheduler's items have none)", i, info.ID)
		}
	}
	want := map[string][]string{}
	ruby := fixtures.MustLoad("resque-scheduler-5.0.0", "delayed-enqueue")
	for _, k := range ruby.Keys {
		name := strings.TrimPrefix(k.Key, "resque:")
		if name == "delayed_queue_schedule" {
			for _, ts := range []string{"1795296965", "1795299965", "1795300025"} {
				want[name] = append(want[name], ts, ts)
			}
			continue
		}
		want[name] = ruby.List(k.Key)
	}
	got := e.delayedKeys()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("delayed queue\n%q\nresque-scheduler wrote\n%q", got, want)
	}
}

// rubyEncode is what resque-scheduler's remove_delayed searches for:
// encode(job_to_hash(klass, args)), {class:, args:, queue:} through
// Resque.encode (JSON with no HTML escaping, non-ASCII as is).
func rubyEncode(t *testing.T, class string, args []any, queue string) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Class string `json:"class"`
		Args  []any  `json:"args"`
		Queue string `json:"queue"`
	}{class, args, queue}); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// resque-scheduler's remove_delayed(MailJob, *args) finds a job written by
// EnqueueAt: it SMEMBERS timestamps:<encoded hash> and LREMs the encoded
// hash from each bucket named there (remove_delayed_job). With WithID the
// job has an id, and that lookup cannot find it: the documented cost.
func TestRubyRemoveDelayedFindsEnqueueAt(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	args := []any{1, "two", 3.5, map[string]string{"k": "v"}, nil, true, json.Number("12345678901234567890"), "unicode é ✓ <tag>&"}
	at := time.Unix(1795299965, 0)
	if _, err := e.c.EnqueueAt(ctx(), at, "mail", "MailJob", args...); err != nil {
		t.Fatal(err)
	}
	removeDelayed := func(search string) int64 {
		var n int64
		for _, bucket := range e.strs("SMEMBERS", e.key("timestamps:"+search)) {
			n += e.do("LREM", e.key(bucket), 0, search).(int64)
			e.do("SREM", e.key("timestamps:"+search), bucket)
		}
		return n
	}
	search := rubyEncode(t, "MailJob", args, "mail")
	if n := removeDelayed(search); n != 1 {
		t.Fatalf("remove_delayed removed %d, want 1 (searched %s; bucket holds %q)", n, search, e.strs("LRANGE", e.key("delayed:1795299965"), 0, -1))
	}
	if n := e.do("LLEN", e.key("delayed:1795299965")).(int64); n != 0 {
		t.Errorf("the bucket still holds %d items", n)
	}

	raw, _ := json.Marshal([]any{"with-id"})
	info, err := e.c.EnqueueRaw(ctx(), "mail", "MailJob", raw, client.At(at), client.WithID())
	if err != nil || !hexID.MatchString(info.ID) {
		t.Fatalf("WithID: %+v %v", info, err)
	}
	if n := removeDelayed(rubyEncode(t, "MailJob", []any{"with-id"}, "mail")); n != 0 {
		t.Errorf("remove_delayed found a job with an id (%d)", n)
	}
	if _, err := e.c.EnqueueRaw(ctx(), "mail", "MailJob", raw, client.At(at), client.WithID(), client.Plain()); err == nil {
		t.Error("Plain with WithID accepted")
	}
}
