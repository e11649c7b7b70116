package runtime

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// Procline says what the worker is doing in Ruby Resque's procline words
// ("Waiting for high,low", "Processing mail since 1700000000 [MailJob]",
// "Paused", "Shutting down"), so ps shows resque-go workers the way
// operators read Ruby's. Several busy slots are listed one after another.
func (w *Worker) Procline() string {
	if w.loopCtx.Err() != nil {
		return "Shutting down"
	}
	if w.paused.Load() {
		return "Paused"
	}
	var busy []string
	for _, s := range w.slots {
		s.mu.Lock()
		if s.cur != nil {
			busy = append(busy, s.cur.Queue+" since "+strconv.FormatInt(s.since.Unix(), 10)+" ["+s.class+"]")
		}
		s.mu.Unlock()
	}
	switch {
	case len(busy) == 0:
		return "Waiting for " + w.spec.String()
	case len(w.slots) == 1:
		return "Processing " + busy[0]
	}
	return "Processing " + strconv.Itoa(len(busy)) + "/" + strconv.Itoa(len(w.slots)) + ": " + strings.Join(busy, ", ")
}

// titleLoop hands Procline to Config.Title when it changes, once a second.
func (w *Worker) titleLoop(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	last := ""
	for {
		if p := w.Procline(); p != last {
			w.cfg.Title(p)
			last = p
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
