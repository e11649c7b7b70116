package rdb

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Batching of FinishAndClaim (finish_claim_batch.lua).
//
// A script call has a fixed price in Redis (the call, parsing the request,
// writing the reply) that is larger than the commands a no-op job needs.
// The slots of a busy process finish jobs at nearly the same moments, so
// FinishAndClaim calls that arrive while an earlier one is on its way are
// sent together in one script call: the first caller sends its own at once
// (an idle process waits for nothing), and whoever arrives meanwhile rides
// on the next call. Each slot's finish and claim are the ones it would
// have run alone, and a batch that fails leaves every call in it safe to
// retry, as with one call (a finish already applied is not repeated, a job
// claimed is returned again).

// batchMax bounds the slots of one script call; batchLeaders is how many
// script calls a process has in flight at once. One: a slot that finishes
// while a call is on its way waits at most for that call, and batches are
// larger (16 busy slots: 7.7 jobs a call instead of 4.6 with two in
// flight), so each job costs Redis less: side by side, 4 processes x 16
// slots cost Redis 6-12% less per job on the 2-core VM and ran 70,400
// jobs/s against 61,400 on a 16-core machine (two runs of resque-go
// bench); a lone process's no-op throughput was 4-20% lower (2-core VM).
const (
	batchMax     = 32
	batchLeaders = 1
)

type batchCall struct {
	workerID, host string
	src            protocol.Source
	o              Outcome
	ck, ca         []any // the claim's keys and arguments
	sources        int   // how many sources the claim has (n in jobpath/claim.lua)
	reply          any   // {finish result, claim result}
	err            error
	done           chan struct{}
}

// plainSuccess reports whether the call's finish is a success with nothing
// but the counters to write, which the batch script takes in short form.
func (call *batchCall) plainSuccess(c *Client) bool {
	return c.events == nil && plainSuccess(call.o, call.src)
}

// shortForm reports whether the call's finish goes in short form, and
// whether with the caps' slots its job held (only where limited: the
// batch's claim describes the limits).
func (call *batchCall) shortForm(c *Client, limited bool) (short, holds bool) {
	if call.plainSuccess(c) {
		return true, false
	}
	if !limited || len(call.o.Limits) == 0 || c.events != nil {
		return false, false
	}
	o := call.o
	o.Limits = nil
	return plainSuccess(o, call.src), true
}

// appendShortHolds appends the short form's caps: how many, then each
// one's name and N.
func appendShortHolds(args []any, holds []LimitHold) []any {
	args = append(args, len(holds))
	for _, h := range holds {
		args = append(args, h.Name, h.Cap)
	}
	return args
}

// plainSuccess reports whether o, the end of a job from src, is a success
// with nothing but the counters and the record to write.
func plainSuccess(o Outcome, src protocol.Source) bool {
	return (o.Kind == "" || o.Kind == OutcomeOK) && o.Status == "" && o.AttemptsDigest == "" &&
		(o.Token == "" || !src.Serial) && o.UniqueID == "" && len(o.Tags) == 0 && len(o.Limits) == 0 &&
		o.DepsID == "" && o.Group == ""
}

type finishBatcher struct {
	c       *Client
	mu      sync.Mutex
	pending []*batchCall
	running int // leaders sending batches
	// calls answered and script calls sent, for tests and the curious
	calls, scripts atomic.Int64
}

// do sends call, alone or with others, and returns when it is answered.
func (b *finishBatcher) do(call *batchCall) {
	call.done = make(chan struct{})
	b.mu.Lock()
	b.pending = append(b.pending, call)
	if b.running >= batchLeaders {
		b.mu.Unlock()
		<-call.done
		return
	}
	b.running++
	b.mu.Unlock()
	b.lead(call)
	<-call.done
}

