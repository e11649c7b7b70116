package runtime

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// settle writes a job's end (retrying while Redis is unreachable) and
// reports it. It returns the next job's claim when that rode on the
// finish.
func (s *slot) settle(res rdb.ClaimResult, p *protocol.Payload, r *result, took time.Duration, log *jobLog) *rdb.ClaimResult {
	if s.isSettled() {
		return nil
	}
	now := s.w.cfg.Now()
	o, note := outcomeOf(res, p, *r, now, s.token, protocol.NewJobID)
	// for the events stream (when on) and the tags' indexes
	o.Attempt, o.Duration, o.Tags = max(r.attempt, r.prior+1), took, p.Tags()
	o.Cancelled = r.fail != nil && r.fail.Exception == protocol.ExcCancelled
	o.Limits = s.holds
	defer s.unhold()
	o.DepsID, o.Group = depsOf(p, s.w.depsOn.Load())
	if note != nil {
		log.get().Warn().Err(note.err).Msg(note.msg)
	}
	next, recorded := s.record(res, p, o, log)
	if recorded {
		s.report(res, p, r, o, took, now, log)
	}
	return next
}

// outcomeNote is a warning outcomeOf leaves for settle to log.
type outcomeNote struct {
	msg string
	err error
}

// outcomeOf builds the record of a job's end from its claim, its payload
// and its result: what the finish writes, pushes back and counts. It
// writes nothing and logs nothing (note says what to warn about), so that
// every case is table-tested; newID gives a retry its new job id where it
// needs one.
func outcomeOf(res rdb.ClaimResult, p *protocol.Payload, r result, now time.Time, token string, newID func() string) (rdb.Outcome, *outcomeNote) {
	if r.kind == "" {
		r.kind = rdb.OutcomeFail
	}
	o := rdb.Outcome{Seq: res.Seq, Kind: r.kind, Now: now, JobID: p.ID, Status: protocol.FinishedJobStatus(p, string(r.kind)), Class: p.Class,
		Token: token}
	if u, ok, _ := protocol.ParseUnique(res.Payload); ok {
		o.UniqueID = u.UID
	}
	if res.StatQueue != res.Queue {
		o.StatQueue = res.StatQueue
	}
	if p.Class != "" && (r.kind == rdb.OutcomeRetry || r.prior > 0 || p.FailCount > 0 || res.Attempts < 0 && p.RubyShaped()) {
		// a retry sets the job's attempt counter; any other end of a job
		// that failed before closes it (a job that never failed has none:
		// nothing to write, the common case costs nothing)
		o.AttemptsDigest = protocol.AttemptsDigest(p)
	}
	if r.delay > 0 && protocol.IsMassQueueName(res.Queue) {
		// A mass job's list is no Resque queue: from the delayed queue it
		// would be promoted to queue:<list>, which no worker serves. It goes
		// back to its own list (its source's FIFO, its batch) at once.
		r.delay = 0
	}
	switch r.kind {
	case rdb.OutcomeFail:
		o.Entry = r.fail.Encode()
	case rdb.OutcomeRetry:
		return retryOutcome(o, res, p, r, now, newID)
	case rdb.OutcomeReschedule:
		o.Push = res.Payload
		if r.delay > 0 {
			item, err := protocol.DelayedItem(res.Payload, res.Queue)
			if err != nil {
				return o, &outcomeNote{"reschedule cannot wait in the delayed queue; requeued at once", err}
			}
			o.DueAt, o.Push = dueAt(now, r.delay), item
		}
		if r.rateLimited && o.AttemptsDigest != "" && r.prior > 0 {
			// not a failed attempt, and not the end of the failed ones
			o.Attempts = r.prior
			o.AttemptsTTL = time.Duration(max(o.DueAt-now.Unix(), 0))*time.Second + protocol.AttemptsTTL
		}
	}
	return o, nil
}

