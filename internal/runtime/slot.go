package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"
	"github.com/resque-go/resque-go/worker"
)

// pausePoll is how often a paused slot re-checks pause-all-workers.
const pausePoll = time.Second

// slot is one worker id: it claims, runs and finishes one job at a time.
type slot struct {
	w     *Worker
	id    string
	token string // its serial-lock token (32 hex)

	claims rdb.ClaimCache // its claims' keys and arguments, kept between claims

	mu      sync.Mutex
	cur     *rdb.ClaimResult
	cancel  context.CancelCauseFunc
	settled bool // the running job's end was already recorded by abandonJob
	// cancelled: a cancel request stopped the running job; pending: one
	// for a claim whose job has not started yet (cancel.go)
	cancelled bool
	pending   *protocol.Cancel
	class     string    // the running job's class, for Procline
	since     time.Time // when it started
	// holds: the caps' slots the running job holds (limits.go); gate,
	// its part of the worker's limitGate (guarded by the gate's lock)
	holds []rdb.LimitHold
	gate  slotGate
}

func (s *slot) loop(ctx context.Context) {
	w := s.w
	var b backoff
	// next is the claim that rode on the previous job's finish. A claimed
	// job is always run (or requeued), even when the loop is stopping.
	var next *rdb.ClaimResult
	for ctx.Err() == nil || next != nil && next.Payload != nil {
		// res is the claim to act on: the one that rode on the last finish,
		// or a new one (only that one is allocated here)
		var res *rdb.ClaimResult
		var queues []string
		// changed is closed when a queue is paused or resumed after queues
		// was filtered
		var changed <-chan struct{}
		if next != nil {
			res, next = next, nil
		} else {
			if w.paused.Load() {
				select {
				case <-w.resumed():
				case <-ctx.Done():
				}
				continue
			}
			var err error
			queues, err = w.queues.current(ctx)
			if err != nil {
				w.log.Warn().Err(err).Msg("cannot read queue list; retrying")
				service.Sleep(ctx, b.next())
				continue
			}
			if len(queues) == 0 {
				service.Sleep(ctx, w.cfg.QueueRefresh)
				continue
			}
			changed = w.pauses.wait()
			if queues = w.pauses.filter(queues); len(queues) == 0 {
				if w.cfg.Drain {
					return // every queue is paused: nothing to take, as for Ruby with resque-pause
				}
				// every queue is paused: wait for a resume (or a new queue
				// of a glob) without claiming
				t := time.NewTimer(w.cfg.QueueRefresh)
				select {
				case <-changed:
				case <-t.C:
				case <-ctx.Done():
				}
				t.Stop()
				continue
			}
			claimed, paused, err := s.claim(queues)
			if paused {
				continue
			}
			if err != nil {
				d := b.next()
				w.log.Warn().Err(err).Str("worker_id", s.id).Dur("retry_in", d).Msg("claim failed; retrying")
				service.Sleep(ctx, d)
				continue
			}
			b.reset()
			res = &claimed
		}
		if len(res.WrongType) > 0 {
			w.noteWrongType(res.WrongType)
		}
		if res.Paused != w.pausedAll.Load() {
			w.pausedAll.Store(res.Paused) // what readiness reports
		}
		switch {
		case res.Paused:
			service.Sleep(ctx, pausePoll)
		case res.Empty:
			if len(w.serial) > 0 {
				// a serial queue may be locked by another slot while it has
				// jobs: its waker would wake us at once, again and again
				w.notify.hold(w.cfg.SerialPoll, w.serial)
			}
			if w.cfg.Drain {
				if len(w.serial) == 0 || s.drained(ctx, queues) {
					return // Ruby's INTERVAL=0: the queues are empty, this slot is done
				}
				// a serial queue locked by another slot still has jobs
				service.Sleep(ctx, w.cfg.SerialPoll)
				continue
			}
			if queues == nil {
				changed = w.pauses.wait()
				var err error
				if queues, err = w.queues.current(ctx); err != nil {
					w.log.Warn().Err(err).Msg("cannot read queue list; retrying")
					service.Sleep(ctx, b.next())
					continue
				}
			}
			queues = w.pauses.filter(queues)
			if len(queues) > 0 {
				s.idle(ctx, queues, changed)
			}
		default:
			next = s.run(res)
		}
	}
}

