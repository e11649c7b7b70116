package web

import (
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Tags (docs/events.md): each tag has an index of the ids of its jobs that
// have not ended. There is no index of the tags themselves, so /tags walks
// the keyspace in bounded steps, a page per request with a cursor to go on
// from; /tags/<t> reads one tag's index, a page at a time, and each job's
// state as `resque-go job show` does.

// maxTagJobs bounds a tag page: each job's state costs a round trip or two.
const maxTagJobs = 25

// tagView is a tag and its job count.
type tagView struct {
	Tag  string `json:"tag"`
	Jobs int64  `json:"jobs"`
}

// tagsData is the tags page, and /api/tags.
type tagsData struct {
	Tags []tagView `json:"tags"`
	// Cursor is where this page began, Next where the next one begins
	// ("" when the scan is complete).
	Cursor string `json:"cursor"`
	Next   string `json:"next"`
}

// taggedJobView is a job in a tag's index and what is known of its state.
type taggedJobView struct {
	ID         string     `json:"id"`
	EnqueuedAt *time.Time `json:"enqueued_at"`
	// State is what `job show` says: held, queued, or a recorded end;
	// "" when nothing is recorded (the job waits, runs or is retried: a
	// job leaves the index when it ends).
	State   string `json:"state"`
	Queue   string `json:"queue,omitempty"`
	Waiting int64  `json:"waiting,omitempty"`
	Problem string `json:"problem,omitempty"`
}

// tagData is one tag's page, and /api/tags/<t>.
type tagData struct {
	Tag    string          `json:"tag"`
	Total  int             `json:"total"`
	Offset int             `json:"offset"`
	Limit  int             `json:"limit"`
	Jobs   []taggedJobView `json:"jobs"`
	Pager  pager           `json:"-"`
}

func (s *server) tagsOf(r *http.Request) (tagsData, error) {
	cursor := r.URL.Query().Get("cursor")
	if _, err := strconv.ParseUint(cursor, 10, 64); cursor != "" && err != nil {
		return tagsData{}, statusErr(http.StatusBadRequest, "cursor %q: want a number", cursor)
	}
	ts, next, err := s.c.TagsPage(r.Context(), cursor, s.opt.PageSize)
	if err != nil {
		return tagsData{}, err
	}
	d := tagsData{Tags: make([]tagView, len(ts)), Cursor: cursor, Next: next}
	for i, t := range ts {
		d.Tags[i] = tagView{Tag: clean(t.Tag), Jobs: t.Jobs}
	}
	return d, nil
}

func (s *server) tagOf(r *http.Request, tag string, off, limit int) (tagData, error) {
	jobs, total, err := s.c.JobsByTag(r.Context(), tag, off, limit)
	if err != nil {
		return tagData{}, err
	}
	d := tagData{Tag: clean(tag), Total: total, Offset: off, Limit: limit, Jobs: make([]taggedJobView, len(jobs))}
	for i, j := range jobs {
		v := taggedJobView{ID: clean(j.ID), EnqueuedAt: timePtr(j.EnqueuedAt)}
		deps, err := s.c.JobDependencies(r.Context(), j.ID)
		switch {
		case err == nil:
			v.State, v.Queue, v.Waiting = clean(deps.State), clean(deps.Queue), deps.Waiting
		case statusOf(err) == http.StatusBadRequest:
			v.Problem = clean(err.Error()) // an id no resque-go job has: nothing to look up
		default:
			return tagData{}, err
		}
		d.Jobs[i] = v
	}
	return d, nil
}

func (s *server) tagsPage(w http.ResponseWriter, r *http.Request) {
	if t := r.URL.Query().Get("tag"); t != "" {
		http.Redirect(w, r, s.base+"tags/"+url.PathEscape(t), http.StatusSeeOther)
		return
	}
	d, err := s.tagsOf(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "tags", "Tags", "tags", d)
}

func (s *server) tagPage(w http.ResponseWriter, r *http.Request) {
	tag := r.PathValue("tag")
	pg := s.pager(r)
	pg.Size = min(pg.Size, maxTagJobs)
	d, err := s.tagOf(r, tag, pg.offset(), pg.Size)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	if pg.offset()+pg.Size < d.Total {
		pg.Next = pg.Page + 1
	}
	d.Pager = pg
	s.render(w, r, http.StatusOK, "tag", titled("Tag %s", clean(tag)), "tags", d)
}

func (s *server) apiTags(w http.ResponseWriter, r *http.Request) {
	d, err := s.tagsOf(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *server) apiTag(w http.ResponseWriter, r *http.Request) {
	off, limit, err := s.offsetLimit(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	d, err := s.tagOf(r, r.PathValue("tag"), off, min(limit, maxTagJobs*4))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}
