package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/resque-go/resque-go/client"
)

// A hand-picked selection of failed entries: each is named as a single
// entry is, by the index it was read at and the digest of its bytes, so a
// list that moved between the page and the action (entries before it
// removed, others retried) never makes the dashboard act on another entry.

// maxSelected bounds the entries one request may select.
const maxSelected = maxLimit

// selectReadStep is the most entries one read of the failed list fetches
// while finding a selection (as a filtered page reads: no long command).
const selectReadStep = 500

// entryRef names one failed entry: the index it was read at and the
// digest of its bytes.
type entryRef struct {
	Index  int64  `json:"index"`
	Digest string `json:"digest"`
}

// String is the ref as a checkbox of the Failed page carries it.
func (e entryRef) String() string { return strconv.FormatInt(e.Index, 10) + ":" + e.Digest }

// parseEntryRef reads "INDEX:DIGEST", as a checkbox carries it.
func parseEntryRef(s string) (entryRef, error) {
	i, d, ok := strings.Cut(strings.TrimSpace(s), ":")
	n, err := strconv.ParseInt(i, 10, 64)
	if !ok || err != nil {
		return entryRef{}, statusErr(http.StatusBadRequest, "entry %q: want INDEX:DIGEST", clip(s, 80))
	}
	return entryRef{Index: n, Digest: d}, nil
}

