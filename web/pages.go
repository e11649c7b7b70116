package web

import (
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/resque-go/resque-go/client"
)

// maxForm bounds a form or JSON body.
const maxForm = 1 << 20

func (s *server) overviewPage(w http.ResponseWriter, r *http.Request) {
	d := overviewPageData{overviewView: s.live.overview(r.Context()), Chart: s.chart(r.Context(), r.URL.Query().Get("range"))}
	s.render(w, r, http.StatusOK, "overview", "Overview", "overview", d)
}

func (s *server) queuesPage(w http.ResponseWriter, r *http.Request) {
	v := s.live.overview(r.Context())
	if v.Error != "" && len(v.Queues) == 0 {
		s.fail(w, r, http.StatusBadGateway, v.Error)
		return
	}
	var err error
	if v.Queues, err = s.withPaused(r, v.Queues); err != nil {
		s.failErr(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "queues", "Queues", "queues", v)
}

// pager is a page number (from 1) read from ?page=.
type pager struct {
	Page, Size int
	// Prev and Next are the neighbouring pages; 0 when there is none.
	Prev, Next int
}

func (s *server) pager(r *http.Request) pager {
	p, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if p < 1 {
		p = 1
	}
	return pager{Page: p, Size: s.opt.PageSize, Prev: p - 1}
}

func (p pager) offset() int { return (p.Page - 1) * p.Size }

type jobRow struct {
	Pos    int
	Job    jobView
	Pretty string
}

type queuePageData struct {
	Queue   string
	Size    int64
	Jobs    []jobRow
	Pager   pager
	Message string
	Paused  bool
}

func (s *server) queuePage(w http.ResponseWriter, r *http.Request) {
	s.queuePageWith(w, r, http.StatusOK, "")
}

func (s *server) queuePageWith(w http.ResponseWriter, r *http.Request, code int, msg string) {
	q := r.PathValue("queue")
	pg := s.pager(r)
	size, err := s.c.QueueSize(r.Context(), q)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	jobs, err := s.c.Peek(r.Context(), q, pg.offset(), pg.Size)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	paused, err := s.c.QueuesPaused(r.Context(), []string{q})
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	d := queuePageData{Queue: clean(q), Size: size, Pager: pg, Message: msg, Paused: paused[0]}
	for i, j := range jobs {
		v := newJobView(j)
		d.Jobs = append(d.Jobs, jobRow{Pos: pg.offset() + i, Job: v, Pretty: pretty(j.Payload, 16<<10)})
	}
	if int64(pg.offset()+pg.Size) < size {
		d.Pager.Next = pg.Page + 1
	}
	s.render(w, r, code, "queue", titled("Queue %s", clean(q)), "queues", d)
}

// mayPost says whether who asks may do what needs role, and reads the
// form of the request; it answers the request itself when not.
func (s *server) mayPost(w http.ResponseWriter, r *http.Request, role Role) bool {
	if !s.may(w, r, role) {
		return false
	}
	if err := parseForm(w, r); err != nil {
		s.failErr(w, r, err)
		return false
	}
	return true
}

func parseForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		return statusErr(http.StatusBadRequest, "unreadable form: %v", err)
	}
	return nil
}

func (s *server) queueRemoveForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleOperator) {
		return
	}
	q := r.PathValue("queue")
	n, err := s.removeJobs(r, q, r.Form.Get("class"), r.Form.Get("args"), r.Form.Get("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.done(w, r, "queues/"+pathEscape(q), s.tf(r, "Removed %s of class %s from queue %s.", s.count(r, n, "1 job", "%d jobs"), strings.TrimSpace(r.Form.Get("class")), q))
}

type clearData struct {
	Queue string
	Size  int64
}

func (s *server) queueClearConfirm(w http.ResponseWriter, r *http.Request) {
	q := r.PathValue("queue")
	n, err := s.c.QueueSize(r.Context(), q)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "clear", titled("Clear %s", clean(q)), "queues", clearData{Queue: clean(q), Size: n})
}

func (s *server) queueClearForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleAdmin) {
		return
	}
	q := r.PathValue("queue")
	if r.Form.Get("confirm") != q {
		s.fail(w, r, http.StatusBadRequest, "type the queue's name to confirm")
		return
	}
	n, err := s.clearQueue(r, q)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.done(w, r, "queues/"+pathEscape(q), s.tf(r, "Cleared queue %s: %s deleted.", q, s.count(r, n, "1 job", "%d jobs")))
}

type failedPageData struct {
	Filter  filterParams
	Query   template.URL // the filter as query parameters (escaped), with a leading &
	Total   int64        // the failed list's length
	Entries []failedView
	Pager   pager
	// Scan is set with a filter: the entries the page read.
	Scan *scanView
}

