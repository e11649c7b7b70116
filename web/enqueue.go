package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/resque-go/resque-go/client"
)

// Enqueueing a job from a queue's page or the API, at once or at a time,
// as resque-go enqueue (--at, --in) does.

// enqueueInput is a job to push onto a queue: Args a JSON array or object
// (empty: []); At (RFC 3339 or Unix seconds) or In (a Go duration: 10m)
// delays it through the delayed queue.
type enqueueInput struct {
	Class string `json:"class"`
	Args  string `json:"args"`
	At    string `json:"at"`
	In    string `json:"in"`
}

// enqueueResult is what an enqueue wrote.
type enqueueResult struct {
	Queue string     `json:"queue"`
	Class string     `json:"class"`
	ID    string     `json:"id,omitempty"`
	DueAt *time.Time `json:"due_at,omitempty"`
}

// enqueue pushes in onto q: 400 for what enqueue refuses as usage.
func (s *server) enqueue(r *http.Request, q string, in enqueueInput) (enqueueResult, error) {
	at, dur := strings.TrimSpace(in.At), strings.TrimSpace(in.In)
	var opts []client.Option
	switch {
	case at != "" && dur != "":
		return enqueueResult{}, statusErr(http.StatusBadRequest, "give at or in, not both")
	case at != "":
		t, err := time.Parse(time.RFC3339, at)
		if secs, perr := strconv.ParseInt(at, 10, 64); perr == nil {
			t, err = time.Unix(secs, 0), nil
		}
		if err != nil {
			return enqueueResult{}, statusErr(http.StatusBadRequest, "at %q: want RFC 3339 (2026-12-01T08:00:00Z) or Unix seconds", clip(at, 100))
		}
		opts = append(opts, client.At(t))
	case dur != "":
		d, err := time.ParseDuration(dur)
		if err != nil || d < 0 {
			return enqueueResult{}, statusErr(http.StatusBadRequest, "in %q: want a duration such as 90s, 10m or 2h", clip(dur, 100))
		}
		opts = append(opts, client.In(d))
	}
	class := strings.TrimSpace(in.Class)
	job, err := s.c.EnqueueRaw(r.Context(), q, class, []byte(strings.TrimSpace(in.Args)), opts...)
	if errors.Is(err, client.ErrInvalid) {
		return enqueueResult{}, statusErr(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), "client: "))
	}
	if err != nil {
		return enqueueResult{}, err
	}
	res := enqueueResult{Queue: clean(q), Class: clean(class), ID: job.ID}
	what := "queue.enqueue"
	if !job.DueAt.IsZero() {
		due := job.DueAt.UTC()
		res.DueAt, what = &due, "queue.enqueue_at"
	}
	return res, s.audit(r, what, "job of "+class+" on "+q, 1, "")
}

func (s *server) queueEnqueueForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleOperator) {
		return
	}
	q := r.PathValue("queue")
	f := r.Form.Get
	res, err := s.enqueue(r, q, enqueueInput{Class: f("class"), Args: f("args"), At: f("at"), In: f("in")})
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	if res.DueAt != nil {
		s.done(w, r, "delayed", s.tf(r, "Delayed a job of %s for queue %s until %s.", res.Class, q, res.DueAt.Format(time.RFC3339)))
		return
	}
	s.done(w, r, "queues/"+pathEscape(q), s.tf(r, "Enqueued a job of %s on queue %s.", res.Class, q))
}

func (s *server) apiQueueEnqueue(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleOperator) {
		return
	}
	var in enqueueInput
	if err := jsonBody(w, r, &in); err != nil {
		s.failErr(w, r, err)
		return
	}
	res, err := s.enqueue(r, r.PathValue("queue"), in)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