// validDigest: 32 lower-case hex digits, as digestOf writes them.
func validDigest(d string) bool {
	if len(d) != 32 {
		return false
	}
	for _, c := range d {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// checkRefs refuses an empty, oversized or malformed selection and drops
// repeats of the same ref.
func checkRefs(refs []entryRef) ([]entryRef, error) {
	if len(refs) == 0 {
		return nil, statusErr(http.StatusBadRequest, "no entry selected")
	}
	if len(refs) > maxSelected {
		return nil, statusErr(http.StatusBadRequest, "%d entries selected: at most %d at once", len(refs), maxSelected)
	}
	out := make([]entryRef, 0, len(refs))
	seen := map[entryRef]bool{}
	for _, r := range refs {
		if r.Index < 0 || !validDigest(r.Digest) {
			return nil, statusErr(http.StatusBadRequest, "entry %s: want an index >= 0 and the entry's digest (32 hex digits)", clip(r.String(), 80))
		}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out, nil
}

// selectedResult is what a retry or remove of a selection did.
type selectedResult struct {
	Action   string `json:"action"`
	Selected int    `json:"selected"`
	Done     int    `json:"done"`
	// Gone counts selected entries no longer in the list as they were
	// read: removed, retried or changed by someone else meanwhile.
	Gone    int `json:"gone"`
	Skipped int `json:"skipped"`
}

// findSelected finds each ref's entry as findFailed finds one: at its
// index, or up to lookBack places before it. Each entry found is claimed
// by one ref only (two identical entries selected are two entries). It
// returns the entries found, highest index first, and how many refs found
// none.
func (s *server) findSelected(ctx context.Context, refs []entryRef) ([]client.FailedJob, int, error) {
	refs = slices.SortedFunc(slices.Values(refs), func(a, b entryRef) int { return cmp.Compare(b.Index, a.Index) })
	// the windows [index-lookBack+1, index], merged, read from the top:
	// entries only move towards the head, so one that moves while the
	// window is read is met again further down, never skipped
	type span struct{ lo, hi int64 }
	var spans []span
	for _, r := range refs {
		lo := max(0, r.Index-lookBack+1)
		if n := len(spans); n > 0 && r.Index+1 >= spans[n-1].lo {
			spans[n-1].lo = min(spans[n-1].lo, lo)
			continue
		}
		spans = append(spans, span{lo, r.Index})
	}
	byDigest := map[string][]client.FailedJob{} // highest index first
	for _, sp := range spans {
		for top := sp.hi; top >= sp.lo; top -= selectReadStep {
			start := max(sp.lo, top-selectReadStep+1)
			entries, err := s.c.Failed(ctx, int(start), int(top-start+1))
			if err != nil {
				return nil, 0, err
			}
			for i := len(entries) - 1; i >= 0; i-- {
				d := digestOf(entries[i].Raw)
				byDigest[d] = append(byDigest[d], entries[i])
			}
		}
	}
	var found []client.FailedJob
	gone := 0
	claimed := map[int64]bool{}
	for _, r := range refs {
		i := slices.IndexFunc(byDigest[r.Digest], func(f client.FailedJob) bool {
			return f.Index <= r.Index && f.Index > r.Index-lookBack && !claimed[f.Index]
		})
		if i < 0 {
			gone++
			continue
		}
		f := byDigest[r.Digest][i]
		claimed[f.Index] = true
		found = append(found, f)
	}
	slices.SortFunc(found, func(a, b client.FailedJob) int { return cmp.Compare(b.Index, a.Index) })
	return found, gone, nil
}

// failedSelected retries or removes the selected entries, each once, as
// the single-entry actions do: an entry is changed only while its bytes
// are in the list (one atomic step each), so one gone or changed since it
// was read (retried by someone else, say) is counted as gone, never retried
// twice or mistaken for another. Entries are acted on from the highest
// index down, so a removal does not move the entries still to come.
func (s *server) failedSelected(r *http.Request, op string, refs []entryRef) (selectedResult, error) {
	res := selectedResult{Action: op}
	if op != "retry" && op != "remove" {
		return res, statusErr(http.StatusNotFound, "no action %q: want retry or remove", op)
	}
	refs, err := checkRefs(refs)
	if err != nil {
		return res, err
	}
	res.Selected = len(refs)
	found, gone, err := s.findSelected(r.Context(), refs)
	if err != nil {
		return res, err
	}
	res.Gone = gone
	act := s.c.RetryFailedJob
	if op == "remove" {
		act = s.c.RemoveFailedJob
	}
loop:
	for _, f := range found {
		err = act(r.Context(), f)
		switch {
		case err == nil:
			res.Done++
		case errors.Is(err, client.ErrNoSuchEntry):
			res.Gone++
			err = nil
		case errors.Is(err, client.ErrNotRetryable):
			res.Skipped++
			err = nil
		default:
			break loop
		}
	}
	detail := fmt.Sprintf("selected %d, gone %d, skipped %d", res.Selected, res.Gone, res.Skipped)
	if err != nil {
		detail += "; stopped: " + err.Error()
	}
	target := fmt.Sprintf("%d selected failed entries", res.Selected)
	if aerr := s.audit(r, "failed."+op+"_selected", target, int64(res.Done), detail); aerr != nil && err == nil {
		err = aerr
	}
	return res, err
}

// failedSelectedForm is POST failed/selected: the checked rows of the
// Failed page (entry=INDEX:DIGEST, repeated) and the button pressed
// (action=retry or remove).
func (s *server) failedSelectedForm(w http.ResponseWriter, r *http.Request) {
	if !s.mayPost(w, r, RoleOperator) {
		return
	}
	action := r.Form.Get("action")
	if action != "retry" && action != "remove" {
		s.fail(w, r, http.StatusBadRequest, "action must be retry or remove")
		return
	}
	var refs []entryRef
	for _, v := range r.Form["entry"] {
		ref, err := parseEntryRef(v)
		if err != nil {
			s.failErr(w, r, err)
			return
		}
		refs = append(refs, ref)
	}
	if len(refs) == 0 {
		s.fail(w, r, http.StatusBadRequest, "No entry was selected: tick the entries to act on.")
		return
	}
	res, err := s.failedSelected(r, action, refs)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	msg := s.tf(r, map[string]string{
		"retry":  "Retried %s of %d selected; %d no longer there (retried, removed or changed by someone else meanwhile).",
		"remove": "Removed %s of %d selected; %d no longer there (retried, removed or changed by someone else meanwhile).",
	}[action], s.count(r, int64(res.Done), "1 entry", "%d entries"), res.Selected, res.Gone)
	if res.Skipped > 0 {
		msg += " " + s.count(r, int64(res.Skipped), "1 entry skipped: no queue or payload to retry.", "%d entries skipped: no queue or payload to retry.")
	}
	s.done(w, r, "failed?"+strings.TrimPrefix(filterOf(r).query(), "&"), msg)
}
