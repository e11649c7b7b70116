package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/rs/zerolog"
	ucli "github.com/urfave/cli/v2"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/rdb"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/stats"
	"github.com/resque-go/resque-go/worker"
)

func demoCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "demo",
		Usage: "run a worker over sample jobs on an embedded Redis (no Redis server needed)",
		Description: "Starts an in-process Redis-protocol server (miniredis), enqueues jobs captured from\n" +
			"Ruby Resque, php-resque and node-resque (see fixtures/), a failing job and a garbage\n" +
			"payload, runs a worker with two slots over them, then prints the counters and failures.",
		Action: func(c *ucli.Context) error { return runDemo(c.Context, c.App.Writer) },
	}
}

type demoJob struct {
	origin string
	raw    []byte
}

func demoJobs() ([]demoJob, error) {
	var jobs []demoJob
	for _, src := range []struct{ dir, origin string }{
		{"ruby-resque-3.0.0", "Ruby Resque 3.0"},
		{"php-resque-resque-master", "php-resque"},
		{"node-resque-9.7.1", "node-resque 9.7"},
	} {
		d, err := fixtures.Load(src.dir, "enqueue")
		if err != nil {
			return nil, err
		}
		for _, p := range d.List("resque:queue:mail") {
			jobs = append(jobs, demoJob{src.origin, []byte(p)})
		}
	}
	own, err := protocol.NewPayload("Archive", []byte(`[{"repo":"resque-go","ref":"main"}]`), protocol.EnqueueOptions{})
	if err != nil {
		return nil, err
	}
	jobs = append(jobs,
		demoJob{"resque-go", own},
		demoJob{"Ruby Resque 3.0", []byte(`{"class":"FailJob","args":[1]}`)},
		demoJob{"unknown producer", []byte(`this is not JSON {`)},
	)
	return jobs, nil
}

func runDemo(ctx context.Context, out io.Writer) error {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		return fmt.Errorf("demo: start embedded redis: %w", err)
	}
	defer mr.Close()
	client, err := rdb.New(rdb.Options{URL: mr.Addr()})
	if err != nil {
		return err
	}
	defer client.Close()

	jobs, err := demoJobs()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "resque-go demo: embedded Redis on %s, namespace %q\n\n", mr.Addr(), protocol.DefaultNamespace)
	fmt.Fprintln(out, "Enqueued (raw bytes as the producers wrote them):")
	for _, j := range jobs {
		if err := client.Enqueue(ctx, "mail", j.raw); err != nil {
			return err
		}
		fmt.Fprintf(out, "  %-17s %s\n", j.origin, clip(string(j.raw), 100))
	}

	reg := worker.NewRegistry()
	show := func(ctx context.Context, j *worker.Job) error {
		var args any
		if len(j.Args) > 0 {
			if err := j.DecodeArgs(&args); err != nil {
				return err
			}
		}
		return nil
	}
	for _, class := range []string{"MailJob", "Mail_Job", "NoArgsJob", "NoArgs_Job", "Archive"} {
		reg.Register(class, show)
	}
	reg.Register("FailJob", func(ctx context.Context, j *worker.Job) error {
		return errors.New("boom <1>")
	})

	var mu sync.Mutex
	remaining := len(jobs)
	allDone := make(chan struct{})
	fmt.Fprintln(out, "\nWorker on queue mail, 2 slots, 2 attempts per job:")
	log := zerolog.Nop()
	w, err := runtime.New(runtime.Config{
		Client: client, Registry: reg, Queues: "mail", Concurrency: 2, Hostname: "demo",
		HeartbeatInterval: time.Second, Logger: &log, Retry: worker.RetryPolicy{MaxAttempts: 2},
		OnFinish: func(f runtime.Finished) {
			mu.Lock()
			defer mu.Unlock()
			mark, what := "ok   ", string(f.Payload)
			switch f.Outcome {
			case "fail":
				mark, what = "FAIL ", f.Exception+": "+f.Error
			case "retry":
				mark, what = "RETRY", f.Exception+": "+f.Error+" (attempt failed; re-enqueued, the attempt counted)"
			}
			fmt.Fprintf(out, "  %s %-10s %-8s %s\n", mark, f.Class, f.Duration.Round(time.Microsecond), clip(what, 80))
			if f.Outcome == "retry" {
				return
			}
			if remaining--; remaining == 0 {
				close(allDone)
			}
		},
	})
	if err != nil {
		return err
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	select {
	case <-allDone:
	case <-time.After(30 * time.Second):
		w.Shutdown()
		return errors.New("demo: jobs did not finish within 30s")
	}
	w.Stop()
	return printDemoResults(ctx, out, client)
}

func printDemoResults(ctx context.Context, out io.Writer, client *rdb.Client) error {
	k := client.Keys()
	fmt.Fprintln(out, "\nCounters (what resque-web and stats read):")
	for _, c := range []struct{ key, what string }{
		{k.StatProcessed(), "jobs done, failed ones included (as Ruby Resque counts)"},
		{k.StatFailed(), "jobs failed"},
		{k.StatRetries(), "failed attempts retried"},
	} {
		n, err := client.Int(ctx, c.key)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  %-40s %10d  %s\n", c.key, n, c.what)
	}
	qs, err := client.ScanKeys(ctx, k.QueueStatPattern())
	if err != nil {
		return err
	}
	sort.Strings(qs)
	for _, key := range qs {
		n, err := client.Int(ctx, key)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  %-40s %10d  %s\n", key, n, queueStatMeaning(k, key, n))
	}
	failed, err := client.List(ctx, k.Failed(), 0, -1)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nFailed entries (%s, %d):\n", k.Failed(), len(failed))
	for _, f := range failed {
		var e struct {
			Exception string          `json:"exception"`
			Error     string          `json:"error"`
			Queue     string          `json:"queue"`
			Worker    string          `json:"worker"`
			FailedAt  string          `json:"failed_at"`
			Payload   json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(f, &e); err != nil {
			return fmt.Errorf("demo: failed entry is not JSON: %w", err)
		}
		fmt.Fprintf(out, "  %s  %s: %s\n    queue=%s worker=%s\n    payload=%s\n", humanStored(e.FailedAt), e.Exception, clip(e.Error, 90), e.Queue, e.Worker, clip(string(e.Payload), 90))
	}
	pending, err := client.Len(ctx, k.Queue("mail"))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nPending in %s: %d. Every job ran or is in failed.\n", k.Queue("mail"), pending)
	return nil
}

// queueStatMeaning says what the queuestat:<host>:<stat>:<queue> counter key
// holding n counts; the two time counters are sums of milliseconds.
func queueStatMeaning(k protocol.Keys, key string, n int64) string {
	parts := strings.SplitN(strings.TrimPrefix(key, strings.TrimSuffix(k.QueueStatPattern(), "*")), ":", 3)
	if len(parts) != 3 {
		return ""
	}
	host, stat, q := parts[0], parts[1], parts[2]
	total := stats.FormatDuration(time.Duration(n) * time.Millisecond)
	switch stat {
	case protocol.QueueStatDequeued:
		return fmt.Sprintf("jobs taken from queue %s on host %s", q, host)
	case protocol.QueueStatProcessed:
		return "of them succeeded"
	case protocol.QueueStatFailed:
		return "of them failed"
	case protocol.QueueStatRetries:
		return "of them retried"
	case protocol.QueueStatQueueTime:
		return "ms waited in the queue, summed: " + total + " (the sample jobs carry the time they were captured)"
	case protocol.QueueStatProcessingTime:
		return "ms spent running, summed: " + total
	}
	return ""
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}
