package worker

import (
	"context"
	"errors"
	"strconv"
	"syscall"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/service"
)

// rubyPruneAge is how old a heartbeat must be before Ruby Resque prunes a
// worker; ids of other runtimes are never pruned sooner.
const rubyPruneAge = 300 * time.Second

type pruneReason int

const (
	reasonSameHost pruneReason = iota + 1 // same host, pid gone
	reasonStale                           // heartbeat too old
)

func (w *Worker) pruneLoop(ctx context.Context) {
	for {
		callCtx, cancel := context.WithTimeout(ctx, w.cfg.PruneInterval)
		if err := w.pruneOnce(callCtx, w.slots[0].id); err != nil && ctx.Err() == nil {
			w.log.Warn().Err(err).Msg("pruning dead workers failed")
		}
		cancel()
		if !service.Sleep(ctx, w.cfg.PruneInterval) {
			return
		}
	}
}

// pruneOnce finds dead workers and recovers their jobs. Same-host ids whose
// pid is gone are pruned at once; ids with an old heartbeat only under the
// shared pruning lock, after 3 of their own heartbeat intervals for
// resque-go workers and after Ruby's 300 s for any other.
// lockOwner is the value written to the pruning lock, as Ruby writes its
// worker id there.
func (w *Worker) pruneOnce(ctx context.Context, lockOwner string) error {
	snap, err := w.client.Workers(ctx)
	if err != nil {
		return err
	}
	own := map[string]bool{}
	for _, s := range w.slots {
		own[s.id] = true
	}
	locked, triedLock := false, false
	for _, id := range snap.IDs {
		if own[id] {
			continue
		}
		hb := snap.Heartbeats[id]
		reason := w.deadReason(id, hb, snap)
		if reason == 0 {
			continue
		}
		if reason == reasonStale {
			if !triedLock {
				triedLock = true
				if locked, err = w.client.AcquirePruneLock(ctx, lockOwner, w.cfg.PruneInterval); err != nil {
					return err
				}
			}
			if !locked {
				continue
			}
		}
		if err := w.pruneWorker(ctx, id, hb, reason, false); err != nil {
			return err
		}
	}
	return nil
}

func (w *Worker) deadReason(id, hb string, snap rdb.WorkerSnapshot) pruneReason {
	wid, err := protocol.ParseWorkerID(id)
	if err == nil && wid.Host == w.cfg.Hostname {
		// An id with our own pid that is not one of our slots belongs to an
		// earlier process that had this pid (a restarted container).
		if wid.PID == w.cfg.PID || !pidAlive(wid.PID) {
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
func (w *Worker) pruneWorker(ctx context.Context, id, hb string, reason pruneReason, onlyHeld bool) error {
	rec, err := w.client.WorkerRecord(ctx, id)
	if err != nil {
		return err
	}
	if rec == nil && onlyHeld {
		return nil
	}
	if onlyHeld {
		// Our own id from an earlier process: judge by the current heartbeat.
		snap, err := w.client.Workers(ctx)
		if err != nil {
			return err
		}
		hb = snap.Heartbeats[id]
	}
	a := rdb.PruneArgs{WorkerID: id, Heartbeat: hb, Record: rec, MaxRecoveries: w.cfg.MaxRecoveries, Host: w.cfg.Hostname}
	class := ""
	if rec != nil {
		r, perr := protocol.ParseWorkerRecord(rec)
		if perr != nil {
			// Unreadable record: keep its text in failed, never requeue garbage.
			r = protocol.WorkerRecord{Queue: "unknown", Payload: rec}
			a.MaxRecoveries = 0
		}
		a.Queue, a.Source, a.Payload = r.Queue, r.SourceOf(), r.Payload
		if p, err := protocol.DecodePayload(r.Payload); err == nil {
			class = p.Class
		}
		f := protocol.Failure{FailedAt: w.cfg.Now(), Payload: r.Payload, Backtrace: []string{},
			Worker: id, Queue: r.Queue, ProcessedBy: w.cfg.Hostname}
		if reason == reasonSameHost {
			f.Exception, f.Error = protocol.ExcDirtyExit, protocol.DirtyExitStillBusy
		} else {
			f.Exception = protocol.ExcPruneDirtyExit
			f.Error = "Worker " + id + " did not gracefully exit while processing " + class
		}
		a.Failure = f.Encode()
	}
	if reason == reasonSameHost {
		if err := w.killJobProcesses(ctx, id); err != nil {
			return err
		}
	}
	res, err := w.client.Prune(ctx, a)
	if err != nil {
		return err
	}
	if res != rdb.PruneGone && res != rdb.PruneAlive {
		w.log.Warn().Str("dead_worker_id", id).Str("queue", a.Queue).Str("class", class).
			Str("result", string(res)).Msg("pruned dead worker")
	}
	return nil
}

// killJobProcesses stops what may still run of a dead same-host worker's
// jobs (a process that left the job's process group, which the exec guard
// cannot reach) before its job is requeued, so the job never runs twice at
// once. An id with our own pid is skipped: the earlier process with this pid
// is gone and, in a test binary, other workers of this process share such ids.
func (w *Worker) killJobProcesses(ctx context.Context, id string) error {
	wid, err := protocol.ParseWorkerID(id)
	if err != nil || wid.PID == w.cfg.PID {
		return nil
	}
	n, err := KillJobProcesses(ctx, id)
	if n > 0 {
		w.log.Warn().Str("dead_worker_id", id).Int("processes", n).Msg("killed processes of a dead worker's job")
	}
	return err
}
