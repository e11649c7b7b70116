package rdb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
)

// batchSlot is one slot of the batch test: its claim and how its job ends.
type batchSlot struct {
	id      string
	args    ClaimArgs
	src     protocol.Source
	outcome func(res ClaimResult) Outcome
	// before runs after the slot's claim, before the finish
	before func(t *testing.T, c *Client)
}

// The batch script (finish_claim_batch.lua) leaves Redis exactly as the
// same finish-and-claim calls made one at a time, for every kind of
// finish: plain success (the short form), failure, retry to the queue and
// to the delayed queue with an attempts counter, a job status, a unique
// job releasing its deferred copy, a serial lock released, a record
// removed by another runtime's prune, and a stale claim. Each slot gets the
// same answer too.
func TestBatchLeavesWhatSingleCallsLeave(t *testing.T) {
	t.Parallel()
	for _, paused := range []bool{false, true} {
		for _, plainOnly := range []bool{false, true} {
			t.Run(fmt.Sprintf("paused=%v/plain=%v", paused, plainOnly), func(t *testing.T) { batchVersusSingle(t, paused, plainOnly) })
		}
	}
}

// batchVersusSingle compares; paused: every worker is paused when the
// slots finish (their finishes are recorded, none claims); plainOnly: the
// slots claim from one plain queue (the batch script's claim_plain) rather
// than from a plain and a serial one (claim()).
func batchVersusSingle(t *testing.T, paused, plainOnly bool) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	single := batchFixture(t, "single", now, paused, plainOnly)
	batched := batchFixture(t, "batch", now, paused, plainOnly)
	// both take the short paths (claim_plain) for plain sources: they are
	// also compared with jobpath/finish.lua and jobpath/claim.lua called one after the
	// other (claim()'s general path), whose claim moves the sequence
	// once more, so sequences are left out of that comparison
	separate := batchFixture(t, "separate", now, paused, plainOnly)
	if a, b := withoutSeqs(separate), withoutSeqs(batched); a.dump != b.dump {
		t.Errorf("Redis after separate finishes and claims:\n%s\nafter one batch:\n%s", a.dump, b.dump)
	} else {
		for i := range a.answers {
			if a.answers[i] != b.answers[i] {
				t.Errorf("slot %d: separate %s, batched %s", i, a.answers[i], b.answers[i])
			}
		}
	}
	if single.dump != batched.dump {
		t.Errorf("Redis after single calls:\n%s\nafter one batch:\n%s", single.dump, batched.dump)
	}
	if len(single.answers) != len(batched.answers) {
		t.Fatalf("answers: %d vs %d", len(single.answers), len(batched.answers))
	}
	for i := range single.answers {
		if single.answers[i] != batched.answers[i] {
			t.Errorf("slot %d: single %s, batched %s", i, single.answers[i], batched.answers[i])
		}
	}
	t.Logf("%d slots; answers: %v", len(batched.answers), batched.answers)
}

type batchResult struct {
	dump    string
	answers []string
}

// withoutSeqs drops claim sequences from a result: the claim-sequence
// hash from the dump and seq=... from the answers.
func withoutSeqs(r batchResult) batchResult {
	var lines []string
	for _, l := range strings.Split(r.dump, "\n") {
		if !strings.HasPrefix(l, "<ns>:resque-go:claim_seq ") {
			lines = append(lines, l)
		}
	}
	out := batchResult{dump: strings.Join(lines, "\n")}
	for _, a := range r.answers {
		out.answers = append(out.answers, seqField.ReplaceAllString(a, "seq=?"))
	}
	return out
}

var seqField = regexp.MustCompile(`seq=\S*`)