// drained reports whether every queue of the list is empty: an empty claim
// does not say so when a serial queue with jobs was skipped because another
// slot holds its lock. A Redis error counts as not drained (the next claim
// tries again).
func (s *slot) drained(ctx context.Context, queues []string) bool {
	if queues == nil {
		var err error
		if queues, err = s.w.queues.current(ctx); err != nil {
			return false
		}
	}
	queues = s.w.pauses.filter(queues)
	callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lens, err := s.w.client.QueueLens(callCtx, queues)
	if err != nil {
		return false
	}
	for _, n := range lens {
		if n > 0 {
			return false
		}
	}
	return true
}

// claim runs one claim unless the worker is paused, holding the worker's
// claim lock shared so that Pause can wait for claims in flight.
func (s *slot) claim(queues []string) (res rdb.ClaimResult, paused bool, err error) {
	w := s.w
	w.claimMu.RLock()
	defer w.claimMu.RUnlock()
	if w.paused.Load() {
		return res, true, nil
	}
	if !w.reserveJob() {
		return res, true, nil // MaxJobs reached: the worker is stopping
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err = w.client.Claim(ctx, s.claimArgs(queues))
	if err != nil || res.Paused || res.Empty {
		w.unreserveJob()
		s.unreserveLimits()
	}
	return res, false, err
}

// idle waits for work: a blocking wake-up on the queues, or a poll interval.
// With wake-ups, only the process's first slot also comes back every
// QueueRefresh when nothing woke it, to re-read a glob's queue list and to
// claim what a missed wake-up left waiting; the other slots wait for a
// wake-up alone, so an idle process costs Redis the same whatever its slot
// count.
func (s *slot) idle(ctx context.Context, queues []string, changed <-chan struct{}) {
	w := s.w
	if w.cfg.Polling || len(w.cfg.Sources) > 0 || !w.notify.watch(ctx, queues) {
		service.Sleep(ctx, w.cfg.Interval)
		return
	}
	since := time.Now()
	// a queue paused or resumed ends the wait: the list to claim from changed
	for !w.notify.wait(ctx, w.cfg.QueueRefresh, changed) && ctx.Err() == nil {
		if s != w.slots[0] {
			continue
		}
		// the first slot: follow the queue list, and claim after a while
		// in case a wake-up was missed (a waker reconnecting)
		now, err := w.queues.current(ctx)
		now = w.pauses.filter(now)
		if err != nil || !slices.Equal(now, queues) || time.Since(since) >= safetyClaim {
			return
		}
		w.notify.watch(ctx, now)
	}
}

// safetyClaim is how long the first slot of an idle process waits without a
// wake-up before it claims anyway.
const safetyClaim = 30 * time.Second

// run executes a claimed job and records its end. It returns the next
// job's claim when the end was recorded together with it (nil otherwise).
func (s *slot) run(cur *rdb.ClaimResult) *rdb.ClaimResult {
	w := s.w
	res := *cur
	start := time.Now()
	log := &jobLog{s: s, queue: res.Queue}
	if res.Resumed {
		log.get().Warn().Msg("resuming a job this worker id already held")
	}
	p, decodeErr := protocol.DecodePayload(res.Payload)
	if _, _, uerr := protocol.ParseUnique(res.Payload); decodeErr == nil && uerr != nil {
		// a "unique" field that cannot be honoured is a bad payload, as
		// bad args are; settle still releases a uid the claim marked
		decodeErr = fmt.Errorf("%w: payload %v", protocol.ErrBadPayload, uerr)
	}
	w.countClaim(res, p, start)
	switch {
	case w.gate != nil && p != nil:
		s.hold(res, p.Class)
	case w.gate != nil:
		s.hold(res, "") // the reservation is settled all the same
	case w.limits != nil && p != nil:
		s.hold(res, p.Class)
	}
	if w.jobsCtx.Err() != nil {
		s.interrupted(res, errShutdown)
		return nil
	}
	if decodeErr != nil {
		s.fixRecord(res)
		return s.settle(res, p, &result{fail: s.failure(res, protocol.ExcBadPayload, decodeErr.Error(), []string{})}, time.Since(start), log)
	}
	prior := s.failedAttempts(p, res, false)
	job := worker.NewJob(worker.Job{Queue: res.Queue, Class: p.Class, ID: p.ID, Args: p.Args, Payload: res.Payload,
		WorkerID: s.id, Attempt: prior + 1}, p.Fields)
	parent := w.jobsCtx
	var endSpan func(outcome, exception, message string) // nil: no tracing
	if w.cfg.Tracer != nil {
		parent, endSpan = w.cfg.Tracer.StartAttempt(parent, job)
	}
	h, herr := w.cfg.Registry.Resolve(job)
	if herr != nil {
		exc, msg, _ := worker.Describe(herr)
		r := &result{fail: s.failure(res, exc, msg, []string{}), prior: prior}
		next := s.settle(res, p, r, time.Since(start), log)
		traced(endSpan, r)
		return next
	}
	if w.debugOn() {
		log.get().Debug().Str("class", p.Class).Str("job_id", p.ID).Int("attempt", job.Attempt).Msg("job started")
	}
	if w.fork != nil {
		h = w.forkJob
	}
	stopLock := s.keepLock(res)
	err, cause := s.invoke(parent, h, job, cur)
	stopLock()
	if err != nil && errors.Is(cause, errShutdown) {
		if _, isResched := asReschedule(err); !isResched {
			s.interrupted(res, err)
			if endSpan != nil && w.cfg.DirtyExitOnTerm {
				endSpan(string(rdb.OutcomeFail), protocol.ExcDirtyExit, err.Error())
			} else if endSpan != nil {
				endSpan("requeued", "", "")
			}
			return nil
		}
	}
	r := s.classify(res, p, err, cause, prior)
	r.prior = max(r.prior, prior)
	next := s.settle(res, p, r, time.Since(start), log)
	traced(endSpan, r)
	return next
}

// traced ends an attempt's span (end nil: tracing is off) with its result.
func traced(end func(outcome, exception, message string), r *result) {
	if end == nil {
		return
	}
	kind, exc, msg := r.kind, "", ""
	if kind == "" {
		kind = rdb.OutcomeFail
	}
	if r.fail != nil {
		exc, msg = r.fail.Exception, r.fail.Error
	}
	end(string(kind), exc, msg)
}

// result is a job's end before it is written.
type result struct {
	kind    rdb.OutcomeKind
	fail    *protocol.Failure // fail and retry: the entry's content
	delay   time.Duration     // retry, reschedule
	discard string
	// rateLimited: a reschedule the handler asked for as RateLimited; the
	// attempts counter keeps the failures before it
	rateLimited bool
	attempt     int // fail, retry: the number of the attempt that failed (1 = first)
	prior       int // attempts that failed before this one
}

// classify turns a handler's return into a result, applying the retry policy.
func (s *slot) classify(res rdb.ClaimResult, p *protocol.Payload, err error, cause error, prior int) *result {
	w := s.w
	if err == nil {
		return &result{kind: rdb.OutcomeOK}
	}
	if r, ok := asReschedule(err); ok {
		return &result{kind: rdb.OutcomeReschedule, delay: r.After}
	}
	if r, ok := asRateLimited(err); ok && cause == nil {
		// put back for later like a reschedule; no failed attempt is
		// counted, and the earlier ones are kept (read now for a Ruby-form
		// job the claim did not look up, whose counter would go otherwise)
		if res.Attempts < 0 && p.RubyShaped() {
			prior = s.failedAttempts(p, res, true)
		}
		return &result{kind: rdb.OutcomeReschedule, delay: max(r.After, time.Second), rateLimited: true, prior: prior}
	}
	if d, ok := asDiscard(err); ok {
		return &result{kind: rdb.OutcomeDiscard, discard: d.Reason}
	}
	exc, msg, bt := worker.Describe(err)
	var te timeoutError
	var jc jobCancelled
	if errors.As(cause, &te) {
		exc, msg = protocol.ExcTimeout, te.Error()+": "+msg
	} else if errors.Is(cause, errUSR1) {
		exc, msg = protocol.ExcCancelled, errUSR1.Error()
	} else if errors.As(cause, &jc) {
		exc, msg = protocol.ExcCancelled, jc.Error()
	}
	fail := s.failure(res, exc, msg, bt)
	if errors.As(cause, &jc) && !jc.retry {
		// a job an operator cancelled is not run again unless asked
		return &result{kind: rdb.OutcomeFail, fail: fail, attempt: prior + 1, prior: prior}
	}
	policy := w.cfg.policyFor(p.Class)
	if res.Attempts < 0 && p.RubyShaped() {
		// a Ruby-form job the claim did not look up (written with spaces
		// or args first): read its counter now, or it would retry forever
		prior = s.failedAttempts(p, res, true)
	}
	attempt := prior + 1
	if attempt >= policy.MaxAttempts {
		return &result{kind: rdb.OutcomeFail, fail: fail, attempt: attempt, prior: prior}
	}
	delay := policy.Backoff.Delay(attempt, w.cfg.Rand)
	if r, ok := asRetry(err); ok && r.After > 0 {
		delay = r.After
	}
	return &result{kind: rdb.OutcomeRetry, fail: fail, delay: delay, attempt: attempt, prior: prior}
}

// failedAttempts is how many attempts of the job failed before this one: the
// larger of the payload's failCount (resque-v3) and the attempt counter of a
// job in Ruby's form, which survives promoters and requeuers that rebuild
// the job from class and args (resque-scheduler, resque-web). The claim
// reads the counter with the job while any counter exists; with fetch, and
// a claim that did not, it is read here. When Redis cannot say, the
// payload's count stands.
func (s *slot) failedAttempts(p *protocol.Payload, res rdb.ClaimResult, fetch bool) int {
	n := res.Attempts
	if n < 0 && (fetch || res.Resumed) && p.RubyShaped() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		if n, err = s.w.client.Attempts(ctx, protocol.AttemptsDigest(p)); err != nil {
			s.w.log.Warn().Err(err).Str("worker_id", s.id).Str("class", p.Class).Msg("cannot read the attempt counter; using the payload's failCount")
		}
	}
	return max(n, p.FailCount)
}

