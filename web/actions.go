package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/resque-go/resque-go/client"
)

// errGone: the entry named by index and digest is no longer in the
// failed list (removed, or changed by someone else).
var errGone = errors.New("the entry was removed or changed meanwhile; nothing was done")

// lookBack is how far before its index an entry is looked for: entries
// only move towards the head of the failed list (workers append at the
// tail, removals close gaps), so an entry read at index i is at i or
// before.
const lookBack = 1000

// findFailed returns the entry that was read at index with the given
// digest: at index, or up to lookBack places before it if entries before
// it went meanwhile.
func (s *server) findFailed(ctx context.Context, index int64, digest string) (client.FailedJob, error) {
	start := max(0, index-lookBack+1)
	entries, err := s.c.Failed(ctx, int(start), int(index-start+1))
	if err != nil {
		return client.FailedJob{}, err
	}
	for i := len(entries) - 1; i >= 0; i-- {
		if digestOf(entries[i].Raw) == digest {
			return entries[i], nil
		}
	}
	return client.FailedJob{}, errGone
}

// failedOne retries or removes the entry read at index with digest.
func (s *server) failedOne(r *http.Request, op string, index int64, digest string) (failedView, error) {
	if op != "retry" && op != "remove" {
		return failedView{}, statusErr(http.StatusNotFound, "no action %q: want retry or remove", op)
	}
	if digest == "" {
		return failedView{}, statusErr(http.StatusBadRequest, "the entry's digest is required (an index alone may name another entry)")
	}
	f, err := s.findFailed(r.Context(), index, digest)
	if err == nil {
		if op == "retry" {
			err = s.c.RetryFailedJob(r.Context(), f)
		} else {
			err = s.c.RemoveFailedJob(r.Context(), f)
		}
	}
	if errors.Is(err, client.ErrNoSuchEntry) {
		err = errGone
	}
	target := fmt.Sprintf("failed entry %d (%s on %s)", index, clip(f.Job.Class, 80), clip(f.Job.Queue, 80))
	switch {
	case errors.Is(err, errGone):
		return failedView{}, statusErr(http.StatusConflict, "%s", errGone.Error())
	case errors.Is(err, client.ErrNotRetryable):
		return failedView{}, statusErr(http.StatusConflict, "the entry names no queue or holds no payload: it cannot be retried")
	case err != nil:
		return failedView{}, err
	}
	if err := s.audit(r, "failed."+op, target, 1, ""); err != nil {
		return newFailedView(f), err
	}
	return newFailedView(f), nil
}

// bulkResult is what a retry or remove of every matching entry did.
type bulkResult struct {
	Action string       `json:"action"`
	Filter filterParams `json:"filter"`
	// Previewed is the number the preview showed (0 when none was given).
	Previewed int64 `json:"previewed,omitempty"`
	Done      int   `json:"done"`
	Gone      int   `json:"gone"`
	Skipped   int   `json:"skipped"`
}

// failedBulk retries or removes every entry the filter selects: the
// guarantees of `resque-go failed retry --all` (each entry once, found by
// its bytes, one gone meanwhile counted and never mistaken for another).
func (s *server) failedBulk(r *http.Request, op string, f filterParams, previewed int64) (bulkResult, error) {
	res := bulkResult{Action: op, Filter: f, Previewed: previewed}
	var fr client.FailedResult
	var err error
	switch op {
	case "retry":
		fr, err = s.c.RetryFailedWhere(r.Context(), f.filter())
	case "remove":
		fr, err = s.c.RemoveFailedWhere(r.Context(), f.filter())
	default:
		return res, statusErr(http.StatusNotFound, "no action %q: want retry or remove", op)
	}
	res.Done, res.Gone, res.Skipped = fr.Done, fr.Gone, fr.Skipped
	detail := fmt.Sprintf("previewed %d, gone %d, skipped %d", previewed, fr.Gone, fr.Skipped)
	if err != nil {
		detail += "; stopped: " + err.Error()
	}
	if aerr := s.audit(r, "failed."+op+"_all", f.String(), int64(fr.Done), detail); aerr != nil && err == nil {
		err = aerr
	}
	return res, err
}

// removeJobs removes the jobs of queue matching class and args or id.
func (s *server) removeJobs(r *http.Request, queue, class, args, id string) (int64, error) {
	f := client.JobFilter{Class: strings.TrimSpace(class), ID: strings.TrimSpace(id)}
	if a := strings.TrimSpace(args); a != "" {
		f.Args = json.RawMessage(a)
	}
	n, err := s.c.RemoveJobs(r.Context(), queue, f, nil)
	if errors.Is(err, client.ErrInvalid) && n == 0 {
		return 0, statusErr(http.StatusBadRequest, "%s", strings.TrimPrefix(err.Error(), "client: "))
	}
	target := fmt.Sprintf("queue %s: class %s", queue, f.Class)
	if f.ID != "" {
		target += " id " + f.ID
	} else if f.Args != nil {
		target += " args " + clip(string(f.Args), 200)
	}
	detail := ""
	if err != nil {
		detail = "stopped: " + err.Error()
	}
	if aerr := s.audit(r, "queue.remove_jobs", target, n, detail); aerr != nil && err == nil {
		err = aerr
	}
	return n, err
}