// lead sends batches while calls wait. A caller (own set) leads until its
// own call is answered and then hands what is left to a goroutine, so no
// slot waits on others' batches longer than its own.
func (b *finishBatcher) lead(own *batchCall) {
	for {
		b.mu.Lock()
		batch := b.takeLocked()
		if len(batch) == 0 {
			b.running--
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.send(batch)
		if own == nil {
			continue
		}
		select {
		case <-own.done:
			b.mu.Lock()
			if len(b.pending) == 0 {
				b.running--
				b.mu.Unlock()
				return
			}
			b.mu.Unlock()
			go b.lead(nil)
			return
		default:
		}
	}
}

// takeLocked takes the oldest pending call and the calls that can share
// its script call.
func (b *finishBatcher) takeLocked() []*batchCall {
	if len(b.pending) == 0 {
		return nil
	}
	first := b.pending[0]
	batch := []*batchCall{first}
	kept := b.pending[:0]
	for _, p := range b.pending[1:] {
		if len(batch) < batchMax && sameClaim(first, p) {
			batch = append(batch, p)
		} else {
			kept = append(kept, p)
		}
	}
	for i := len(kept); i < len(b.pending); i++ {
		b.pending[i] = nil
	}
	b.pending = kept
	return batch
}

// sameClaim reports whether two slots claim from the same sources: their
// claim keys and arguments are equal but for the slot's own (worker:<id>,
// worker id, lock token) and the claim's time (run_at, now and the record
// heads that embed run_at), which the batch takes from its first call.
func sameClaim(a, b *batchCall) bool {
	if a.sources != b.sources || len(a.ck) != len(b.ck) || len(a.ca) != len(b.ca) {
		return false
	}
	for i := range a.ck {
		if i != 1 && a.ck[i] != b.ck[i] {
			return false
		}
	}
	n := a.sources
	lnow := limitsNowIndex(a.ca, n) // the limits' time, to the microsecond
	for i := range a.ca {
		switch {
		case i <= 1, i == 3, i >= 5 && i < 5+n, i == 5+3*n, i == lnow:
			continue
		}
		if a.ca[i] != b.ca[i] {
			return false
		}
	}
	return true
}

// coreOutcome reports whether the finish of o sends no optional module's
// section (limits, dependencies, groups, tags, events): hot.go's core
// library can run it.
func (c *Client) coreOutcome(o Outcome) bool {
	return c.events == nil && len(o.Limits) == 0 && o.DepsID == "" && o.Group == "" && len(o.Tags) == 0
}

// coreClaim reports whether the claim arguments ca describe no limits:
// hot.go's core library can run the claim.
func coreClaim(ca []any) bool {
	return limitsNowIndex(ca, claimSources(ca)) < 0
}

// limitsNowIndex is the index in a claim's arguments ca (n sources) of
// the limits' time (source_limits.lua's now-ms), or -1 without limits.
func limitsNowIndex(ca []any, n int) int {
	for _, f := range ca[5+2*n : 5+3*n] {
		if s, ok := f.(string); ok && strings.HasPrefix(s, "L") {
			d, err := strconv.Atoi(s[1:])
			if err == nil {
				return d - 1
			}
		}
	}
	return -1
}

// send runs one script call for batch and answers every call in it.
func (b *finishBatcher) send(batch []*batchCall) {
	defer func() {
		for _, call := range batch {
			close(call.done)
		}
	}()
	b.calls.Add(int64(len(batch)))
	b.scripts.Add(1)
	c := b.c
	// the calls' own contexts do not cancel a call others share: each
	// waits for its answer (bounded by the connection's timeouts)
	ctx := context.Background()
	if len(batch) == 1 {
		call := batch[0]
		call.reply, call.err = c.finishClaimOne(ctx, call.workerID, call.host, call.src, call.o, call.ck, call.ca)
		return
	}
	first := batch[0]
	serial := false
	for i := 0; i < first.sources; i++ {
		if first.ca[5+2*first.sources+i] == "1" {
			serial = true
		}
	}
	fks, fas := make([][]any, len(batch)), make([][]any, len(batch))
	kinds := make([]byte, len(batch))
	nk, na := len(first.ck)+2, len(first.ca)
	// a short form frees caps' slots only where the claim describes the limits
	limited := limitsNowIndex(first.ca, first.sources) >= 0
	for i, call := range batch {
		if short, holds := call.shortForm(c, limited); short {
			kinds[i] = 's'
			fas[i] = []any{call.workerID, call.o.Seq}
			if serial {
				fas[i] = append(fas[i], call.ca[5+3*call.sources])
			}
			if holds {
				kinds[i] = 'c'
				fas[i] = appendShortHolds(fas[i], call.o.Limits)
			}
		} else {
			kinds[i] = 'f'
			fks[i], fas[i] = c.finishKeysArgs(call.workerID, call.host, call.src, call.o)
			fas[i] = append(append([]any{len(fks[i]), len(fas[i])}, fas[i]...), call.ca[5+3*call.sources])
		}
		nk += len(fks[i])
		na += len(fas[i])
	}
	args := make([]any, 0, 1+nk+na+4)
	args = append(args, nk)
	args = append(append(args, first.ck...), c.keys.StatProcessed(), c.keys.Failed())
	for _, fk := range fks {
		args = append(args, fk...)
	}
	args = append(args, first.ca...)
	for i := range batch {
		args = append(args, fas[i]...)
	}
	args = append(args, string(kinds), len(first.ck), len(first.ca), len(batch))
	// no limits, no events, no finish with an optional module's section:
	// the core library runs the call (hot.go)
	core := !limited && c.events == nil
	for i, call := range batch {
		core = core && (kinds[i] == 's' || c.coreOutcome(call.o))
	}
	run := c.evalHot
	if core {
		run = c.evalHotCore
	}
	replies, err := redis.Values(run(ctx, c.finishClaimBatch, args...))
	var wrongType any // the sources skipped for a key of another type, rarely
	if err == nil && len(replies) == batchStride*len(batch)+1 {
		replies, wrongType = replies[:len(replies)-1], replies[len(replies)-1]
	}
	if err == nil && len(replies) != batchStride*len(batch) {
		err = fmt.Errorf("rdb: finish and claim batch: %d replies for %d slots", len(replies), len(batch))
	}
	for i, call := range batch {
		if err != nil {
			call.err = err
			continue
		}
		r := replies[batchStride*i : batchStride*(i+1)]
		if kinds[i] != 'f' && isShortRefused(r[0]) {
			// rare: sent again alone, in full form
			call.reply, call.err = c.finishClaimOne(ctx, call.workerID, call.host, call.src, call.o, call.ck, call.ca)
			continue
		}
		call.reply = unflatten(r, wrongType)
	}
}

// batchStride is how many reply elements finish_claim_batch.lua gives a slot.
const batchStride = 6

// unflatten turns a slot's part of finish_claim_batch.lua's flat reply back
// into finish_claim.lua's {finish result, claim result}. wrongType, when
// not nil, lists the sources the claims skipped for a key of another type:
// the claim result is then jobpath/claim.lua's claim_wrongtype form.
func unflatten(r []any, wrongType any) any {
	switch r[1].(type) {
	case nil:
		if wrongType != nil {
			return []any{r[0], []any{nil, nil, nil, nil, nil, wrongType}}
		}
		return []any{r[0], nil}
	case int64:
		if n := r[1].(int64); n < 0 {
			return []any{r[0], n}
		}
	}
	if wrongType != nil {
		return []any{r[0], []any{r[1], r[2], r[3], r[4], r[5], wrongType}}
	}
	claim := []any{r[1], r[2], r[3]}
	for _, v := range r[4:] {
		if v == nil {
			break
		}
		claim = append(claim, v)
	}
	return []any{r[0], claim}
}

// finishClaimOne runs finish_claim.lua for one slot: a plain success in
// short form (1 key, 1 argument), any other end in jobpath/finish.lua's, as is a
// short form the script sent back (4: another runtime removed the slot's
// record while the job ran, and only the full form has what cleaning up
// after it needs). It returns the reply as {finish result, claim result}.
func (c *Client) finishClaimOne(ctx context.Context, workerID, host string, src protocol.Source, o Outcome, ck, ca []any) (any, error) {
	// the short form finishes the claim's own worker:<id>
	short := !c.noShort && c.events == nil && plainSuccess(o, src) && len(ca) > 3 && ca[3] == any(workerID)
	compact := short && !c.noCompact && plainQueueClaim(ck, ca)
	for {
		var args []any
		if compact {
			args = compactFinishClaimArgs(c.claimK.statProcessed, o.Seq, ck, ca)
		} else {
			var fk, fa []any
			if short {
				fk, fa = []any{c.claimK.statProcessed}, []any{o.Seq}
			} else {
				fk, fa = c.finishKeysArgs(workerID, host, src, o)
			}
			args = finishClaimArgs(fk, fa, ck, ca)
		}
		run := c.evalHot
		if c.coreOutcome(o) && coreClaim(ca) {
			run = c.evalHotCore
		}
		v, err := redis.Values(run(ctx, c.finishClaim, args...))
		if err != nil {
			return nil, err
		}
		var wrongType any // the sources skipped for a key of another type, rarely
		if len(v) == batchStride+1 {
			v, wrongType = v[:batchStride], v[batchStride]
		}
		if len(v) != batchStride {
			return nil, fmt.Errorf("rdb: finish and claim: reply has %d elements", len(v))
		}
		if compact && isCompactRefused(v[0]) {
			// the sequence moved: nothing was written
			compact = false
			continue
		}
		if short && isShortRefused(v[0]) {
			short, compact = false, false
			continue
		}
		return unflatten(v, wrongType), nil
	}
}

// plainQueueClaim reports whether a claim's sources are all plain queues
// (no serial source, no ring): finish_claim.lua's compact form can carry it.
func plainQueueClaim(ck, ca []any) bool {
	n := claimSources(ca)
	if len(ck) != 4+n || len(ca) != 8+3*n {
		return false // rings' descriptions follow
	}
	for _, f := range ca[5+2*n : 5+3*n] {
		if f != any("") {
			return false
		}
	}
	return true
}

// compactFinishClaimArgs lays out finish_claim.lua's compact form (see its
// header) from a plain success's sequence and a plain-queue claim's keys
// and arguments (claimKeysArgs): what the claim does not read is left out.
func compactFinishClaimArgs(statProcessed any, seq string, ck, ca []any) []any {
	n := claimSources(ca)
	args := make([]any, 0, 1+5+n+7+2*n)
	args = append(args, 0, statProcessed)           // keys as arguments (see the script)
	args = append(args, ck[:4+n]...)                // pause, worker, sequences, attempts index, queues
	args = append(args, seq)                        // the claim sequence
	args = append(args, ca[1:5+2*n]...)             // now, status prefix, worker id, attempts prefix, heads, tails
	return append(args, ca[7+3*n], compactFormMark) // unique prefix
}

// compactFormMark ends finish_claim.lua's compact form.
const compactFormMark = "c"

// isCompactRefused reports whether finish_claim.lua refused a compact form
// because the claim sequence had moved (5: nothing was written; the short
// form records that and claims). A removed record is 4, as for the short
// form.
func isCompactRefused(v any) bool {
	n, ok := v.(int64)
	return ok && n == 5
}

// isShortRefused reports whether a finish result is 4: a short form that
// found the slot's record removed, wrote nothing and wants the full form.
func isShortRefused(v any) bool {
	n, ok := v.(int64)
	return ok && n == 4
}

// finishClaimArgs lays out finish_claim.lua's keys and arguments.
func finishClaimArgs(fk, fa, ck, ca []any) []any {
	args := make([]any, 0, 3+len(fk)+len(ck)+len(fa)+len(ca))
	args = append(args, len(fk)+len(ck))
	args = append(append(args, fk...), ck...)
	return append(append(append(args, fa...), ca...), len(fk), len(fa))
}
