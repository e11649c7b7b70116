package failureio

import (
	"bytes"
	"context"

	"github.com/resque-go/resque-go/failure"
)

// scanBatch is how many entries one LRANGE of Scan reads: small enough
// that Redis answers each in well under 5 ms with entries of a few KB.
const scanBatch = 500

// ScanResult is one bounded step through the failed list.
type ScanResult struct {
	Entries []failure.Entry
	// From is the first index read; Next the index the next step starts
	// at: Total when the step read to the end of the list.
	From, Next, Total int64
}

// Scan is one bounded step of List for a page that goes on where the last
// one stopped: it reads at most read entries from index from on (0 is
// the oldest) and returns those f selects, at most limit of them (0: no
// limit but read). Next is the index after the last entry read, or after
// the last one returned when limit stopped it. Entries removed before
// from between two steps shift the list, so a later step may skip or
// repeat a few; within a step, a shift restarts the step, and after three
// tries it reads the part in one LRANGE, as List does.
func (s *Store) Scan(ctx context.Context, f failure.Filter, from int64, read, limit int) (ScanResult, error) {
	from = max(from, 0)
	for attempt := 1; ; attempt++ {
		res, moved, err := s.scan(ctx, f, from, read, limit, attempt > consistentReads)
		if err != nil || !moved {
			return res, err
		}
	}
}

// scan is one try of Scan; whole (after tries that saw the list move)
// reads the part in one LRANGE, which is consistent by itself.
func (s *Store) scan(ctx context.Context, f failure.Filter, from int64, read, limit int, whole bool) (res ScanResult, moved bool, err error) {
	key := s.c.Keys().Failed()
	res.Total, err = s.c.Len(ctx, key)
	if err != nil {
		return res, false, err
	}
	res.From, res.Next = from, min(from, res.Total)
	end := min(res.Total, from+int64(max(read, 1)))
	batch := s.batch
	if batch <= 0 {
		batch = scanBatch
	}
	if whole {
		batch = max(end-res.Next, 1)
	}
	may := prefilter(f)
	var last []byte
	for start := res.Next; start < end; start += batch {
		lo := start
		if last != nil {
			lo--
		}
		items, err := s.c.List(ctx, key, int(lo), int(min(start+batch, end)-1))
		if err != nil {
			return res, false, err
		}
		if last != nil {
			if len(items) == 0 || !bytes.Equal(items[0], last) {
				return ScanResult{}, true, nil
			}
			items = items[1:]
		}
		for i, raw := range items {
			res.Next = start + int64(i) + 1
			if !may(raw) {
				continue
			}
			e := failure.Parse(start+int64(i), raw)
			if !f.Match(e) {
				continue
			}
			res.Entries = append(res.Entries, e)
			if limit > 0 && len(res.Entries) >= limit {
				return res, false, nil
			}
		}
		if len(items) == 0 {
			res.Total = start // the list shrank at its end
			break
		}
		last = items[len(items)-1]
	}
	return res, false, nil
}