// invoke runs the handler with the job's context (under parent: the
// workers' jobs context, or the attempt's span's) and turns a panic into an
// error. It returns the handler's error and the context's cancel cause.
func (s *slot) invoke(parent context.Context, h worker.HandlerFunc, job *worker.Job, res *rdb.ClaimResult) (err error, cause error) {
	w := s.w
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	if w.cfg.JobTimeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, w.cfg.JobTimeout, timeoutError{limit: w.cfg.JobTimeout.String()})
		defer stop()
	}
	s.mu.Lock()
	s.cur, s.cancel, s.settled, s.class, s.since = res, cancel, false, job.Class, time.Now()
	s.cancelled = false
	if s.pending != nil {
		s.takePending()
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cur, s.cancel = nil, nil
		s.mu.Unlock()
	}()
	err = worker.Call(ctx, h, job)
	return err, context.Cause(ctx)
}

func (s *slot) failure(res rdb.ClaimResult, exc, msg string, bt []string) *protocol.Failure {
	return &protocol.Failure{
		FailedAt: s.w.cfg.Now(), Payload: res.Payload, Exception: exc, Error: msg,
		Backtrace: bt, Worker: s.id, Queue: res.Queue, ProcessedBy: s.w.cfg.Hostname,
	}
}

// jobLog is a job's logger (the slot's worker id and the job's queue),
// built on first use: a success at the default level logs nothing, and
// building it for every job was a tenth of a busy worker's allocations.
type jobLog struct {
	s     *slot
	queue string
	l     *zerolog.Logger
}

