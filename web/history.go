package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/resque-go/resque-go/client"
)

// historySampleGap is the least time between two samples of the history,
// by this dashboard or any other process (client.SampleHistory).
const historySampleGap = 5 * time.Second

// chartColumns bounds the columns a chart draws: longer series are drawn
// averaged over a few buckets a column (the API gives every bucket).
const chartColumns = 800

// historyRange is a choice of the chart's switch.
type historyRange struct {
	Name       string // 72h, 90d, 2y
	Resolution string // minute, hour, day
}

func historyRanges() []historyRange {
	return []historyRange{{"72h", "minute"}, {"90d", "hour"}, {"2y", "day"}}
}

// rangeOf reads ?range= (72h, 90d, 2y, or a resolution's name); "" is 72h.
func rangeOf(q string) (historyRange, bool) {
	for _, r := range historyRanges() {
		if q == r.Name || q == r.Resolution || (q == "" && r.Name == "72h") {
			return r, true
		}
	}
	return historyRange{}, false
}

// sampleHistory keeps the history while the dashboard's live view runs,
// so that it grows with Ruby or PHP workers alone (no resque-go process
// publishing). A Redis user that may not write just has no history.
func (h *hub) sampleHistory(ctx context.Context, now time.Time) {
	_ = h.c.SampleHistory(ctx, now, historySampleGap)
}

type historyPointView struct {
	Start     time.Time `json:"start"`
	Processed int64     `json:"processed"`
	Failed    int64     `json:"failed"`
}

// storageView states what the history may take in Redis.
type storageView struct {
	Keys      int   `json:"keys"`
	MaxFields int   `json:"max_fields"`
	MaxBytes  int64 `json:"max_bytes"`
}

type historyView struct {
	Range       string             `json:"range"`
	Resolution  string             `json:"resolution"`
	StepSeconds int64              `json:"step_seconds"`
	From        time.Time          `json:"from"`
	To          time.Time          `json:"to"`
	Processed   int64              `json:"processed"`
	Failed      int64              `json:"failed"`
	Points      []historyPointView `json:"points"`
	Storage     storageView        `json:"storage"`
}

func historyStorage() storageView {
	st := storageView{Keys: 1, MaxBytes: client.HistoryMaxBytes}
	for _, r := range client.HistoryResolutions() {
		st.Keys++
		st.MaxFields += r.Slots
	}
	return st
}

// historyCache keeps the last reading of each range for one poll
// interval: the pages and API calls of that interval share it, as they
// share the overview's reading.
type historyCache struct {
	mu   sync.Mutex
	last map[string]historyReading
}

type historyReading struct {
	at time.Time
	v  historyView
}

func (s *server) readHistory(ctx context.Context, rg historyRange) (historyView, error) {
	now := s.now()
	c := &s.live.hist
	c.mu.Lock()
	r, ok := c.last[rg.Name]
	c.mu.Unlock()
	if ok && now.Sub(r.at) >= 0 && now.Sub(r.at) < s.opt.PollInterval {
		return r.v, nil
	}
	v, err := s.readHistoryNow(ctx, rg, now)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if c.last == nil {
		c.last = map[string]historyReading{}
	}
	c.last[rg.Name] = historyReading{at: now, v: v}
	c.mu.Unlock()
	return v, nil
}

func (s *server) readHistoryNow(ctx context.Context, rg historyRange, now time.Time) (historyView, error) {
	h, err := s.c.History(ctx, rg.Resolution, now)
	if err != nil {
		return historyView{}, err
	}
	v := historyView{Range: rg.Name, Resolution: rg.Resolution, StepSeconds: int64(h.Step / time.Second),
		Processed: h.Processed, Failed: h.Failed, Points: make([]historyPointView, len(h.Points)), Storage: historyStorage()}
	for i, p := range h.Points {
		v.Points[i] = historyPointView{Start: p.Start, Processed: p.Processed, Failed: p.Failed}
	}
	if n := len(h.Points); n > 0 {
		v.From, v.To = h.Points[0].Start, h.Points[n-1].Start.Add(h.Step)
	}
	return v, nil
}

