package runtime

import (
	"context"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// depsReadTicks is how many counter ticks (counterFlush) pass between two
// reads of whether dependencies are in use: once a second.
const depsReadTicks = 4

// readDepsOn reads whether dependencies are in use in the namespace
// (protocol.Keys.DepsOn): one EXISTS a second for the process, instead of
// one a job. A read that fails keeps what the last one found.
func (w *Worker) readDepsOn(ctx context.Context) {
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	on, err := w.client.DepsInUse(callCtx)
	if err != nil {
		w.log.Debug().Err(err).Msg("cannot read whether dependencies are in use")
		return
	}
	w.depsOn.Store(on)
}

// depsOf is what a job's finish sends for dependencies and groups: its id
// while dependencies are in use (its end is recorded for the jobs that
// may wait for it), and its group. A job with neither sends nothing.
func depsOf(p *protocol.Payload, depsOn bool) (id, group string) {
	if p == nil {
		return "", ""
	}
	if depsOn {
		id = p.ID
	}
	return id, protocol.PayloadGroup(p)
}