func (j *jobLog) get() *zerolog.Logger {
	if j.l == nil {
		l := j.s.w.log.With().Str("worker_id", j.s.id).Str("queue", j.queue).Logger()
		j.l = &l
	}
	return j.l
}

// fixRecord rewrites worker:<id> when the claim embedded a payload that
// looked like a JSON object but is not valid JSON, or one that is not
// valid UTF-8 (the claim script's JSON encoder keeps such bytes), so
// resque-web and other readers always find valid JSON there. Rare: only
// garbage payloads get here.
func (s *slot) fixRecord(res rdb.ClaimResult) {
	raw := res.Payload
	objectLike := len(raw) > 0 && raw[0] == '{' && raw[len(raw)-1] == '}'
	if utf8.Valid(raw) && (!objectLike || json.Valid(raw)) {
		return // the claim embedded it as valid JSON: as is, or as a string
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rec := protocol.EncodeSourceRecord(sourceOf(res), s.w.cfg.Now(), raw)
	if err := s.w.client.ReplaceRecord(ctx, s.id, rec); err != nil {
		s.w.log.Warn().Err(err).Str("worker_id", s.id).Msg("cannot rewrite the worker record of a garbage payload")
	}
}

// reregister puts the slot's id back in the workers set at once, after
// another runtime's prune removed it (the heartbeat would only do it later).
func (s *slot) reregister() {
	w := s.w
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := w.client.Register(ctx, s.id, w.cfg.Now(), w.cfg.HeartbeatInterval, false); err != nil {
		w.log.Warn().Err(err).Str("worker_id", s.id).Msg("cannot register again; the next heartbeat will")
	}
}

// finishAndClaim records a job's end and, unless the worker is stopping or
// paused, claims the next job in the same round trip.
func (s *slot) finishAndClaim(ctx context.Context, src protocol.Source, o rdb.Outcome) (finishErr error, next *rdb.ClaimResult, err error) {
	w := s.w
	w.claimMu.RLock()
	defer w.claimMu.RUnlock()
	if w.loopCtx.Err() == nil && !w.paused.Load() && w.reserveJob() {
		queues, qerr := w.queues.current(ctx)
		if queues = w.pauses.filter(queues); qerr == nil && len(queues) > 0 {
			ferr, res, err := w.client.FinishAndClaim(ctx, s.id, w.cfg.Hostname, src, o,
				s.claimArgs(queues))
			if err != nil || res.Paused || res.Empty {
				w.unreserveJob()
				s.unreserveLimits()
			}
			if err != nil {
				return nil, nil, err
			}
			return ferr, &res, nil
		}
		w.unreserveJob()
	}
	ferr := w.client.Finish(ctx, s.id, w.cfg.Hostname, src, o)
	if ferr != nil && !errors.Is(ferr, rdb.ErrNotOwned) && !errors.Is(ferr, rdb.ErrRecordRemoved) {
		return nil, nil, ferr
	}
	return ferr, nil, nil
}

// keepLock refreshes a serial source's lock every third of its time to
// live while the job runs; the returned function stops it.
func (s *slot) keepLock(res rdb.ClaimResult) func() {
	if !res.Source.Serial {
		return func() {}
	}
	// the goroutine keeps the queue's name alone (a res it captured would
	// be allocated for every job, serial or not)
	queue := res.Source.Queue
	w := s.w
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(w.cfg.LockTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			callCtx, cancelCall := context.WithTimeout(ctx, w.cfg.LockTTL/3)
			held, err := w.client.RefreshLock(callCtx, queue, s.token, w.cfg.LockTTL)
			cancelCall()
			if err == nil && !held {
				w.log.Warn().Str("worker_id", s.id).Str("queue", queue).Msg("serial lock lost while the job runs (it expired: the job outlived the lock's time to live without a refresh)")
			}
		}
	}()
	return func() { cancel(); <-done }
}

