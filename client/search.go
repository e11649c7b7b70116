package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/failure"
	"github.com/resque-go/resque-go/internal/delayedio"
	"github.com/resque-go/resque-go/internal/rdb"
)

// SearchPlace is where Search looks: the failed list, the delayed queue or
// the queues.
type SearchPlace string

// The places Search looks in.
const (
	SearchFailed  SearchPlace = "failed"
	SearchDelayed SearchPlace = "delayed"
	SearchQueued  SearchPlace = "queued"
)

// SearchQuery selects what Search finds. Set fields must all match; at
// least one of Text, Class, Queue and Exception must be set.
type SearchQuery struct {
	// Text matches a job whose args (as JSON text) or id contain it.
	Text string
	// Class matches a job of exactly this class.
	Class string
	// Queue matches a job of exactly this queue (for the queues: only
	// this queue is read).
	Queue string
	// Exception matches a failed entry whose exception contains it; a
	// query with Exception finds nothing delayed or queued.
	Exception string
	// In lists the places to look in; empty means all three.
	In []SearchPlace
}

// SearchHit is one job Search found.
type SearchHit struct {
	Place SearchPlace
	// Job is the job: the queued job, the delayed item's job or the job
	// of the failed entry.
	Job Job
	// Failed is the failed entry (Place SearchFailed).
	Failed *FailedJob
	// Delayed is the delayed item (Place SearchDelayed).
	Delayed *delayed.Item
}

// SearchStats says how much a search read.
type SearchStats struct {
	// Scanned counts the entries, items and jobs read.
	Scanned int64
	// RoundTrips counts the round trips to Redis (a pipeline is one).
	RoundTrips int64
	// Complete is set when every place was read to its end (no fn
	// stopped the search, no context ended it).
	Complete bool
}

// Search tuning: each Redis call reads a bounded slice of one list (or a
// pipeline of slices of small lists) so that no command takes long and
// Redis serves others between them.
const (
	searchChunkMin   = 10
	searchChunkMax   = 500
	searchChunkStart = 100
	// searchChunkBytes is the size a call aims at: chunks halve above
	// twice of it and double below half of it.
	searchChunkBytes = 256 << 10
	// searchBucketPage is how many due times one pipeline reads, each
	// up to searchBucketItems items (a bigger bucket is read on in
	// chunks).
	searchBucketPage  = 100
	searchBucketItems = 50
	// searchQueueItems is how many jobs of each queue one call reads, in
	// pipelines of searchQueueGroup queues.
	searchQueueItems = 50
	searchQueueGroup = 10
)

// ErrEmptySearch: a SearchQuery without anything to look for.
var ErrEmptySearch = errors.New("client: search: give a text, class, queue or exception")