// failedScanRead bounds the failed entries a filtered page reads: a page
// shows the matches among them and goes on from there (?from=), so a
// rare match costs several pages, not one request reading the whole list.
const failedScanRead = 10_000

// scanView says what a page that reads a bounded piece of a long list
// read: From..To (From, To counted from 1 for the reader) of Total, and
// where the next page starts (Next; 0 when it read to the end).
type scanView struct {
	From, To, Total int64
	Read            int64 // the most one page reads
	Next            int64
	// Cursor is Next as the next page's ?from= (Next is 1-based for
	// reading, Cursor is not).
	Cursor string
}

// fromOf reads ?from= (an index, 0 at the start).
func fromOf(r *http.Request) int64 {
	n, err := strconv.ParseInt(r.URL.Query().Get("from"), 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func (s *server) failedPage(w http.ResponseWriter, r *http.Request) {
	f := filterOf(r)
	pg := s.pager(r)
	total, err := s.c.FailedCount(r.Context())
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	if !f.empty() {
		s.failedScanPage(w, r, f, total)
		return
	}
	// one more than a page says whether there is a next page without
	// counting every match
	entries, err := s.c.FailedWhere(r.Context(), f.filter(), pg.offset(), pg.Size+1)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	if len(entries) > pg.Size {
		entries, pg.Next = entries[:pg.Size], pg.Page+1
	}
	d := failedPageData{Filter: f, Query: template.URL(f.query()), Total: total, Pager: pg}
	for _, e := range entries {
		d.Entries = append(d.Entries, newFailedView(e))
	}
	s.render(w, r, http.StatusOK, "failed", "Failed", "failed", d)
}

// failedScanPage is the failed page with a filter: the matches among at
// most failedScanRead entries from ?from= on.
func (s *server) failedScanPage(w http.ResponseWriter, r *http.Request, f filterParams, total int64) {
	sc, err := s.c.FailedScanStep(r.Context(), f.filter(), fromOf(r), failedScanRead, s.opt.PageSize)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	d := failedPageData{Filter: f, Query: template.URL(f.query()), Total: sc.Total, Pager: pager{Page: 1, Size: s.opt.PageSize},
		Scan: newScanView(sc.From, sc.Next, sc.Total, failedScanRead)}
	for _, e := range sc.Entries {
		d.Entries = append(d.Entries, newFailedView(e))
	}
	s.render(w, r, http.StatusOK, "failed", "Failed", "failed", d)
}

func newScanView(from, next, total, read int64) *scanView {
	v := &scanView{From: min(from+1, max(next, 1)), To: next, Total: total, Read: read}
	if next < total {
		v.Next, v.Cursor = next+1, strconv.FormatInt(next, 10)
	}
	return v
}

type entryData struct {
	Entry  failedView
	Pretty string
	// Moved: the entry was found by its digest at another index.
	Moved bool
}

func (s *server) failedEntryPage(w http.ResponseWriter, r *http.Request) {
	idx, err := strconv.ParseInt(r.PathValue("index"), 10, 64)
	if err != nil || idx < 0 {
		s.fail(w, r, http.StatusNotFound, "no failed entry "+r.PathValue("index"))
		return
	}
	var f client.FailedJob
	if d := r.URL.Query().Get("digest"); d != "" {
		f, err = s.findFailed(r.Context(), idx, d)
	} else {
		f, err = s.c.FailedEntry(r.Context(), idx)
	}
	if errors.Is(err, client.ErrNoSuchEntry) || errors.Is(err, errGone) {
		s.fail(w, r, http.StatusNotFound, "no such failed entry: it was retried away, removed or changed meanwhile")
		return
	}
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	v := newFailedView(f)
	s.render(w, r, http.StatusOK, "entry", "Failed entry", "failed",
		entryData{Entry: v, Pretty: pretty(v.Job.Payload, 256<<10), Moved: f.Index != idx})
}

func (s *server) failedOneForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleOperator) {
		return
	}
	idx, err := strconv.ParseInt(r.PathValue("index"), 10, 64)
	if err != nil || idx < 0 {
		s.fail(w, r, http.StatusNotFound, "no failed entry "+r.PathValue("index"))
		return
	}
	op := r.PathValue("op")
	v, err := s.failedOne(r, op, idx, r.Form.Get("digest"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	format := map[string]string{"retry": "Retried the failed %s job of queue %s.", "remove": "Removed the failed %s job of queue %s."}[op]
	s.done(w, r, "failed", s.tf(r, format, v.Class, v.Queue))
}

type bulkData struct {
	Action  string
	Filter  filterParams
	Query   template.URL
	Count   int64
	Sample  []failedView
	Allowed bool
}

func (s *server) failedBulkPreview(w http.ResponseWriter, r *http.Request) {
	action := r.URL.Query().Get("action")
	if action != "retry" && action != "remove" {
		s.fail(w, r, http.StatusBadRequest, "action must be retry or remove")
		return
	}
	f := filterOf(r)
	n, err := s.c.CountFailedWhere(r.Context(), f.filter())
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	sample, err := s.c.FailedWhere(r.Context(), f.filter(), 0, 10)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	need := bulkRole(action)
	d := bulkData{Action: action, Filter: f, Query: template.URL(f.query()), Count: n, Allowed: whoOf(r).Role >= need}
	for _, e := range sample {
		d.Sample = append(d.Sample, newFailedView(e))
	}
	s.render(w, r, http.StatusOK, "bulk", map[string]string{"retry": "Retry failed jobs", "remove": "Remove failed jobs"}[action], "failed", d)
}

// bulkRole is the role an action on every matching entry needs.
func bulkRole(action string) Role {
	if action == "remove" {
		return RoleAdmin
	}
	return RoleOperator
}

func (s *server) failedBulkForm(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(w, r); err != nil {
		s.failErr(w, r, err)
		return
	}
	action := r.Form.Get("action")
	if action != "retry" && action != "remove" {
		s.fail(w, r, http.StatusBadRequest, "action must be retry or remove")
		return
	}
	if !s.may(w, r, bulkRole(action)) {
		return
	}
	previewed, _ := strconv.ParseInt(r.Form.Get("previewed"), 10, 64)
	f := filterOf(r)
	res, err := s.failedBulk(r, action, f, previewed)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	format := map[string]string{"retry": "Retried %s (%s; the preview showed %d).", "remove": "Removed %s (%s; the preview showed %d)."}[action]
	filter := f.String()
	if f.empty() {
		filter = s.tf(r, "every entry")
	}
	msg := s.tf(r, format, s.count(r, int64(res.Done), "1 entry", "%d entries"), filter, previewed)
	if res.Gone > 0 {
		msg += " " + s.count(r, int64(res.Gone), "1 entry was gone meanwhile.", "%d entries were gone meanwhile.")
	}
	if res.Skipped > 0 {
		msg += " " + s.count(r, int64(res.Skipped), "1 entry skipped: no queue or payload to retry.", "%d entries skipped: no queue or payload to retry.")
	}
	s.done(w, r, "failed?"+strings.TrimPrefix(f.query(), "&"), msg)
}

type doneData struct {
	Message string
	Back    string
}

// done is the page after a change: what was done, and a link back.
func (s *server) done(w http.ResponseWriter, r *http.Request, back, msg string) {
	s.render(w, r, http.StatusOK, "done", "Done", "", doneData{Message: clean(msg), Back: back})
}

func (s *server) workersPage(w http.ResponseWriter, r *http.Request) {
	ws, err := s.c.Workers(r.Context())
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	recs, err := s.c.Processes(r.Context(), ws)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	now := s.now()
	d := workersData{Workers: make([]workerView, len(ws)), Processes: make([]processView, len(recs))}
	busy := map[string]int{}
	for i, x := range ws {
		d.Workers[i] = newWorkerView(now, x)
		if x.Job != nil {
			busy[x.Host+":"+strconv.Itoa(x.PID)]++
		}
	}
	for i, rec := range recs {
		d.Processes[i] = newProcessView(now, rec, busy)
	}
	s.render(w, r, http.StatusOK, "workers", "Workers", "workers", d)
}

// workerCancelForm cancels the job a worker runs, if it is still the one
// the page showed (its start, run_at, in Unix seconds).
func (s *server) workerCancelForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleOperator) {
		return
	}
	id := r.Form.Get("worker")
	if err := s.cancelJob(r, id, r.Form.Get("run_at")); err != nil {
		s.failErr(w, r, err)
		return
	}
	s.done(w, r, "workers", s.tf(r, "Cancel requested for the job on %s: it ends in failed as ResqueGo::Cancelled.", id))
}

type auditData struct {
	Entries []auditView
	Pager   pager
}

func (s *server) auditPage(w http.ResponseWriter, r *http.Request) {
	pg := s.pager(r)
	es, err := s.c.Audit(r.Context(), pg.offset(), pg.Size+1)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	if len(es) > pg.Size {
		es, pg.Next = es[:pg.Size], pg.Page+1
	}
	s.render(w, r, http.StatusOK, "audit", "Audit log", "audit", auditData{Entries: es, Pager: pg})
}

func pathEscape(s string) string { return url.PathEscape(s) }

// jsonBody decodes a JSON request body into v (an empty body leaves v as
// it is).
func jsonBody(w http.ResponseWriter, r *http.Request, v any) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && err.Error() != "EOF" {
		return statusErr(http.StatusBadRequest, "unreadable JSON body: %v", err)
	}
	return nil
}