// claimArgs claims from queues in order, serial ones under their lock.
func (s *slot) claimArgs(queues []string) rdb.ClaimArgs {
	w := s.w
	a := rdb.ClaimArgs{WorkerID: s.id, Host: w.cfg.Hostname, Queues: queues, Now: w.cfg.Now(), Cache: &s.claims, Limits: w.limits}
	if len(w.cfg.Sources) > 0 {
		a.Limits = nil // a mass pool has caps of its own
		a.Queues, a.Sources = nil, w.cfg.Sources
		return a
	}
	if w.gate != nil {
		a.Limits = w.gate.reserve(context.Background(), w, s, queues)
	}
	if len(w.serial) > 0 {
		a.Sources = protocol.QueueSources(queues)
		for i := range a.Sources {
			a.Sources[i].Serial = w.serial[a.Sources[i].Queue]
		}
		a.Token, a.LockTTL = s.token, w.cfg.LockTTL
	}
	return a
}

// sourceOf is where a claimed job came from (and goes back to).
func sourceOf(res rdb.ClaimResult) protocol.Source {
	if res.Source.Queue == "" {
		return protocol.QueueSource(res.Queue)
	}
	return res.Source
}

// dueAt rounds a delay up to whole seconds, the delayed queue's resolution.
// A handler's delay past protocol.MaxDelay is filed 100 years out (and a
// larger one would overflow here).
func dueAt(now time.Time, d time.Duration) int64 {
	return now.Add(min(d, protocol.MaxDelay) + time.Second - 1).Unix()
}