// retryOutcome fills o, the end of a job that is retried: the retries
// entry, the retry (its payload, or the delayed item when it waits) and
// the attempt counter.
func retryOutcome(o rdb.Outcome, res rdb.ClaimResult, p *protocol.Payload, r result, now time.Time, newID func() string) (rdb.Outcome, *outcomeNote) {
	// resque-v3 gives a retry a new id (its status key says "retried" and
	// the new one "waiting"); php-resque's producer holds the id to read
	// the job's status, so the id follows the job to its final outcome.
	id := p.ID
	if p.IsMonitored || id == "" {
		id = newID()
	}
	next, err := protocol.RetryOf(p, r.attempt, id, now)
	if err != nil { // cannot happen for a payload that decoded; never lose the job
		o.Kind, o.Entry = rdb.OutcomeFail, r.fail.Encode()
		return o, nil
	}
	var note *outcomeNote
	fail := *r.fail // the entry says where the retry went
	o.Push, fail.RetriedBy = next, id
	if p.RubyShaped() {
		fail.RetriedBy = protocol.RetriedToQueue(res.Queue)
	}
	if r.delay > 0 {
		if item, err := protocol.DelayedItem(next, res.Queue); err == nil {
			o.DueAt, o.Push = dueAt(now, r.delay), item
			fail.RetriedBy = protocol.DelayedMember(o.DueAt)
		} else { // not an object: cannot happen for a payload that decoded
			note = &outcomeNote{"retry cannot wait in the delayed queue; requeued at once", err}
		}
	}
	o.Entry = fail.Encode()
	o.Attempts, o.AttemptsTTL = r.attempt, time.Duration(max(o.DueAt-now.Unix(), 0))*time.Second+protocol.AttemptsTTL
	if p.IsMonitored {
		o.NewJobID = id
	}
	return o, note
}

// record writes o with the next claim, retrying while Redis is
// unreachable. recorded is false when this slot's write is not the job's
// end (logged): another worker recovered the job, or Redis refused.
func (s *slot) record(res rdb.ClaimResult, p *protocol.Payload, o rdb.Outcome, log *jobLog) (next *rdb.ClaimResult, recorded bool) {
	inDoubt := false // an attempt failed after it may have run
	err := s.w.retryRedis(context.Background(), "finish", func(ctx context.Context) error {
		next = nil
		ferr, claimed, err := s.finishAndClaim(ctx, sourceOf(res), o)
		if err != nil {
			// a key of the wrong type is found before anything is written
			inDoubt = inDoubt || !errors.Is(err, rdb.ErrKeyType)
			return err
		}
		next = claimed
		return ferr
	})
	switch {
	case errors.Is(err, rdb.ErrRecordRemoved):
		log.get().Warn().Str("class", p.Class).Bool("dirty_exit_removed", errors.Is(err, rdb.ErrDirtyExitRemoved)).
			Msg("another runtime unregistered this worker id while its job ran; the real outcome is recorded and the id registered again")
		s.reregister()
	case errors.Is(err, rdb.ErrNotOwned) && inDoubt:
		// an earlier attempt ran before its reply was lost: the end is recorded
	case errors.Is(err, rdb.ErrNotOwned):
		log.get().Warn().Str("class", p.Class).Msg("job was recovered by another worker while it ran; its result is not recorded")
		return next, false
	case err != nil && rdb.IsReplyError(err):
		// Redis refused the step (a script error: Redis keeps what a
		// script wrote before it), so its finish may have run: say so
		// rather than guess
		log.get().Error().Err(err).Str("class", p.Class).
			Msg("redis refused the job's end and the next claim; the end may be recorded, else the job will be recovered and run again")
		return nil, false
	case err != nil:
		log.get().Error().Err(err).Str("class", p.Class).Msg("could not record the job's end; it will be recovered and run again")
		return nil, false
	}
	return next, true
}

// report counts, logs and passes on (OnFinish) a recorded end.
func (s *slot) report(res rdb.ClaimResult, p *protocol.Payload, r *result, o rdb.Outcome, took time.Duration, now time.Time, log *jobLog) {
	w := s.w
	w.countFinish(res.StatName(), o.Kind, took)
	// A success is a debug line: at the default level a busy worker would
	// spend a fifth of its time writing one line per job.
	var ev *zerolog.Event // nil: every method does nothing
	if o.Kind == rdb.OutcomeFail || o.Kind == rdb.OutcomeRetry {
		ev = log.get().Warn().Str("exception", r.fail.Exception).Str("error", r.fail.Error)
	} else if w.debugOn() {
		ev = log.get().Debug()
	}
	if o.Kind == rdb.OutcomeDiscard {
		ev = ev.Str("reason", r.discard)
	}
	if o.DueAt > 0 {
		ev = ev.Int64("due_at", o.DueAt)
	}
	ev.Str("class", p.Class).Str("job_id", p.ID).Dur("duration", took).Str("outcome", string(o.Kind)).Msg("job done")
	if w.cfg.OnFinish == nil {
		return
	}
	f := Finished{WorkerID: s.id, Queue: res.Queue, Class: p.Class, Payload: res.Payload, Duration: took,
		Outcome: string(o.Kind), Failed: o.Kind == rdb.OutcomeFail}
	if p.HasQueueTime {
		f.QueueWait = time.Duration((float64(now.UnixNano())/1e9 - p.QueueTime) * float64(time.Second))
	}
	if r.fail != nil {
		f.Exception, f.Error = r.fail.Exception, r.fail.Error
	}
	w.cfg.OnFinish(f)
}
