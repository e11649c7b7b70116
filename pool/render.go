package pool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/resque-go/resque-go/stats"
)

// StatusDoc is the JSON document `resque-go pool status --json` prints:
// the records as every list of resque-go's --json outputs them, with their
// total.
type StatusDoc struct {
	Items []Record `json:"items"`
	Total int      `json:"total"`
}

// WriteStatusJSON writes recs as a StatusDoc, CPU percentages rounded to
// one decimal as RenderStatus shows them.
func WriteStatusJSON(w io.Writer, recs []Record) error {
	out := make([]Record, len(recs))
	for i, r := range recs {
		r.CPUPercent = roundPercent(r.CPUPercent)
		children := make([]Child, len(r.Children))
		for j, c := range r.Children {
			c.CPUPercent = roundPercent(c.CPUPercent)
			children[j] = c
		}
		r.Children = children
		out[i] = r
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(StatusDoc{Items: out, Total: len(out)})
}

func roundPercent(f float64) float64 { return math.Round(f*10) / 10 }

// RenderStatus writes recs as two tables: the managers, then their
// children. Ages come from the records (as of their last refresh), so the
// output depends on them alone.
func RenderStatus(w io.Writer, recs []Record) error {
	var b bytes.Buffer
	if len(recs) == 0 {
		b.WriteString("no pool manager is running (no status record in this namespace)\n")
		_, err := w.Write(b.Bytes())
		return err
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "POOL\tCONFIG\tFORMAT\tSTATE\tUPTIME\tRSS\tCPU%\tCHILDREN\tUPDATED")
	for _, r := range recs {
		running := 0
		for _, c := range r.Children {
			if c.State == ChildRunning {
				running++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d running\t%s\n", poolName(r), r.Config, r.Format, r.State,
			stats.FormatDuration(r.UpdatedAt.Sub(r.StartedAt)), stats.FormatBytes(r.RSSBytes), stats.FormatPercent(r.CPUPercent), running, len(r.Children),
			stats.FormatTime(r.UpdatedAt))
	}
	_ = tw.Flush()
	b.WriteByte('\n')
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "POOL\tSLOT\tQUEUES\tPID\tSTATE\tRESTARTS\tRECYCLED\tUPTIME\tRSS\tCPU%\tLAST EXIT")
	for _, r := range recs {
		for _, c := range r.Children {
			pid, up, rss, cpu := "-", "-", "-", "-"
			if c.PID > 0 {
				pid, up, rss, cpu = strconv.Itoa(c.PID), stats.FormatDuration(time.Duration(c.UptimeS*float64(time.Second))), stats.FormatBytes(c.RSSBytes), stats.FormatPercent(c.CPUPercent)
			}
			last := c.LastExit
			if c.RestartAt != nil {
				last += fmt.Sprintf(" (restart in %s)", stats.FormatDuration(c.RestartAt.Sub(r.UpdatedAt)))
			}
			if c.PID == 0 && c.LastExitReason != "" { // why the slot waits: its child failed
				last += ": " + c.LastExitReason
			}
			if last == "" {
				last = "-"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", poolName(r), c.Slot, c.Queues, pid, c.State, c.Restarts, c.Recycles, up, rss, cpu, last)
		}
	}
	_ = tw.Flush()
	b.WriteString("\nCPU%: 100 = one core busy (at most 100 x cores); a POOL line shows the manager alone.\n")
	_, err := w.Write(b.Bytes())
	return err
}

func poolName(r Record) string { return r.Host + ":" + strconv.Itoa(r.PID) }
