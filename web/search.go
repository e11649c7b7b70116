package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/resque-go/resque-go/client"
)

// Search: the failed list, the delayed queue and the queues, read in small
// chunks by client.Search, each hit written to the answer as it is found.
// The page is one HTML answer sent in parts (the browser shows the rows as
// they come, with no script); the API sends JSON lines. A client that goes
// away ends the request's context, which ends the search.

const (
	// searchLimit is how many hits a search returns unless told;
	// searchMaxLimit is the most it returns.
	searchLimit    = 50
	searchMaxLimit = 1000
	// searchMarker is where the page's hits go: the page is rendered
	// whole around it and sent in two parts with the hits between. Text
	// from Redis is escaped, so it cannot hold it.
	searchMarker = "<template id=\"search-stream\"></template>"
)

// searchParams is a search as the page and the API take it.
type searchParams struct {
	Text      string   `json:"q"`
	Class     string   `json:"class"`
	Queue     string   `json:"queue"`
	Exception string   `json:"exception"`
	In        []string `json:"in"`
	Limit     int      `json:"limit"`
}

func searchParamsOf(r *http.Request) (searchParams, error) {
	q := r.URL.Query()
	p := searchParams{Text: q.Get("q"), Class: strings.TrimSpace(q.Get("class")), Queue: strings.TrimSpace(q.Get("queue")),
		Exception: q.Get("exception"), Limit: searchLimit, In: []string{}}
	for _, v := range q["in"] {
		for _, place := range strings.Split(v, ",") {
			switch place = strings.TrimSpace(place); place {
			case "":
			case string(client.SearchFailed), string(client.SearchDelayed), string(client.SearchQueued):
				p.In = append(p.In, place)
			default:
				return p, statusErr(http.StatusBadRequest, "in: %q is not failed, delayed or queued", place)
			}
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > searchMaxLimit {
			return p, statusErr(http.StatusBadRequest, "limit: want 1 to %d", searchMaxLimit)
		}
		p.Limit = n
	}
	return p, nil
}

// Empty reports whether nothing is searched for.
func (p searchParams) Empty() bool {
	return p.Text == "" && p.Class == "" && p.Queue == "" && p.Exception == ""
}

// Searches reports whether place is searched.
func (p searchParams) Searches(place string) bool {
	return len(p.In) == 0 || strings.Contains(","+strings.Join(p.In, ",")+",", ","+place+",")
}

func (p searchParams) query() client.SearchQuery {
	q := client.SearchQuery{Text: p.Text, Class: p.Class, Queue: p.Queue, Exception: p.Exception}
	for _, place := range p.In {
		q.In = append(q.In, client.SearchPlace(place))
	}
	return q
}

// searchHit is one hit as the API sends it and the page shows it; one of
// Failed, Delayed and Job is set, as Place says.
type searchHit struct {
	Place   string       `json:"place"`
	Failed  *failedView  `json:"failed,omitempty"`
	Delayed *delayedView `json:"delayed,omitempty"`
	Job     *jobView     `json:"job,omitempty"`
}

func newSearchHit(h client.SearchHit) searchHit {
	out := searchHit{Place: string(h.Place)}
	switch {
	case h.Failed != nil:
		v := newFailedView(*h.Failed)
		out.Failed = &v
	case h.Delayed != nil:
		v := newDelayedView(*h.Delayed)
		out.Delayed = &v
	default:
		v := newJobView(h.Job)
		out.Job = &v
	}
	return out
}

// searchEnd is the last line of an API search, and the page's summary.
type searchEnd struct {
	Done       bool    `json:"done"`
	Hits       int     `json:"hits"`
	Scanned    int64   `json:"scanned"`
	RoundTrips int64   `json:"round_trips"`
	Complete   bool    `json:"complete"`
	ElapsedMS  float64 `json:"elapsed_ms"`
	Error      string  `json:"error,omitempty"`
	// More is set when the search stopped at its limit.
	More bool `json:"more"`
}

// search runs p, calling emit for each hit until the limit; emit's false
// (the client went away) ends it.
func (s *server) search(r *http.Request, p searchParams, emit func(searchHit) bool) searchEnd {
	start := time.Now()
	end := searchEnd{Done: true}
	st, err := s.c.Search(r.Context(), p.query(), func(h client.SearchHit) bool {
		if end.Hits >= p.Limit {
			end.More = true
			return false
		}
		end.Hits++
		return emit(newSearchHit(h))
	})
	end.Scanned, end.RoundTrips, end.Complete = st.Scanned, st.RoundTrips, st.Complete
	end.ElapsedMS = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		end.Error = clean(err.Error())
	}
	return end
}