// apiHistory answers GET /api/history?range=72h|90d|2y.
func (s *server) apiHistory(w http.ResponseWriter, r *http.Request) {
	rg, ok := rangeOf(r.URL.Query().Get("range"))
	if !ok {
		s.fail(w, r, http.StatusBadRequest, "range: want 72h, 90d or 2y")
		return
	}
	v, err := s.readHistory(r.Context(), rg)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// chartView is a history drawn as inline SVG: paths in a viewBox of
// Columns x 100, the rest as text around it (no script, no inline style:
// the page's Content-Security-Policy allows neither).
type chartView struct {
	Range   string
	Ranges  []historyRange
	Columns int
	// Area and Line draw processed, Failed draws failed.
	Area, Line, FailedLine string
	YMax                   int64
	// Per is the unit of a column's height ("minute"), Avg how many
	// buckets a column averages (1: none).
	Per                    string
	Avg                    int
	Labels                 []string
	Processed, Failed      int64
	PeakAt                 time.Time
	Peak                   int64
	Storage                storageView
	HistoryFrom, HistoryTo time.Time
	Error                  string
}

func (s *server) chart(ctx context.Context, q string) chartView {
	rg, ok := rangeOf(q)
	if !ok {
		rg, _ = rangeOf("")
	}
	c := chartView{Range: rg.Name, Ranges: historyRanges(), Storage: historyStorage(), Per: rg.Resolution}
	h, err := s.readHistory(ctx, rg)
	if err != nil {
		c.Error = clean(err.Error())
		return c
	}
	drawChart(&c, h)
	return c
}

// drawChart lays h out in at most chartColumns columns.
func drawChart(c *chartView, h historyView) {
	c.Processed, c.Failed, c.HistoryFrom, c.HistoryTo = h.Processed, h.Failed, h.From, h.To
	n := len(h.Points)
	if n == 0 {
		return
	}
	c.Avg = (n + chartColumns - 1) / chartColumns
	c.Columns = (n + c.Avg - 1) / c.Avg
	proc, fail := make([]float64, c.Columns), make([]float64, c.Columns)
	var top float64
	for i, p := range h.Points {
		col := i / c.Avg
		proc[col] += float64(p.Processed) / float64(c.Avg)
		fail[col] += float64(p.Failed) / float64(c.Avg)
		if p.Processed > c.Peak {
			c.Peak, c.PeakAt = p.Processed, p.Start
		}
	}
	for i := range proc {
		top = max(top, proc[i], fail[i])
	}
	c.YMax = niceCeil(top)
	c.Line, c.FailedLine = chartPath(proc, float64(c.YMax)), chartPath(fail, float64(c.YMax))
	c.Area = c.Line + fmt.Sprintf("L%d 100L0 100Z", c.Columns-1)
	layout := map[string]string{"minute": "Mon 15:04", "hour": "Jan 2", "day": "Jan 2006"}[h.Resolution]
	for i := 0; i <= 4; i++ {
		at := h.From.Add(time.Duration(float64(h.To.Sub(h.From)) * float64(i) / 4))
		c.Labels = append(c.Labels, at.UTC().Format(layout))
	}
}

// chartPath is an SVG path through vals, x = the column, y = 100 at 0 and
// 0 at top.
func chartPath(vals []float64, top float64) string {
	b := make([]byte, 0, len(vals)*10)
	for i, v := range vals {
		if i == 0 {
			b = append(b, 'M')
		} else {
			b = append(b, 'L')
		}
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ' ')
		b = strconv.AppendFloat(b, 100-v/top*100, 'f', 1, 64)
	}
	return string(b)
}

// niceCeil is the least of 1, 2, 5 times a power of ten at or above v
// (at least 1).
func niceCeil(v float64) int64 {
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if float64(m*p) >= v {
				return m * p
			}
		}
	}
}

// overviewPageData is the overview's reading with the chart.
type overviewPageData struct {
	overviewView
	Chart chartView
}