// clearQueue deletes every job of queue.
func (s *server) clearQueue(r *http.Request, queue string) (int64, error) {
	n, err := s.c.ClearQueue(r.Context(), queue)
	if err != nil {
		return 0, err
	}
	return n, s.audit(r, "queue.clear", "queue "+queue, n, "")
}

// cancelJob asks for the job workerID runs to be cancelled, when it is
// still the job started at runAt (Unix seconds; "" for whichever runs).
func (s *server) cancelJob(r *http.Request, workerID, runAt string) error {
	if workerID == "" {
		return statusErr(http.StatusBadRequest, "no worker id")
	}
	ws, err := s.c.Workers(r.Context())
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ws, func(x client.WorkerInfo) bool { return x.ID == workerID })
	if i < 0 || ws[i].Job == nil {
		return statusErr(http.StatusConflict, "no job running on %s", workerID)
	}
	if runAt != "" && strconv.FormatInt(ws[i].RunAt.Unix(), 10) != runAt {
		return statusErr(http.StatusConflict, "the job shown on %s has ended; it runs another now (nothing was cancelled)", workerID)
	}
	err = s.c.CancelJob(r.Context(), workerID, client.CancelOptions{})
	switch {
	case errors.Is(err, client.ErrNoRunningJob):
		return statusErr(http.StatusConflict, "no job running on %s", workerID)
	case errors.Is(err, client.ErrNotCancellable):
		return statusErr(http.StatusConflict, "%s is not a resque-go worker (a Ruby worker cancels its job on USR1)", workerID)
	case err != nil:
		return err
	}
	return s.audit(r, "worker.cancel_job", "worker "+workerID, 1, "class "+ws[i].Job.Class)
}

// audit records a change made by the request's user.
func (s *server) audit(r *http.Request, action, target string, count int64, detail string) error {
	u := whoOf(r)
	e := client.AuditEntry{Time: s.now(), Who: u.Name, Role: u.Role.String(), From: r.RemoteAddr,
		Action: action, Target: clean(target), Count: count, Detail: clean(detail)}
	if err := s.c.RecordAudit(context.WithoutCancel(r.Context()), e, s.opt.AuditKeep); err != nil {
		return fmt.Errorf("done, but the audit log could not be written: %w", err)
	}
	return nil
}

// filterParams is the failed list's filter as pages and the API give it.
type filterParams struct {
	Queue     string `json:"queue"`
	Class     string `json:"class"`
	Exception string `json:"exception"`
}

func (f filterParams) filter() client.FailedFilter {
	return client.FailedFilter{Queue: f.Queue, Class: f.Class, Exception: f.Exception}
}

func (f filterParams) empty() bool { return f == filterParams{} }

// String is the filter as the audit log shows it.
func (f filterParams) String() string {
	if f.empty() {
		return "every entry"
	}
	var parts []string
	for _, p := range [][2]string{{"queue", f.Queue}, {"class", f.Class}, {"exception~", f.Exception}} {
		if p[1] != "" {
			parts = append(parts, p[0]+"="+strconv.Quote(p[1]))
		}
	}
	return strings.Join(parts, " ")
}

// query is the filter as URL query parameters (with a leading & when not
// empty).
func (f filterParams) query() string {
	var b bytes.Buffer
	for _, p := range [][2]string{{"queue", f.Queue}, {"class", f.Class}, {"exception", f.Exception}} {
		if p[1] != "" {
			b.WriteString("&" + p[0] + "=" + urlQueryEscape(p[1]))
		}
	}
	return b.String()
}

func filterOf(r *http.Request) filterParams {
	q := r.URL.Query()
	if r.Method == http.MethodPost {
		q = r.Form
	}
	return filterParams{Queue: strings.TrimSpace(q.Get("queue")), Class: strings.TrimSpace(q.Get("class")),
		Exception: strings.TrimSpace(q.Get("exception"))}
}

// httpError is an error with the status it is answered with.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func statusErr(code int, format string, args ...any) error {
	return &httpError{code: code, msg: fmt.Sprintf(format, args...)}
}

// statusOf is the HTTP status for err: its own, 400 for a bad argument,
// 502 for Redis.
func statusOf(err error) int {
	var he *httpError
	switch {
	case errors.As(err, &he):
		return he.code
	case errors.Is(err, client.ErrInvalid):
		return http.StatusBadRequest
	}
	return http.StatusBadGateway
}
