package runtime

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// outcomeOf turns every kind of result into the record the finish writes:
// what goes to failed or retries, what is pushed back and where, the
// attempt counter, the job status and the unique id. No Redis: the write
// itself is covered by the slot tests.
func TestOutcomeOf(t *testing.T) {
	now := time.Unix(1700000000, 0)
	const (
		ruby    = `{"class":"A","args":[1]}`
		v3      = `{"class":"A","args":[1],"id":"j1","queue_time":1699999999.5}`
		php     = `{"class":"A","args":[1],"id":"p1","isMonitored":true}`
		unique  = `{"class":"A","args":[1],"unique":{"uid":"u1"}}`
		mass    = "static:queue:pool:src"
		newID   = "n3w"
		seq, tk = "seq-1", "token-1"
	)
	fail := &protocol.Failure{FailedAt: now, Exception: "E", Error: "boom", Queue: "q"}
	retried := func(by string) []byte { f := *fail; f.RetriedBy = by; return f.Encode() }
	decode := func(raw string) *protocol.Payload {
		p, err := protocol.DecodePayload([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	retryOf := func(raw, id string, attempt int) []byte {
		b, err := protocol.RetryOf(decode(raw), attempt, id, now)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	item := func(payload []byte, q string) []byte {
		b, err := protocol.DelayedItem(payload, q)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	digest := func(raw string) string { return protocol.AttemptsDigest(decode(raw)) }
	base := func(raw, kind string) rdb.Outcome {
		p := decode(raw)
		return rdb.Outcome{Seq: seq, Kind: rdb.OutcomeKind(kind), Now: now, JobID: p.ID, Class: p.Class, Token: tk,
			Status: protocol.FinishedJobStatus(p, kind)}
	}
	with := func(o rdb.Outcome, f func(*rdb.Outcome)) rdb.Outcome { f(&o); return o }
	due := now.Unix() + 10
	for _, c := range []struct {
		name     string
		queue    string // "" is q
		raw      string
		attempts int // the claim's reading of the attempt counter
		r        result
		want     rdb.Outcome
		note     string
	}{
		{name: "ok", raw: ruby, r: result{kind: rdb.OutcomeOK}, want: base(ruby, "ok")},
		{name: "ok after failures closes the counter", raw: ruby, r: result{kind: rdb.OutcomeOK, prior: 1},
			want: with(base(ruby, "ok"), func(o *rdb.Outcome) { o.AttemptsDigest = digest(ruby) })},
		{name: "ok of a Ruby job the claim did not look up", raw: ruby, attempts: -1, r: result{kind: rdb.OutcomeOK},
			want: with(base(ruby, "ok"), func(o *rdb.Outcome) { o.AttemptsDigest = digest(ruby) })},
		{name: "no kind is a failure", raw: ruby, r: result{fail: fail},
			want: with(base(ruby, "fail"), func(o *rdb.Outcome) { o.Entry = fail.Encode() })},
		{name: "discard", raw: ruby, r: result{kind: rdb.OutcomeDiscard, discard: "stale"}, want: base(ruby, "discard")},
		{name: "retry now, resque-v3 form keeps its id", raw: v3, r: result{kind: rdb.OutcomeRetry, fail: fail, attempt: 1},
			want: with(base(v3, "retry"), func(o *rdb.Outcome) {
				o.Push, o.Entry, o.AttemptsDigest = retryOf(v3, "j1", 1), retried("j1"), digest(v3)
				o.Attempts, o.AttemptsTTL = 1, protocol.AttemptsTTL
			})},
		{name: "retry now, Ruby form goes back to its queue", raw: ruby, r: result{kind: rdb.OutcomeRetry, fail: fail, attempt: 2},
			want: with(base(ruby, "retry"), func(o *rdb.Outcome) {
				o.Push, o.Entry, o.AttemptsDigest = []byte(ruby), retried("queue:q"), digest(ruby)
				o.Attempts, o.AttemptsTTL = 2, protocol.AttemptsTTL
			})},
		{name: "retry later waits in the delayed queue", raw: ruby, r: result{kind: rdb.OutcomeRetry, fail: fail, attempt: 1, delay: 10 * time.Second},
			want: with(base(ruby, "retry"), func(o *rdb.Outcome) {
				o.Push, o.DueAt, o.Entry, o.AttemptsDigest = item([]byte(ruby), "q"), due, retried(protocol.DelayedMember(due)), digest(ruby)
				o.Attempts, o.AttemptsTTL = 1, 10*time.Second+protocol.AttemptsTTL
			})},
		{name: "retry of a monitored job gets a new id", raw: php, r: result{kind: rdb.OutcomeRetry, fail: fail, attempt: 1},
			want: with(base(php, "retry"), func(o *rdb.Outcome) {
				o.Push, o.Entry, o.AttemptsDigest, o.NewJobID = retryOf(php, newID, 1), retried(newID), digest(php), newID
				o.Attempts, o.AttemptsTTL = 1, protocol.AttemptsTTL
			})},
		{name: "a mass job's retry goes back at once", queue: mass, raw: ruby, r: result{kind: rdb.OutcomeRetry, fail: fail, attempt: 1, delay: time.Minute},
			want: with(base(ruby, "retry"), func(o *rdb.Outcome) {
				o.Push, o.Entry, o.AttemptsDigest = []byte(ruby), retried("queue:"+mass), digest(ruby)
				o.Attempts, o.AttemptsTTL = 1, protocol.AttemptsTTL
			})},
		{name: "reschedule now", raw: ruby, r: result{kind: rdb.OutcomeReschedule},
			want: with(base(ruby, "reschedule"), func(o *rdb.Outcome) { o.Push = []byte(ruby) })},
		{name: "reschedule later", raw: ruby, r: result{kind: rdb.OutcomeReschedule, delay: 10 * time.Second},
			want: with(base(ruby, "reschedule"), func(o *rdb.Outcome) { o.Push, o.DueAt = item([]byte(ruby), "q"), due })},
		{name: "unique job releases its uid", raw: unique, r: result{kind: rdb.OutcomeOK},
			want: with(base(unique, "ok"), func(o *rdb.Outcome) { o.UniqueID = "u1" })},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := c.queue
			if q == "" {
				q = "q"
			}
			res := rdb.ClaimResult{Seq: seq, Queue: q, StatQueue: q, Payload: []byte(c.raw), Attempts: c.attempts}
			var before protocol.Failure
			if c.r.fail != nil {
				before = *c.r.fail
			}
			got, note := outcomeOf(res, decode(c.raw), c.r, now, tk, func() string { return newID })
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("outcome\n got %+v\nwant %+v", got, c.want)
			}
			if note != nil {
				t.Errorf("note %v", note)
			}
			if c.r.fail != nil && !reflect.DeepEqual(*c.r.fail, before) {
				t.Errorf("the result's failure was changed: %+v", *c.r.fail)
			}
		})
	}
	// A payload the delayed queue cannot hold (not an object) goes back at
	// once, with a note to log; the stat queue of a claim is kept.
	p := &protocol.Payload{Class: "A"}
	res := rdb.ClaimResult{Queue: "q", StatQueue: "stat", Payload: []byte(`[1]`)}
	got, note := outcomeOf(res, p, result{kind: rdb.OutcomeReschedule, delay: time.Second}, now, "", nil)
	if string(got.Push) != `[1]` || got.DueAt != 0 || got.StatQueue != "stat" || note == nil || !strings.Contains(note.msg, "requeued at once") {
		t.Errorf("outcome %+v, note %v", got, note)
	}
}
