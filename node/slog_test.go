package node_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/node"
)

// slogRecords reads the JSON lines of a slog.JSONHandler.
func slogRecords(t *testing.T, out string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not a JSON record: %q", line)
		}
		recs = append(recs, r)
	}
	return recs
}

// findRecord returns the record whose message begins with msg.
func findRecord(recs []map[string]any, msg string) map[string]any {
	for _, r := range recs {
		if m, _ := r["msg"].(string); strings.HasPrefix(m, msg) {
			return r
		}
	}
	return nil
}

// A node given a *slog.Logger logs through it: message, level and the
// fields as attributes.
func TestWithSlogLogsThroughSlog(t *testing.T) {
	e := newEnv(t)
	var out syncBuffer
	l := slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
	n, err := node.New(e.config("never_enqueued"), nil, node.WithSlog(l), node.WithTitle(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	n.Shutdown()
	recs := slogRecords(t, out.String())
	if r := findRecord(recs, "no handler registered"); r == nil || r["level"] != "WARN" {
		t.Errorf("no WARN record about the missing handler (%v):\n%s", r, out.String())
	}
	if r := findRecord(recs, "worker started"); r == nil || r["queues"] != "never_enqueued" || r["host"] != "nodehost" || r["level"] != "INFO" {
		t.Errorf("the start record lacks its attributes (%v):\n%s", r, out.String())
	}
}

// A node built with no logger option logs through slog.Default() (stderr
// at info unless the program set its own), not nowhere.
func TestDefaultLoggerIsSlogDefault(t *testing.T) {
	e := newEnv(t)
	var out syncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&out, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	n, err := node.New(e.config("a"), nil, node.WithTitle(nil))
	if err != nil {
		t.Fatal(err)
	}
	n.Shutdown()
	if r := findRecord(slogRecords(t, out.String()), "no handler registered"); r == nil {
		t.Errorf("nothing logged through slog.Default():\n%s", out.String())
	}
}
