package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/resque-go/resque-go/client"
)

// maxLimit bounds ?limit= of the API's lists.
const maxLimit = 1000

// offsetLimit reads ?offset= and ?limit= (default the page size).
func (s *server) offsetLimit(r *http.Request) (int, int, error) {
	q := r.URL.Query()
	off, limit := 0, s.opt.PageSize
	var err error
	if v := q.Get("offset"); v != "" {
		if off, err = strconv.Atoi(v); err != nil || off < 0 {
			return 0, 0, statusErr(http.StatusBadRequest, "offset %q: want a number >= 0", v)
		}
	}
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > maxLimit {
			return 0, 0, statusErr(http.StatusBadRequest, "limit %q: want 1 to %d", v, maxLimit)
		}
	}
	return off, limit, nil
}

func (s *server) apiWhoami(w http.ResponseWriter, r *http.Request) {
	u := whoOf(r)
	writeJSON(w, http.StatusOK, map[string]string{"name": u.Name, "role": u.Role.String()})
}

func (s *server) apiOverview(w http.ResponseWriter, r *http.Request) {
	v := s.live.overview(r.Context())
	code := http.StatusOK
	if v.Error != "" {
		code = http.StatusBadGateway
	}
	writeJSON(w, code, v)
}

func (s *server) apiQueues(w http.ResponseWriter, r *http.Request) {
	qs, err := s.c.QueuesDetail(r.Context())
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	now := s.now()
	out := make([]queueView, len(qs))
	for i, q := range qs {
		out[i] = newQueueView(now, q)
	}
	if out, err = s.withPaused(r, out); err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"queues": out})
}

func (s *server) apiQueue(w http.ResponseWriter, r *http.Request) {
	q := r.PathValue("queue")
	off, limit, err := s.offsetLimit(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	size, err := s.c.QueueSize(r.Context(), q)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	jobs, err := s.c.Peek(r.Context(), q, off, limit)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	out := make([]jobView, len(jobs))
	for i, j := range jobs {
		out[i] = newJobView(j)
	}
	writeJSON(w, http.StatusOK, map[string]any{"queue": clean(q), "size": size, "offset": off, "limit": limit, "jobs": out})
}

func (s *server) apiQueueRemove(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleOperator) {
		return
	}
	var body struct {
		Class string   `json:"class"`
		Args  jsonText `json:"args"`
		ID    string   `json:"id"`
	}
	if err := jsonBody(w, r, &body); err != nil {
		s.failErr(w, r, err)
		return
	}
	n, err := s.removeJobs(r, r.PathValue("queue"), body.Class, string(body.Args), body.ID)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int64{"removed": n})
}

// jsonText keeps a JSON value's text (null: none).
type jsonText []byte

func (j *jsonText) UnmarshalJSON(b []byte) error {
	if string(b) != "null" {
		*j = append((*j)[:0], b...)
	}
	return nil
}

func (s *server) apiQueueClear(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleAdmin) {
		return
	}
	n, err := s.clearQueue(r, r.PathValue("queue"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int64{"cleared": n})
}

func (s *server) apiFailed(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("from") {
		s.apiFailedScan(w, r)
		return
	}
	off, limit, err := s.offsetLimit(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	total, err := s.c.FailedCount(r.Context())
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	f := filterOf(r)
	entries, err := s.c.FailedWhere(r.Context(), f.filter(), off, limit)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	out := make([]failedView, len(entries))
	for i, e := range entries {
		out[i] = newFailedView(e)
	}
	// total is the list's length: counting the matches of a filter
	// means reading all of it (GET api/failed/count does).
	writeJSON(w, http.StatusOK, map[string]any{"total": total, "filter": f, "offset": off, "limit": limit, "entries": out})
}

// apiFailedScan is GET api/failed?from=N: the entries a filter selects
// among at most failedScanRead entries from index N on, and next, the
// from of the next step (null at the end of the list).
func (s *server) apiFailedScan(w http.ResponseWriter, r *http.Request) {
	_, limit, err := s.offsetLimit(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	f := filterOf(r)
	sc, err := s.c.FailedScanStep(r.Context(), f.filter(), fromOf(r), failedScanRead, limit)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	out := make([]failedView, len(sc.Entries))
	for i, e := range sc.Entries {
		out[i] = newFailedView(e)
	}
	var next *int64
	if sc.Next < sc.Total {
		next = &sc.Next
	}
	writeJSON(w, http.StatusOK, map[string]any{"total": sc.Total, "filter": f, "from": sc.From, "read_to": sc.Next,
		"read_max": failedScanRead, "next": next, "limit": limit, "entries": out})
}

func (s *server) apiFailedCount(w http.ResponseWriter, r *http.Request) {
	f := filterOf(r)
	n, err := s.c.CountFailedWhere(r.Context(), f.filter())
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"filter": f, "count": n})
}

func (s *server) apiFailedEntry(w http.ResponseWriter, r *http.Request) {
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
		s.fail(w, r, http.StatusNotFound, fmt.Sprintf("no failed entry %d", idx))
		return
	}
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newFailedView(f))
}

