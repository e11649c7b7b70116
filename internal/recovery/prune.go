package recovery

import (
	"context"
	"errors"
	"strconv"
	"syscall"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"
	"github.com/resque-go/resque-go/worker"
)

// rubyPruneAge is how old a heartbeat must be before Ruby Resque prunes a
// worker; ids of other runtimes are never pruned sooner.
const rubyPruneAge = 300 * time.Second

type pruneReason int

const (
	reasonSameHost pruneReason = iota + 1 // same host, pid gone
	reasonStale                           // heartbeat too old
)

// pidCheckInterval is how often the pruner looks, between passes, whether a
// same-host worker it saw alive has died: a kill(pid, 0) per such worker,
// no Redis command.
const pidCheckInterval = time.Second

// pruneLoop runs a pass every PruneInterval, and one at once when a
// same-host worker seen alive by the last pass has died: its job goes
// back within pidCheckInterval, not at the next pass.
func (s *Service) pruneLoop(ctx context.Context) {
	for {
		callCtx, cancel := context.WithTimeout(ctx, s.cfg.PruneInterval)
		if err := s.Prune(callCtx); err != nil && ctx.Err() == nil {
			s.log.Warn().Err(err).Msg("pruning dead workers failed")
		}
		cancel()
		next := time.Now().Add(s.cfg.PruneInterval)
		for !s.watchedPidDied() {
			wait := time.Until(next)
			if wait <= 0 {
				break
			}
			if !service.Sleep(ctx, min(wait, pidCheckInterval)) {
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// watchedPidDied reports whether a same-host pid the last pass saw alive
// is gone.
func (s *Service) watchedPidDied() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pid := range s.watched {
		if !pidAlive(pid) {
			return true
		}
	}
	return false
}

// Prune runs one pruning pass: it finds dead workers and recovers their
// jobs. Same-host ids whose pid is gone are pruned at once; ids with an old
// heartbeat only under the shared pruning lock, after 3 of their own
// heartbeat intervals for resque-go workers and after Ruby's 300 s for any
// other. The process's own ids are never judged. The same-host workers it
// finds alive are watched until the next pass (see pruneLoop).
func (s *Service) Prune(ctx context.Context) error {
	snap, err := s.client.Workers(ctx)
	if err != nil {
		return err
	}
	var watched []int
	defer func() {
		s.mu.Lock()
		s.watched = watched
		s.mu.Unlock()
	}()
	locked, triedLock := false, false
	for _, id := range snap.IDs {
		if s.own[id] {
			continue
		}
		if wid, err := protocol.ParseWorkerID(id); err == nil && wid.Host == s.cfg.Hostname && wid.PID != s.cfg.PID && pidAlive(wid.PID) {
			watched = append(watched, wid.PID)
		}
		hb := snap.Heartbeats[id]
		reason := s.deadReason(id, hb, snap)
		if reason == 0 {
			continue
		}
		if reason == reasonStale {
			if !triedLock {
				triedLock = true
				if locked, err = s.client.AcquirePruneLock(ctx, s.lockOwner, s.cfg.PruneInterval); err != nil {
					return err
				}
			}
			if !locked {
				continue
			}
		}
		if err := s.pruneWorker(ctx, id, hb, reason, false); err != nil {
			return err
		}
	}
	return nil
}

// RecoverOwn recovers the job an earlier process with the same worker id
// left (a restarted container gets the pid back): called before the id is
// registered again. An id that holds no job is left alone.
func (s *Service) RecoverOwn(ctx context.Context, id string) error {
	return s.pruneWorker(ctx, id, "", reasonSameHost, true)
}

func (s *Service) deadReason(id, hb string, snap rdb.WorkerSnapshot) pruneReason {
	wid, err := protocol.ParseWorkerID(id)
	if err == nil && wid.Host == s.cfg.Hostname {
		// An id with our own pid that is not one of our ids belongs to an
		// earlier process that had this pid (a restarted container).
		if wid.PID == s.cfg.PID || !pidAlive(wid.PID) {
			return reasonSameHost
		}
	}
	if hb == "" {
		return 0 // never judge a worker that has no heartbeat at all
	}
	t, err := protocol.ParseHeartbeat(hb)
	if err != nil {
		return 0
	}
	limit := rubyPruneAge
	if iv, ok := snap.Intervals[id]; ok {
		if secs, err := strconv.ParseFloat(iv, 64); err == nil && secs > 0 {
			limit = time.Duration(3 * secs * float64(time.Second))
			if limit < 3*time.Second {
				limit = 3 * time.Second
			}
		}
	}
	if snap.Now.Sub(t) > limit {
		return reasonStale
	}
	return 0
}

// pidAlive reports whether a process with this pid exists on this host.
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// pruneWorker unregisters one dead worker id and recovers the job it held.
// With onlyHeld it does nothing for an id that holds no job (used at start
// for our own ids).
func (s *Service) pruneWorker(ctx context.Context, id, hb string, reason pruneReason, onlyHeld bool) error {
	rec, err := s.client.WorkerRecord(ctx, id)
	if err != nil {
		return err
	}
	if rec == nil && onlyHeld {
		return nil
	}
	if onlyHeld {
		// Our own id from an earlier process: judge by the current heartbeat.
		snap, err := s.client.Workers(ctx)
		if err != nil {
			return err
		}
		hb = snap.Heartbeats[id]
	}
	a := rdb.PruneArgs{WorkerID: id, Heartbeat: hb, Record: rec, MaxRecoveries: s.cfg.MaxRecoveries, Host: s.cfg.Hostname}
	class := ""
	if rec != nil {
		r, perr := protocol.ParseWorkerRecord(rec)
		if perr != nil {
			// Unreadable record: keep its text in failed, never requeue garbage.
			r = protocol.WorkerRecord{Queue: "unknown", Payload: rec}
			a.MaxRecoveries = 0
		}
		a.Queue, a.Source, a.Payload = r.Queue, r.SourceOf(), r.Payload
		p, err := protocol.DecodePayload(r.Payload)
		if err == nil {
			class = p.Class
		} else {
			p = nil
		}
		if a.End, err = s.jobEnd(ctx, r, p); err != nil {
			return err
		}
		f := protocol.Failure{FailedAt: s.cfg.Now(), Payload: r.Payload, Backtrace: []string{},
			Worker: id, Queue: r.Queue, ProcessedBy: s.cfg.Hostname}
		if reason == reasonSameHost {
			f.Exception, f.Error = protocol.ExcDirtyExit, protocol.DirtyExitStillBusy
		} else {
			f.Exception = protocol.ExcPruneDirtyExit
			f.Error = "Worker " + id + " did not gracefully exit while processing " + class
		}
		a.Failure = f.Encode()
	}
	if reason == reasonSameHost {
		if err := s.killJobProcesses(ctx, id); err != nil {
			return err
		}
	}
	res, err := s.client.Prune(ctx, a)
	if err != nil {
		return err
	}
	if res != rdb.PruneGone && res != rdb.PruneAlive {
		s.log.Warn().Str("dead_worker_id", id).Str("queue", a.Queue).Str("class", class).
			Str("result", string(res)).Msg("pruned dead worker")
	}
	return nil
}

// jobEnd is what the recovery of a dead worker's job (record r, payload p,
// nil when unreadable) settles with it: the caps' slots it holds under
// this process's limits, its event, and, should it be recorded as failed,
// its end for the jobs waiting for it (read only for a job with an id:
// whether dependencies are in use) and its group.
func (s *Service) jobEnd(ctx context.Context, r protocol.WorkerRecord, p *protocol.Payload) (rdb.JobEnd, error) {
	e := rdb.JobEnd{Queue: r.Queue, Now: s.cfg.Now(), Attempt: 1, Events: s.cfg.Events}
	if p == nil {
		return e, nil
	}
	e.JobID, e.Class, e.Attempt = p.ID, p.Class, p.FailCount+1
	e.Limits = rdb.LimitHoldsOf(s.cfg.Limits, r.SourceOf(), r.Queue, p.Class, r.Payload)
	e.Lease = true
	e.Group = protocol.PayloadGroup(p)
	if p.ID != "" {
		on, err := s.client.DepsInUse(ctx)
		if err != nil {
			return e, err
		}
		if on {
			e.DepsID = p.ID
		}
	}
	return e, nil
}

// killJobProcesses stops what may still run of a dead same-host worker's
// jobs (a process that left the job's process group, which the exec guard
// cannot reach) before its job is requeued, so the job never runs twice at
// once. An id with our own pid is skipped: the earlier process with this pid
// is gone and, in a test binary, other workers of this process share such ids.
func (s *Service) killJobProcesses(ctx context.Context, id string) error {
	wid, err := protocol.ParseWorkerID(id)
	if err != nil || wid.PID == s.cfg.PID {
		return nil
	}
	n, err := worker.KillJobProcesses(ctx, id)
	if n > 0 {
		s.log.Warn().Str("dead_worker_id", id).Int("processes", n).Msg("killed processes of a dead worker's job")
	}
	return err
}