// interrupted handles a job stopped by a hard stop: requeue it at the head of
// its queue, or record a DirtyExit when so configured.
func (s *slot) interrupted(res rdb.ClaimResult, cause error) {
	// the requeue frees the job's caps' slots (it is claimed again)
	defer s.unhold()
	w := s.w
	if s.isSettled() {
		return
	}
	if w.cfg.DirtyExitOnTerm {
		p, _ := protocol.DecodePayload(res.Payload)
		fail := s.failure(res, protocol.ExcDirtyExit, "job interrupted by worker shutdown: "+cause.Error(), []string{})
		s.settle(res, p, &result{kind: rdb.OutcomeFail, fail: fail}, 0, &jobLog{s: s, queue: res.Queue})
		return
	}
	end := requeueEnd(res, s.holds, w.cfg.Now())
	err := w.retryRedis(context.Background(), "requeue", func(ctx context.Context) error {
		return w.client.Requeue(ctx, s.id, sourceOf(res), res.Payload, s.token, end)
	})
	switch {
	case err == nil:
		w.log.Info().Str("worker_id", s.id).Str("queue", res.Queue).Msg("interrupted job requeued")
		if w.cfg.OnFinish != nil {
			w.cfg.OnFinish(Finished{WorkerID: s.id, Queue: res.Queue, Payload: res.Payload, Requeued: true, Outcome: "requeued"})
		}
	case errors.Is(err, rdb.ErrNotOwned):
	default:
		w.log.Error().Err(err).Str("worker_id", s.id).Msg("could not requeue the interrupted job; it will be recovered by the next worker")
	}
}

// requeueEnd is what a requeue of the job claimed as res settles: the
// caps' slots it holds, and its event (sent only while events are on).
func requeueEnd(res rdb.ClaimResult, holds []rdb.LimitHold, now time.Time) rdb.JobEnd {
	e := rdb.JobEnd{Limits: holds, Seq: res.Seq, Queue: res.Queue, Now: now, Attempt: max(res.Attempts, 0) + 1}
	if p, err := protocol.DecodePayload(res.Payload); err == nil && p != nil {
		e.JobID, e.Class = p.ID, p.Class
		e.Attempt = max(e.Attempt, p.FailCount+1)
	}
	return e
}

func (s *slot) isSettled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settled
}

// cancelJob cancels the running job's context, if any.
func (s *slot) cancelJob(cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		s.cancel(cause)
	}
}

// abandonJob is called when a hard stop times out: the job still running is
// requeued (or marked DirtyExit) now; whatever its handler does later is not
// recorded.
func (s *slot) abandonJob() {
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	if cur == nil {
		return
	}
	s.interrupted(*cur, errShutdown)
	s.mu.Lock()
	s.settled = true
	s.mu.Unlock()
}
