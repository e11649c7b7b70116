package web

import (
	"errors"
	"net/http"

	"github.com/resque-go/resque-go/client"
)

// Quieting, resuming and stopping a resque-go process from the Workers
// page (resque-go process quiet|resume|stop): operator role, audited; a
// stop is confirmed on a page of its own first. Ruby, PHP and Node workers
// read no such request: the client refuses it, and so does the page.

// workersData is the Workers page: every worker, and the resque-go
// processes they belong to.
type workersData struct {
	Workers   []workerView
	Processes []processView
}

// processActions are the requests the page and the API make.
var processActions = map[string]func(*client.Client, *http.Request, string) error{
	"quiet":  func(c *client.Client, r *http.Request, p string) error { return c.QuietProcess(r.Context(), p) },
	"resume": func(c *client.Client, r *http.Request, p string) error { return c.ResumeProcess(r.Context(), p) },
	"stop":   func(c *client.Client, r *http.Request, p string) error { return c.StopProcess(r.Context(), p) },
}

// processDone is what the done page says after request op for process p.
func (s *server) processDone(r *http.Request, op, p string) string {
	switch op {
	case "quiet":
		return s.tf(r, "Requested quiet of process %s: it takes no new job; its running jobs finish and it stays registered until resumed or stopped.", p)
	case "resume":
		return s.tf(r, "Requested resume of process %s: it takes jobs again.", p)
	}
	return s.tf(r, "Requested stop of process %s: its running jobs finish, then it exits (a pool child is replaced by a fresh one).", p)
}

// controlProcess makes request op for process (host:pid) and audits it.
func (s *server) controlProcess(r *http.Request, process, op string) error {
	call, ok := processActions[op]
	if !ok {
		return statusErr(http.StatusNotFound, "no action %q: want quiet, resume or stop", op)
	}
	if process == "" {
		return statusErr(http.StatusBadRequest, "no process")
	}
	err := call(s.c, r, process)
	switch {
	case errors.Is(err, client.ErrNoProcess):
		return statusErr(http.StatusConflict, "no worker of process %s is registered", process)
	case errors.Is(err, client.ErrNotControllable):
		return statusErr(http.StatusConflict, "%s is not a resque-go process: Ruby, PHP and Node workers take signals (USR2 to quiet, CONT to resume, QUIT to stop)", process)
	case errors.Is(err, client.ErrPoolManager):
		return statusErr(http.StatusConflict, "%s is a resque-go pool manager: quiet or stop its children, or signal the manager", process)
	case err != nil:
		return err
	}
	return s.audit(r, "process."+op, "process "+process, 1, "")
}

// processStopConfirm asks before a stop.
func (s *server) processStopConfirm(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Query().Get("process")
	if p == "" {
		s.fail(w, r, http.StatusBadRequest, "no process")
		return
	}
	s.render(w, r, http.StatusOK, "processstop", "Stop process", "workers", clean(p))
}

func (s *server) processForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleOperator) {
		return
	}
	op, p := r.PathValue("op"), r.Form.Get("process")
	if op == "stop" && r.Form.Get("confirm") != "yes" {
		s.fail(w, r, http.StatusBadRequest, "a stop is confirmed on its own page first")
		return
	}
	if err := s.controlProcess(r, p, op); err != nil {
		s.failErr(w, r, err)
		return
	}
	s.done(w, r, "workers", s.processDone(r, op, p))
}

func (s *server) apiProcessAction(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleOperator) {
		return
	}
	op, p := r.PathValue("op"), r.PathValue("process")
	if err := s.controlProcess(r, p, op); err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"action": op, "process": clean(p), "requested": true})
}