func (s *server) apiFailedOne(w http.ResponseWriter, r *http.Request) {
	if !s.may(w, r, RoleOperator) {
		return
	}
	idx, err := strconv.ParseInt(r.PathValue("index"), 10, 64)
	if err != nil || idx < 0 {
		s.fail(w, r, http.StatusNotFound, "no failed entry "+r.PathValue("index"))
		return
	}
	var body struct {
		Digest string `json:"digest"`
	}
	if err := jsonBody(w, r, &body); err != nil {
		s.failErr(w, r, err)
		return
	}
	op := r.PathValue("op")
	v, err := s.failedOne(r, op, idx, body.Digest)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"action": op, "entry": v})
}

// expected holds an action on all that a filter selects to the count a
// preview showed (expect; nil: no preview, nothing to hold to): it answers
// 409 when count now gives another number. It returns the count the
// action records as previewed, and false when it answered the request.
func (s *server) expected(w http.ResponseWriter, r *http.Request, expect *int64, noun string, count func() (int64, error)) (int64, bool) {
	if expect == nil {
		return 0, true
	}
	n, err := count()
	if err != nil {
		s.failErr(w, r, err)
		return 0, false
	}
	if n != *expect {
		s.fail(w, r, http.StatusConflict, fmt.Sprintf("the filter selects %d %s now, not %d: preview again", n, noun, *expect))
		return 0, false
	}
	return n, true
}

// apiFailedBulk is POST api/failed/retry or remove: of every entry a
// filter selects, or with "entries" of those entries alone.
func (s *server) apiFailedBulk(w http.ResponseWriter, r *http.Request) {
	op := r.PathValue("op")
	if op != "retry" && op != "remove" {
		s.fail(w, r, http.StatusNotFound, "no action "+strconv.Quote(op)+": want retry or remove")
		return
	}
	// a selection needs what one entry needs (operator); every entry a
	// filter selects may need more (bulkRole), checked once the body says
	// which it is
	if !s.may(w, r, RoleOperator) {
		return
	}
	var body struct {
		filterParams
		// Expect, when set, is the count a preview showed: the action is
		// refused (409) when the filter now selects another number.
		Expect *int64 `json:"expect"`
		// Entries, when present, names the entries to act on (index and
		// digest each, as GET api/failed gives them) instead of a filter.
		Entries json.RawMessage `json:"entries"`
	}
	if err := jsonBody(w, r, &body); err != nil {
		s.failErr(w, r, err)
		return
	}
	if body.Entries != nil {
		s.apiFailedSelected(w, r, op, body.filterParams, body.Expect, body.Entries)
		return
	}
	if !s.may(w, r, bulkRole(op)) {
		return
	}
	previewed, ok := s.expected(w, r, body.Expect, "entries", func() (int64, error) { return s.c.CountFailedWhere(r.Context(), body.filter()) })
	if !ok {
		return
	}
	res, err := s.failedBulk(r, op, body.filterParams, previewed)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// apiFailedSelected acts on the entries a request names; a filter or an
// expect beside them is refused rather than guessed at.
func (s *server) apiFailedSelected(w http.ResponseWriter, r *http.Request, op string, f filterParams, expect *int64, entries json.RawMessage) {
	if !f.empty() || expect != nil {
		s.failErr(w, r, statusErr(http.StatusBadRequest, "entries: give either entries or a filter (queue, class, exception, expect), not both"))
		return
	}
	var refs []entryRef
	dec := json.NewDecoder(bytes.NewReader(entries))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&refs); err != nil || refs == nil {
		s.failErr(w, r, statusErr(http.StatusBadRequest, "entries: want a list of {\"index\": N, \"digest\": \"...\"}"))
		return
	}
	res, err := s.failedSelected(r, op, refs)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *server) apiWorkers(w http.ResponseWriter, r *http.Request) {
	ws, err := s.c.Workers(r.Context())
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	now := s.now()
	out := make([]workerView, len(ws))
	for i, x := range ws {
		out[i] = newWorkerView(now, x)
	}
	writeJSON(w, http.StatusOK, map[string]any{"workers": out})
}

func (s *server) apiAudit(w http.ResponseWriter, r *http.Request) {
	off, limit, err := s.offsetLimit(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	es, err := s.c.Audit(r.Context(), off, limit)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	if es == nil {
		es = []client.AuditEntry{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"offset": off, "limit": limit, "entries": es})
}

// events streams the overview as server-sent events ("overview" events,
// one JSON object each) for as long as the client listens. Every stream of
// this dashboard is fed by one poller.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no") // nginx: do not hold events back
	w.WriteHeader(http.StatusOK)
	ch, cancel := s.live.subscribe()
	defer cancel()
	keepAlive := time.NewTicker(30 * time.Second)
	defer keepAlive.Stop()
	if _, err := fmt.Fprintf(w, "retry: %d\n\n", (2 * s.opt.PollInterval).Milliseconds()); err != nil || rc.Flush() != nil {
		return
	}
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case msg := <-ch:
			_, err = fmt.Fprintf(w, "event: overview\ndata: %s\n\n", msg)
		case <-keepAlive.C:
			_, err = fmt.Fprint(w, ": keep-alive\n\n")
		}
		if err != nil || rc.Flush() != nil {
			return
		}
	}
}