// Search calls fn for each job q matches, as it finds them, until fn
// returns false, ctx ends or every place was read. It reads the failed list
// newest first, the delayed queue oldest first and the queues from the
// job workers take next, the three at once, each in small chunks (no
// Redis call reads more than searchChunkMax entries; the keyspace is never
// scanned). fn is called from one goroutine at a time. Search is a view:
// a job that moves meanwhile (taken by a worker, promoted, retried) can be
// missed or found twice. An entry that is not JSON is matched on its
// bytes and never stops the search.
func (c *Client) Search(ctx context.Context, q SearchQuery, fn func(SearchHit) bool) (SearchStats, error) {
	m, err := newSearchMatcher(q)
	if err != nil {
		return SearchStats{}, err
	}
	places := q.In
	if len(places) == 0 {
		places = []SearchPlace{SearchFailed, SearchDelayed, SearchQueued}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &searcher{c: c, m: m, hits: make(chan SearchHit)}
	var wg sync.WaitGroup
	errs := make([]error, len(places))
	for i, p := range places {
		scan := map[SearchPlace]func(context.Context) error{
			SearchFailed: s.failed, SearchDelayed: s.delayed, SearchQueued: s.queued}[p]
		if scan == nil {
			return SearchStats{}, invalidf("search: no place %q (failed, delayed, queued)", p)
		}
		if p != SearchFailed && q.Exception != "" {
			continue // only failed entries have an exception
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = scan(ctx)
		}()
	}
	go func() {
		wg.Wait()
		close(s.hits)
	}()
	stopped := false
	for h := range s.hits {
		if !stopped && !fn(h) {
			stopped = true
			cancel()
		}
	}
	st := SearchStats{Scanned: s.scanned.Load(), RoundTrips: s.trips.Load()}
	if stopped {
		return st, nil
	}
	for _, e := range errs {
		if e != nil {
			if ctx.Err() != nil {
				return st, context.Cause(ctx)
			}
			return st, wrap("search", e)
		}
	}
	st.Complete = ctx.Err() == nil
	return st, ctx.Err()
}

// searcher is one search's scanners and what they counted.
type searcher struct {
	c       *Client
	m       searchMatcher
	hits    chan SearchHit
	scanned atomic.Int64
	trips   atomic.Int64
}

// send hands a hit to fn; false when the search ended.
func (s *searcher) send(ctx context.Context, h SearchHit) bool {
	select {
	case s.hits <- h:
		return true
	case <-ctx.Done():
		return false
	}
}

// nextChunk sizes the next read from the bytes the last one returned.
func nextChunk(chunk int, items [][]byte) int {
	n := 0
	for _, b := range items {
		n += len(b)
	}
	switch {
	case n > 2*searchChunkBytes:
		return max(chunk/2, searchChunkMin)
	case n < searchChunkBytes/2:
		return min(chunk*2, searchChunkMax)
	}
	return chunk
}

// failed reads the failed list from its newest entry back, in chunks.
// Positions count from the oldest entry, so entries appended meanwhile do
// not shift what is left to read.
func (s *searcher) failed(ctx context.Context) error {
	key := s.c.rdb.Keys().Failed()
	n, err := s.c.rdb.Len(ctx, key)
	s.trips.Add(1)
	if err != nil {
		return err
	}
	chunk := searchChunkStart
	for stop := n - 1; stop >= 0; {
		start := max(stop-int64(chunk)+1, 0)
		items, err := s.c.rdb.List(ctx, key, int(start), int(stop))
		s.trips.Add(1)
		if err != nil {
			return err
		}
		s.scanned.Add(int64(len(items)))
		for i := len(items) - 1; i >= 0; i-- {
			raw := items[i]
			if !s.m.quick(raw) {
				continue
			}
			f := failedJob(failure.Parse(start+int64(i), raw))
			if !s.m.failed(f) {
				continue
			}
			if !s.send(ctx, SearchHit{Place: SearchFailed, Job: f.Job, Failed: &f}) {
				return nil
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk = nextChunk(chunk, items)
		stop = start - 1
	}
	return nil
}

// delayed reads the delayed queue oldest first: a page of due times, then
// the first items of each of their buckets in one pipeline, and the rest of
// a big bucket in chunks.
func (s *searcher) delayed(ctx context.Context) error {
	keys := s.c.rdb.Keys()
	return delayedio.Buckets(ctx, s.c.rdb, searchBucketPage, func(tss []int64) error {
		s.trips.Add(1) // the page of the schedule
		rs := make([]rdb.ListRange, len(tss))
		for i, ts := range tss {
			rs[i] = rdb.ListRange{Key: keys.Delayed(ts), Start: 0, Stop: searchBucketItems - 1}
		}
		items, err := s.c.rdb.ListRanges(ctx, rs)
		s.trips.Add(1)
		if err != nil {
			return err
		}
		for i, ts := range tss {
			got, want, pos := items[i], searchBucketItems, 0
			for {
				if !s.bucketFrom(ctx, ts, pos, got) {
					return ctx.Err()
				}
				if len(got) < want {
					break
				}
				// a big bucket: read on in chunks
				pos, want = pos+len(got), searchChunkMax
				got, err = s.c.rdb.List(ctx, keys.Delayed(ts), pos, pos+want-1)
				s.trips.Add(1)
				if err != nil {
					break // of another type meanwhile: a mover sets it aside
				}
			}
		}
		return ctx.Err()
	})
}

// bucketFrom matches items of bucket ts read from position pos.
func (s *searcher) bucketFrom(ctx context.Context, ts int64, pos int, items [][]byte) bool {
	s.scanned.Add(int64(len(items)))
	for i, raw := range items {
		if !s.m.quick(raw) {
			continue
		}
		it := delayedio.Decode(ts, pos+i, raw)
		j := decodeJob(it.Queue, raw)
		if !s.m.job(j) {
			continue
		}
		if !s.send(ctx, SearchHit{Place: SearchDelayed, Job: j, Delayed: &it}) {
			return false
		}
	}
	return ctx.Err() == nil
}

// queued reads the queues, sorted by name, from the job a worker takes
// next: a pipeline of the first jobs of a group of queues per call, and the
// rest of a long queue in chunks.
func (s *searcher) queued(ctx context.Context) error {
	names := []string{s.m.q.Queue}
	if s.m.q.Queue == "" {
		var err error
		names, err = s.c.rdb.KnownQueues(ctx)
		s.trips.Add(1)
		if err != nil {
			return err
		}
		slices.Sort(names)
	}
	keys := s.c.rdb.Keys()
	for g := 0; g < len(names); g += searchQueueGroup {
		group := names[g:min(g+searchQueueGroup, len(names))]
		rs := make([]rdb.ListRange, len(group))
		for i, q := range group {
			rs[i] = rdb.ListRange{Key: keys.Queue(q), Start: 0, Stop: searchQueueItems - 1}
		}
		heads, err := s.c.rdb.ListRanges(ctx, rs)
		s.trips.Add(1)
		if err != nil {
			return err
		}
		for i, q := range group {
			items, chunk := heads[i], searchQueueItems
			for pos := 0; ; {
				s.scanned.Add(int64(len(items)))
				for _, raw := range items {
					if !s.m.quick(raw) {
						continue
					}
					j := decodeJob(q, raw)
					if !s.m.job(j) {
						continue
					}
					if !s.send(ctx, SearchHit{Place: SearchQueued, Job: j}) {
						return nil
					}
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				if len(items) < chunk {
					break
				}
				pos += len(items)
				chunk = nextChunk(chunk, items)
				items, err = s.c.rdb.List(ctx, keys.Queue(q), pos, pos+chunk-1)
				s.trips.Add(1)
				if err != nil {
					break // of another type: nothing to read
				}
			}
		}
	}
	return nil
}

// searchMatcher is a SearchQuery made ready to match.
type searchMatcher struct {
	q SearchQuery
	// plain are the fields whose bytes stand as they are in any JSON
	// encoding: an entry without them cannot match, and is rejected
	// before it is decoded.
	plain [][]byte
}

func newSearchMatcher(q SearchQuery) (searchMatcher, error) {
	if q.Text == "" && q.Class == "" && q.Queue == "" && q.Exception == "" {
		return searchMatcher{}, ErrEmptySearch
	}
	m := searchMatcher{q: q}
	for _, s := range []string{q.Text, q.Class, q.Exception} {
		if s != "" && plainJSON(s) {
			m.plain = append(m.plain, []byte(s))
		}
	}
	return m, nil
}

// plainJSON reports whether s is written the same by every JSON encoder:
// printable ASCII without the characters some escape (" \ / < > & ').
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b < 0x20 || b >= 0x7f || strings.IndexByte(`"\/<>&'`, b) >= 0 {
			return false
		}
	}
	return true
}

// quick reports whether raw may match: false only when it cannot.
func (m searchMatcher) quick(raw []byte) bool {
	for _, p := range m.plain {
		if !bytes.Contains(raw, p) {
			return false
		}
	}
	return true
}

// job matches a queued or delayed job (no exception).
func (m searchMatcher) job(j Job) bool {
	if m.q.Exception != "" {
		return false
	}
	return m.jobFields(j)
}

func (m searchMatcher) jobFields(j Job) bool {
	if m.q.Queue != "" && j.Queue != m.q.Queue {
		return false
	}
	if m.q.Class != "" && j.Class != m.q.Class {
		return false
	}
	if m.q.Text == "" {
		return true
	}
	if strings.Contains(j.ID, m.q.Text) || bytes.Contains(j.Args, []byte(m.q.Text)) {
		return true
	}
	if plainJSON(m.q.Text) || len(j.Args) == 0 {
		return false
	}
	// the args as one encoder writes them may escape what the text
	// holds (PHP writes é as \u00e9): compare with them unescaped
	var v any
	if json.Unmarshal(j.Args, &v) != nil {
		return false
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return false
	}
	return bytes.Contains(b.Bytes(), []byte(m.q.Text))
}

// failed matches a failed entry; one that is not JSON matches a text its
// bytes contain (and nothing else).
func (m searchMatcher) failed(f FailedJob) bool {
	if f.Unreadable {
		return m.q.Class == "" && m.q.Queue == "" && m.q.Exception == "" && m.q.Text != "" &&
			bytes.Contains(f.Raw, []byte(m.q.Text))
	}
	if m.q.Exception != "" && !strings.Contains(f.Exception, m.q.Exception) {
		return false
	}
	return m.jobFields(f.Job)
}
