package runtime

import (
	"context"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// Process requests (resque-go process quiet|resume|stop) arrive on the
// subscription cancel requests use (cancelLoop), and the stored one is read
// at each (re)subscription. They act as the signals of `resque-go work`:
// quiet as USR2 (Pause), resume as CONT (Resume), stop as QUIT (Stop).

// readStoredControl applies the stored request for this process, if it is
// one not applied yet (the push may have come before).
func (w *Worker) readStoredControl(ctx context.Context) {
	callCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, ok, err := w.client.StoredProcessControl(callCtx, w.cfg.Hostname, w.cfg.PID)
	if err != nil {
		w.log.Warn().Err(err).Msg("cannot read the stored process request")
		return
	}
	if ok {
		w.applyControl(req)
	}
}

// applyControl carries out a request if it names this process and was not
// applied already. It is called only from cancelLoop's goroutine, so
// lastControl needs no lock.
func (w *Worker) applyControl(req protocol.ProcessControl) {
	if req.Host != w.cfg.Hostname || req.PID != w.cfg.PID || req.ID == w.lastControl {
		return
	}
	w.lastControl = req.ID
	w.log.Info().Str("action", req.Action).Str("request_id", req.ID).Msg("process request received")
	switch req.Action {
	case protocol.ActionQuiet:
		// not Pause, which waits for claims in flight: a claim under way
		// still runs its job, as after USR2, and a resume that follows is
		// applied after this
		w.setPaused()
	case protocol.ActionResume:
		w.Resume()
	case protocol.ActionStop:
		w.stopRequested.Store(true)
		go w.Stop() // Stop waits for this goroutine's loop to end
	}
}

// StopRequested reports whether the worker stopped (or is stopping)
// because of a stop request (resque-go process stop).
func (w *Worker) StopRequested() bool { return w.stopRequested.Load() }

// Paused reports whether the worker is paused (USR2 or a quiet request).
func (w *Worker) Paused() bool { return w.paused.Load() }
