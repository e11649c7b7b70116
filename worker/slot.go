package worker

import (
	"context"
	"errors"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
)

// pausePoll is how often a paused slot re-checks pause-all-workers.
const pausePoll = time.Second

// slot is one worker id: it claims, runs and finishes one job at a time.
type slot struct {
	w  *Worker
	id string

	mu      sync.Mutex
	cur     *rdb.ClaimResult
	cancel  context.CancelCauseFunc
	settled bool // the running job's end was already recorded by abandonJob
}

func (s *slot) loop(ctx context.Context) {
	w := s.w
	var b backoff
	for ctx.Err() == nil {
		if w.paused.Load() {
			select {
			case <-w.resumed():
			case <-ctx.Done():
			}
			continue
		}
		queues, err := w.queues.current(ctx)
		if err != nil {
			w.log.Warn().Err(err).Msg("cannot read queue list; retrying")
			sleepCtx(ctx, b.next())
			continue
		}
		if len(queues) == 0 {
			sleepCtx(ctx, w.cfg.QueueRefresh)
			continue
		}
		callCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := w.client.Claim(callCtx, rdb.ClaimArgs{WorkerID: s.id, Host: w.cfg.Hostname, Queues: queues, Now: w.cfg.Now()})
		cancel()
		if err != nil {
			d := b.next()
			w.log.Warn().Err(err).Str("worker_id", s.id).Dur("retry_in", d).Msg("claim failed; retrying")
			sleepCtx(ctx, d)
			continue
		}
		b.reset()
		switch {
		case res.Paused:
			sleepCtx(ctx, pausePoll)
		case res.Empty:
			w.idle(ctx, queues)
		default:
			s.run(res)
		}
	}
}

// idle waits for work: a blocking wake-up on the queues, or a poll interval.
func (w *Worker) idle(ctx context.Context, queues []string) {
	if w.cfg.Polling || !w.notify.watch(ctx, queues) {
		sleepCtx(ctx, w.cfg.Interval)
		return
	}
	w.notify.wait(ctx, w.cfg.QueueRefresh)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// run executes a claimed job and records its end.
func (s *slot) run(res rdb.ClaimResult) {
	w := s.w
	start := time.Now()
	log := w.log.With().Str("worker_id", s.id).Str("queue", res.Queue).Logger()
	if res.Resumed {
		log.Warn().Msg("resuming a job this worker id already held")
	}
	if w.jobsCtx.Err() != nil {
		s.interrupted(res, errShutdown)
		return
	}
	p, decodeErr := protocol.DecodePayload(res.Payload)
	var fail *protocol.Failure
	class := p.Class
	switch {
	case decodeErr != nil:
		fail = s.failure(res, protocol.ExcBadPayload, decodeErr.Error(), []string{})
	default:
		h, ok := w.cfg.Registry.lookup(p)
		if !ok {
			fail = s.failure(res, protocol.ExcNoHandler,
				"no handler registered for class "+strconv.Quote(p.Class)+" (register one in Go, or run with --exec '"+p.Class+"=command')", []string{})
			break
		}
		job := &Job{Queue: res.Queue, Class: p.Class, ID: p.ID, Args: p.Args, Payload: res.Payload,
			WorkerID: s.id, Attempt: p.FailCount + 1, view: p}
		log.Debug().Str("class", class).Str("job_id", p.ID).Msg("job started")
		err, cause := s.invoke(h, job, res)
		if err != nil && errors.Is(cause, errShutdown) {
			s.interrupted(res, err)
			return
		}
		if err != nil {
			exc, msg := exceptionName(err), errorMessage(err)
			var te timeoutError
			if errors.As(cause, &te) {
				exc, msg = protocol.ExcTimeout, te.Error()+": "+msg
			} else if errors.Is(cause, errUSR1) {
				exc, msg = protocol.ExcCancelled, errUSR1.Error()
			}
			fail = s.failure(res, exc, msg, errorBacktrace(err))
		}
	}
	s.finish(res, class, fail, time.Since(start), log)
}

// invoke runs the handler with the job's context and turns a panic into an
// error. It returns the handler's error and the context's cancel cause.
func (s *slot) invoke(h HandlerFunc, job *Job, res rdb.ClaimResult) (err error, cause error) {
	w := s.w
	ctx, cancel := context.WithCancelCause(w.jobsCtx)
	defer cancel(nil)
	if w.cfg.JobTimeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, w.cfg.JobTimeout, timeoutError{limit: w.cfg.JobTimeout.String()})
		defer stop()
	}
	s.mu.Lock()
	s.cur, s.cancel, s.settled = &res, cancel, false
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cur, s.cancel = nil, nil
		s.mu.Unlock()
	}()
	func() {
		defer func() {
			if v := recover(); v != nil {
				err = panicError(v, debug.Stack())
			}
		}()
		err = h(ctx, job)
	}()
	return err, context.Cause(ctx)
}