func (s *server) apiSearch(w http.ResponseWriter, r *http.Request) {
	p, err := searchParamsOf(r)
	if err == nil && p.Empty() {
		err = statusErr(http.StatusBadRequest, "give q, class, queue or exception")
	}
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson; charset=utf-8")
	w.Header().Set("X-Accel-Buffering", "no") // proxies pass each line on
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	enc := json.NewEncoder(w)
	end := s.search(r, p, func(h searchHit) bool {
		return enc.Encode(h) == nil && rc.Flush() == nil
	})
	_ = enc.Encode(end) // the client went away, or it reads the end
}

// searchPageData is the search page; Hits are rendered as they come.
type searchPageData struct {
	Params searchParams
	// Searching is set when the page streams hits.
	Searching bool
	Limit     int
}

// hitData is one row of the page.
type hitData struct {
	searchHit
	words
	CanOperate bool
	Link       string
	// RemoveArgs is a queued job's args for "remove jobs like this" when
	// it has no id.
	RemoveArgs string
}

func (s *server) searchPage(w http.ResponseWriter, r *http.Request) {
	p, err := searchParamsOf(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	d := searchPageData{Params: p, Searching: !p.Empty(), Limit: p.Limit}
	var page bytes.Buffer
	lang := language(r)
	pd := pageData{Title: "Search", Nav: "search", User: whoOf(r), Base: s.base, Data: d, Lang: lang, cat: s.cat,
		Messages: s.cat.scriptMessages(lang)}
	t := s.tmpl["search"]
	if err := t.ExecuteTemplate(&page, "layout.html", pd); err != nil {
		s.fail(w, r, http.StatusInternalServerError, "search page: "+err.Error())
		return
	}
	head, tail, _ := bytes.Cut(page.Bytes(), []byte(searchMarker))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Add("Vary", "Accept-Language")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if _, err := w.Write(head); err != nil || rc.Flush() != nil || !d.Searching {
		_, _ = w.Write(tail)
		return
	}
	canOperate := pd.CanOperate()
	end := s.search(r, p, func(h searchHit) bool {
		row := hitData{searchHit: h, words: words{s.cat, lang}, CanOperate: canOperate, Link: s.hitLink(h)}
		if h.Job != nil && h.Job.ID == "" {
			row.RemoveArgs = string(h.Job.Args)
		}
		return t.ExecuteTemplate(w, "hit", row) == nil && rc.Flush() == nil
	})
	if r.Context().Err() != nil {
		return // the client went away
	}
	_ = t.ExecuteTemplate(w, "searchend", struct {
		searchEnd
		words
	}{end, words{s.cat, lang}})
	_, _ = w.Write(tail)
}

// hitLink is the page of a hit's entry, found by its content: a failed
// entry by its digest (its index is only where to look first), a delayed
// item by its queue and class, a queued job by its queue.
func (s *server) hitLink(h searchHit) string {
	switch {
	case h.Failed != nil:
		return s.base + "failed/" + strconv.FormatInt(h.Failed.Index, 10) + "?digest=" + h.Failed.Digest
	case h.Delayed != nil:
		v := url.Values{}
		if h.Delayed.Queue != "" {
			v.Set("queue", h.Delayed.Queue)
		}
		if h.Delayed.Class != "" {
			v.Set("class", h.Delayed.Class)
		}
		return s.base + "delayed?" + v.Encode()
	case h.Job != nil:
		return s.base + "queues/" + url.PathEscape(h.Job.Queue)
	}
	return s.base
}