// batchFixture runs the batch test's slots (mode): one finish-and-claim
// call each ("single"), one batch ("batch"), or jobpath/finish.lua then jobpath/claim.lua
// for each ("separate").
func batchFixture(t *testing.T, mode string, now time.Time, paused, plainOnly bool) batchResult {
	ctx := context.Background()
	ns := redistest.Namespace(t)
	c, err := New(Options{URL: os.Getenv("RESQUE_GO_TEST_REDIS"), Namespace: ns, Unbatched: mode != "batch"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	k := c.Keys()
	do := func(cmd string, args ...any) any {
		t.Helper()
		v, err := c.do(ctx, cmd, args...)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return v
	}
	ruby := func(i int) string { return fmt.Sprintf(`{"class":"Job","args":[%d]}`, i) }
	payloads := []string{
		ruby(1),
		ruby(2),
		ruby(3),
		`{"class":"Tracked","args":[],"id":"j1","isMonitored":true}`,
		`{"class":"Once","args":[],"unique":{"uid":"u1","deferrableBy":0}}`,
		ruby(6),
		ruby(7),
		ruby(8),
		ruby(9),
	}
	for _, p := range payloads {
		if err := c.Enqueue(ctx, "q", []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	// what the claims take next: jobs that ask the claim for more than the
	// record (a resque-v3 status, a php-resque status, a unique state), a
	// payload that is not a JSON object, and plain ones
	next := []string{ruby(10), `{"class":"T2","args":[],"id":"j2","isMonitored":true}`,
		`{"class":"U2","args":[],"unique":{"uid":"u2"}}`, `{"class":"P","args":[],"id":"p1"}`, `[1,"x"]`,
		`{"class":"U3","args":[],"unique":{"uid":17}}`}
	for i := 16; i < 30; i++ {
		next = append(next, ruby(i))
	}
	for _, p := range next {
		if err := c.Enqueue(ctx, "q", []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	do("SET", k.JobStatus("p1"), `{"status":1,"updated":1}`)
	sources := []protocol.Source{protocol.QueueSource("q"), {Queue: "s", Serial: true}}
	if plainOnly {
		sources = sources[:1]
	}
	plain := sources[0]
	slot := func(i int) batchSlot {
		id := fmt.Sprintf("h:%d:q,s", i)
		return batchSlot{id: id, src: plain,
			args: ClaimArgs{WorkerID: id, Host: "h", Sources: sources, Now: now, Token: fmt.Sprintf("%032d", i)}}
	}
	slots := make([]batchSlot, len(payloads))
	for i := range slots {
		slots[i] = slot(i)
	}
	ok := func(res ClaimResult) Outcome { return Outcome{Seq: res.Seq, Kind: OutcomeOK, Class: "Job", Now: now} }
	// a retry through the delayed queue with an attempts counter: first,
	// so the single calls' claims see the counter as the batch's do
	slots[0].outcome = func(res ClaimResult) Outcome {
		p, err := protocol.DecodePayload(res.Payload)
		if err != nil {
			t.Fatal(err)
		}
		return Outcome{Seq: res.Seq, Kind: OutcomeRetry, Class: "Job", Entry: []byte(`{"retry":1}`), Push: res.Payload,
			DueAt: now.Unix() + 60, AttemptsDigest: protocol.AttemptsDigest(p), Attempts: 1, AttemptsTTL: time.Hour, Now: now}
	}
	slots[1].outcome = ok
	slots[2].outcome = func(res ClaimResult) Outcome {
		return Outcome{Seq: res.Seq, Kind: OutcomeFail, Class: "Job", Entry: []byte(`{"failed":3}`), Now: now}
	}
	slots[3].outcome = func(res ClaimResult) Outcome {
		return Outcome{Seq: res.Seq, Kind: OutcomeOK, Class: "Tracked", JobID: "j1", Status: "v3:complete", Now: now}
	}
	slots[4].outcome = func(res ClaimResult) Outcome {
		return Outcome{Seq: res.Seq, Kind: OutcomeOK, Class: "Once", UniqueID: "u1", Now: now}
	}
	slots[4].before = func(t *testing.T, c *Client) {
		do("SET", k.UniqueDeferred("u1"), `{"class":"Once","args":[2],"queue":"q","unique":{"uid":"u1","deferrableBy":0}}`)
	}
	slots[5].outcome = func(res ClaimResult) Outcome {
		return Outcome{Seq: res.Seq, Kind: OutcomeRetry, Class: "Job", Entry: []byte(`{"retry":6}`), Push: res.Payload, Now: now}
	}
	// finished as a job of the serial source, whose lock the slot holds
	slots[6].outcome = ok
	if !plainOnly {
		slots[6].src = sources[1]
		slots[6].outcome = func(res ClaimResult) Outcome {
			return Outcome{Seq: res.Seq, Kind: OutcomeOK, Class: "Job", Token: slots[6].args.Token, Now: now}
		}
		slots[6].before = func(t *testing.T, c *Client) { do("SET", k.SerialLock("s"), slots[6].args.Token) }
	}
	// another runtime's prune removed the record while the job ran and
	// recorded the job as a false DirtyExit (a short form is sent back and
	// sent again in full form, which removes the entry)
	slots[7].outcome = ok
	slots[7].before = func(t *testing.T, c *Client) {
		do("DEL", k.Worker(slots[7].id))
		do("RPUSH", k.Failed(), falseDirtyExit(slots[7].id, "q", "Job"))
	}
	// a stale claim: the finish is not applied, the held job is resumed
	slots[8].outcome = func(res ClaimResult) Outcome { return Outcome{Seq: "999", Kind: OutcomeOK, Class: "Job", Now: now} }

	outcomes := make([]Outcome, len(slots))
	for i, s := range slots {
		res, err := c.Claim(ctx, s.args)
		if err != nil || res.Payload == nil {
			t.Fatalf("claim %d: %+v %v", i, res, err)
		}
		outcomes[i] = s.outcome(res)
		if s.before != nil {
			s.before(t, c)
		}
	}
	// the job the first claim takes has failed twice before, its counter
	// not in the index: the claims see it only after slot 0's retry put a
	// counter in the index
	first, err := protocol.DecodePayload([]byte(ruby(10)))
	if err != nil {
		t.Fatal(err)
	}
	do("SET", k.Attempts(protocol.AttemptsDigest(first)), "2")
	if paused {
		do("SET", k.PauseAll(), " True\n")
	}
	var out batchResult
	answer := func(ferr error, res ClaimResult, err error) string {
		return fmt.Sprintf("finish=%v claim=%s seq=%s resumed=%v attempts=%d paused=%v empty=%v err=%v",
			ferr, res.Payload, res.Seq, res.Resumed, res.Attempts, res.Paused, res.Empty, err)
	}
	switch mode {
	case "separate":
		for i, s := range slots {
			ferr := c.Finish(ctx, s.id, "h", s.src, outcomes[i])
			res, err := c.Claim(ctx, s.args)
			out.answers = append(out.answers, answer(ferr, res, err))
		}
	case "single":
		for i, s := range slots {
			out.answers = append(out.answers, answer(c.FinishAndClaim(ctx, s.id, "h", s.src, outcomes[i], s.args)))
		}
	default:
		batch := make([]*batchCall, len(slots))
		for i, s := range slots {
			ck, ca := c.claimKeysArgs(s.args)
			batch[i] = &batchCall{workerID: s.id, host: "h", src: s.src, o: outcomes[i], ck: ck, ca: ca, sources: claimSources(ca), done: make(chan struct{})}
		}
		c.batch.send(batch)
		for i, s := range slots {
			out.answers = append(out.answers, answer(parseFinishClaim(s.id, s.args, batch[i].reply, batch[i].err)))
		}
	}
	out.dump = dumpNamespace(t, c, ns)
	return out
}

// dumpNamespace prints every key of the namespace and its value, sorted,
// with the namespace replaced by <ns>; but resque-go:functions, which only
// the client that first loaded the server's function library writes.
func dumpNamespace(t *testing.T, c *Client, ns string) string {
	ctx := context.Background()
	keys, err := redis.Strings(c.do(ctx, "KEYS", ns+":*"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, key := range keys {
		if key == c.Keys().HotFunctions() {
			continue
		}
		typ, _ := redis.String(c.do(ctx, "TYPE", key))
		var v any
		switch typ {
		case "string":
			v, err = redis.String(c.do(ctx, "GET", key))
		case "list":
			v, err = redis.Strings(c.do(ctx, "LRANGE", key, 0, -1))
		case "set":
			var m []string
			m, err = redis.Strings(c.do(ctx, "SMEMBERS", key))
			sort.Strings(m)
			v = m
		case "zset":
			v, err = redis.Strings(c.do(ctx, "ZRANGE", key, 0, -1, "WITHSCORES"))
		case "hash":
			var m map[string]string
			m, err = redis.StringMap(c.do(ctx, "HGETALL", key))
			v = m
		}
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s %v\n", key, typ, v)
	}
	return strings.ReplaceAll(b.String(), ns, "<ns>")
}

// Slots finishing at once share script calls, and every job runs once.
func TestConcurrentFinishAndClaimShareScriptCalls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, err := New(Options{URL: os.Getenv("RESQUE_GO_TEST_REDIS"), Namespace: redistest.Namespace(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const jobs, slots = 3000, 16
	for i := range jobs {
		if err := c.Enqueue(ctx, "q", fmt.Appendf(nil, `{"class":"Job","args":[%d]}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for s := range slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("h:%d:q", s)
			a := ClaimArgs{WorkerID: id, Host: "h", Queues: []string{"q"}, Now: time.Now()}
			res, err := c.Claim(ctx, a)
			for err == nil && res.Payload != nil {
				mu.Lock()
				seen[string(res.Payload)]++
				mu.Unlock()
				var ferr error
				ferr, res, err = c.FinishAndClaim(ctx, id, "h", protocol.QueueSource("q"), Outcome{Seq: res.Seq, Class: "Job", Now: time.Now()}, a)
				if ferr != nil && !errors.Is(ferr, ErrRecordRemoved) {
					err = ferr
				}
			}
			if err != nil {
				t.Errorf("slot %d: %v", s, err)
			}
		}()
	}
	wg.Wait()
	if len(seen) != jobs {
		t.Errorf("%d distinct jobs ran, want %d", len(seen), jobs)
	}
	for p, n := range seen {
		if n != 1 {
			t.Errorf("%s ran %d times", p, n)
		}
	}
	if n, _ := c.Int(ctx, c.Keys().StatProcessed()); n != jobs {
		t.Errorf("stat:processed = %d, want %d", n, jobs)
	}
	// one finish-and-claim call per job
	calls, scripts := c.batch.calls.Load(), c.batch.scripts.Load()
	if calls != jobs || scripts >= calls {
		t.Errorf("%d finish-and-claim calls in %d script calls: no batch formed", calls, scripts)
	}
	t.Logf("%d finish-and-claim calls in %d script calls", calls, scripts)
}

// A batch of plain successes on a plain queue leaves each slot's record for
// its claim to replace or remove (claim_plain's keep): Redis and the
// answers must end as after single calls in full form, which remove each
// record before claiming, when the queue holds a job for every slot, runs
// out half-way or is empty, and when another runtime removed the last
// slot's record while its job ran (its claim then finds a job, or none).
func TestBatchPlainKeepsRecordsAsFullForm(t *testing.T) {
	t.Parallel()
	for _, left := range []int{0, 2, 5} {
		for _, removed := range []bool{false, true} {
			t.Run(fmt.Sprintf("left=%d/removed=%v", left, removed), func(t *testing.T) {
				t.Parallel()
				full := plainBatchFixture(t, false, left, removed)
				batched := plainBatchFixture(t, true, left, removed)
				if full.dump != batched.dump {
					t.Errorf("Redis after single calls in full form:\n%s\nafter one batch:\n%s", full.dump, batched.dump)
				}
				if fmt.Sprint(full.answers) != fmt.Sprint(batched.answers) {
					t.Errorf("answers: full %q, batched %q", full.answers, batched.answers)
				}
				if removed && strings.Contains(batched.dump, "DirtyExit") {
					t.Errorf("the false DirtyExit entry is still there:\n%s", batched.dump)
				}
			})
		}
	}
}

func plainBatchFixture(t *testing.T, batched bool, left int, removed bool) batchResult {
	ctx := context.Background()
	c, ns, do := ringTestClient(t, !batched)
	c.noCompact, c.noShort = true, true
	k := c.Keys()
	const slots = 4
	for i := 0; i < slots+left; i++ {
		do("RPUSH", k.Queue("q"), fmt.Sprintf(`{"class":"J","args":[%d]}`, i))
	}
	now := time.Unix(1_800_000_000, 0)
	src := protocol.QueueSource("q")
	args := make([]ClaimArgs, slots)
	outcomes := make([]Outcome, slots)
	for i := range args {
		args[i] = ClaimArgs{WorkerID: fmt.Sprintf("h:%d:q", i), Host: "h", Sources: []protocol.Source{src}, Now: now}
		res, err := c.Claim(ctx, args[i])
		if err != nil || res.Payload == nil {
			t.Fatalf("claim %d: %+v %v", i, res, err)
		}
		outcomes[i] = Outcome{Seq: res.Seq, Kind: OutcomeOK, Class: "J", Now: now}
	}
	if removed {
		id := args[slots-1].WorkerID
		do("DEL", k.Worker(id))
		do("RPUSH", k.Failed(), falseDirtyExit(id, "q", "J"))
	}
	var out batchResult
	answer := func(ferr error, res ClaimResult, err error) string {
		return fmt.Sprintf("finish=%v claim=%s seq=%s empty=%v err=%v", ferr, res.Payload, res.Seq, res.Empty, err)
	}
	if !batched {
		for i, a := range args {
			out.answers = append(out.answers, answer(c.FinishAndClaim(ctx, a.WorkerID, "h", src, outcomes[i], a)))
		}
	} else {
		batch := make([]*batchCall, slots)
		for i, a := range args {
			ck, ca := c.claimKeysArgs(a)
			batch[i] = &batchCall{workerID: a.WorkerID, host: "h", src: src, o: outcomes[i], ck: ck, ca: ca, sources: 1, done: make(chan struct{})}
		}
		c.batch.send(batch)
		for i, a := range args {
			out.answers = append(out.answers, answer(parseFinishClaim(a.WorkerID, a, batch[i].reply, batch[i].err)))
		}
	}
	out.dump = dumpNamespace(t, c, ns)
	return out
}

// falseDirtyExit is the failed entry Ruby's prune writes for the job it
// found in worker id's record (queue, class) when it removes the record of
// a worker it takes for dead.
func falseDirtyExit(id, queue, class string) string {
	return fmt.Sprintf(`{"failed_at":"x","payload":{"class":%q,"args":[]},"exception":"Resque::DirtyExit",`+
		`"error":"Job still being processed","backtrace":[],"worker":%q,"queue":%q}`, class, id, queue)
}