func (s *slot) failure(res rdb.ClaimResult, exc, msg string, bt []string) *protocol.Failure {
	return &protocol.Failure{
		FailedAt: s.w.cfg.Now(), Payload: res.Payload, Exception: exc, Error: msg,
		Backtrace: bt, Worker: s.id, Queue: res.Queue, ProcessedBy: s.w.cfg.Hostname,
	}
}

// finish records the job's end, retrying while Redis is unreachable.
func (s *slot) finish(res rdb.ClaimResult, class string, fail *protocol.Failure, took time.Duration, log zerolog.Logger) {
	w := s.w
	if s.isSettled() {
		return
	}
	o := rdb.Outcome{Processing: took}
	if fail != nil {
		o.Failure = fail.Encode()
	}
	err := w.retryRedis(context.Background(), "finish", func(ctx context.Context) error {
		return w.client.Finish(ctx, s.id, w.cfg.Hostname, res.Queue, o)
	})
	ev := log.Info()
	if fail != nil {
		ev = log.Warn().Str("exception", fail.Exception).Str("error", fail.Error)
	}
	switch {
	case errors.Is(err, rdb.ErrNotOwned):
		log.Warn().Str("class", class).Msg("job was recovered by another worker while it ran; its result is not recorded")
		return
	case err != nil:
		log.Error().Err(err).Str("class", class).Msg("could not record the job's end; it will be recovered and run again")
		return
	}
	ev.Str("class", class).Dur("duration", took).Bool("failed", fail != nil).Msg("job done")
	if w.cfg.OnFinish != nil {
		f := Finished{WorkerID: s.id, Queue: res.Queue, Class: class, Payload: res.Payload, Duration: took, Failed: fail != nil}
		if fail != nil {
			f.Exception, f.Error = fail.Exception, fail.Error
		}
		w.cfg.OnFinish(f)
	}
}

// interrupted handles a job stopped by a hard stop: requeue it at the head of
// its queue, or record a DirtyExit when so configured.
func (s *slot) interrupted(res rdb.ClaimResult, cause error) {
	w := s.w
	if s.isSettled() {
		return
	}
	if w.cfg.DirtyExitOnTerm {
		fail := s.failure(res, protocol.ExcDirtyExit, "job interrupted by worker shutdown: "+cause.Error(), []string{})
		s.finish(res, "", fail, 0, w.log.With().Str("worker_id", s.id).Logger())
		return
	}
	err := w.retryRedis(context.Background(), "requeue", func(ctx context.Context) error {
		return w.client.Requeue(ctx, s.id, res.Queue, res.Payload)
	})
	switch {
	case err == nil:
		w.log.Info().Str("worker_id", s.id).Str("queue", res.Queue).Msg("interrupted job requeued")
		if w.cfg.OnFinish != nil {
			w.cfg.OnFinish(Finished{WorkerID: s.id, Queue: res.Queue, Payload: res.Payload, Requeued: true})
		}
	case errors.Is(err, rdb.ErrNotOwned):
	default:
		w.log.Error().Err(err).Str("worker_id", s.id).Msg("could not requeue the interrupted job; it will be recovered by the next worker")
	}
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
