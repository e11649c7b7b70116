package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/stats"
)

// What every --json output follows (the CLI reference states it for users):
//   - one JSON value, an object; keys are snake_case at every depth (job
//     payloads and args are printed as they are stored);
//   - a list command prints {"items": [...], "total": N} (listJSON), plus
//     fields of its own where it has them (a paged list says its offset
//     and limit; total then counts every match, not only the page);
//   - a time is an RFC 3339 string in UTC (jsonTime), null when there is
//     none; a stored time is also given as stored, in <name>_raw (text) or
//     <name>_unix (Unix seconds);
//   - a number is rounded as the text output shows it (round).

// listJSON is a list command's --json output.
type listJSON[T any] struct {
	Items []T `json:"items"`
	Total int `json:"total"`
}

// listOf is items as a list command prints them: never null, total their
// number.
func listOf[T any](items []T) listJSON[T] {
	if items == nil {
		items = []T{}
	}
	return listJSON[T]{Items: items, Total: len(items)}
}

// writeJSON prints v as indented JSON, HTML characters unescaped.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// jsonTime is t in UTC, RFC 3339 to the second; nil (null) for the zero
// time and for times at or before the Unix epoch, which Resque writers use
// for "never".
func jsonTime(t time.Time) *string {
	if t.IsZero() || t.Unix() <= 0 {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

// storedTime reads a time as Resque software stores it (Ruby, PHP, Node and
// resque-go forms); the zero time when it cannot be read without guessing.
func storedTime(s string) time.Time { return protocol.ParseStoredTime(s) }

// humanTime is t as text output prints it: "2026-11-28 14:05:03 UTC", "-"
// for no time.
func humanTime(t time.Time) string { return stats.FormatTime(t) }

// humanStored is a stored time for text output: humanTime when it can be
// read, else the stored text as it is ("-" when empty).
func humanStored(s string) string {
	if t := storedTime(s); !t.IsZero() {
		return humanTime(t)
	}
	return orDash(s)
}

// round is f to n decimals (NaN and infinities, which JSON cannot carry,
// as 0).
func round(f float64, n int) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	p := math.Pow10(n)
	return math.Round(f*p) / p
}

// plural is "1 entry", "2 entries": n and the word that goes with it.
func plural[N int | int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
