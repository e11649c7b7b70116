package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/massqueue"
)

// mass pause / resume report what they did with the source's batches, a
// second pause or resume says it changed nothing, and mass status shows
// the paused source and its parked batch.
func TestMassPauseResumeBatches(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	ctx := context.Background()
	cfgPath := writeMassConfig(t)
	cfg, err := massqueue.LoadConfig(cfgPath, "h")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.client.UnitBeat(ctx, "imports", "n1-0", time.Now()); err != nil {
		t.Fatal(err)
	}
	b, err := massio.NewBatch(e.client, "s1", "imp", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Push(ctx, massqueue.Job{Class: "J"}, massqueue.Job{Class: "J"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	a, err := massio.NewAllocator(massio.AllocatorConfig{Client: e.client, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	id := b.ID()

	if out, want := e.massOK("", "pause", "--source", "s1"), "s1: paused\n  batch "+id+" in pool imports: parked, off unit n1-0\n"; out != want {
		t.Errorf("pause:\n%s\nwant:\n%s", out, want)
	}
	if out := e.massOK("", "pause", "--source", "s1"); !strings.HasPrefix(out, "s1: already paused (no change)\n") {
		t.Errorf("second pause: %q", out)
	}
	var pr struct {
		massqueue.PauseResult
		Result string
	}
	if err := json.Unmarshal([]byte(e.massOK("", "pause", "--json", "--source", "s1")), &pr); err != nil ||
		pr.Result != "already paused" || !pr.Already || len(pr.Batches) != 1 || pr.Batches[0].ID != id {
		t.Errorf("pause --json: %+v %v", pr, err)
	}

	var st massqueue.Status
	if err := json.Unmarshal([]byte(e.massOK("", "status", "--json", "--config", cfgPath)), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Paused) != 1 || st.Paused[0] != "s1" || len(st.Batch) != 1 || len(st.Batch[0].Sources) != 1 {
		t.Fatalf("status: %+v", st)
	}
	if s := st.Batch[0].Sources[0]; !s.Paused || !s.Parked || s.Active != id || s.Unit != "n1-0" || s.Remaining != 2 ||
		len(st.Batch[0].Units[0].Batches) != 0 {
		t.Errorf("status of s1: %+v, unit %+v", s, st.Batch[0].Units[0])
	}
	out := e.massOK("", "status", "--config", cfgPath)
	for _, want := range []string{"paused sources: s1\n", "source s1: active " + id + " on n1-0 (parked: paused, 2 left), backlog 0\n", "unit n1-0: alive"} {
		if !strings.Contains(out, want) {
			t.Errorf("status text lacks %q:\n%s", want, out)
		}
	}

	if out, want := e.massOK("", "resume", "--source", "s1"), "s1: resumed\n  batch "+id+" in pool imports: back on unit n1-0\n"; out != want {
		t.Errorf("resume:\n%s\nwant:\n%s", out, want)
	}
	if out := e.massOK("", "resume", "--source", "s1"); out != "s1: not paused (no change)\n" {
		t.Errorf("second resume: %q", out)
	}
	var rr struct {
		massqueue.ResumeResult
		Result string
	}
	if err := json.Unmarshal([]byte(e.massOK("", "resume", "--json", "--source", "s1")), &rr); err != nil || rr.Result != "not paused" || rr.WasPaused {
		t.Errorf("resume --json: %+v %v", rr, err)
	}
	if got := e.strs("LRANGE", e.ns+":pool:imports:n1-0:queues", 0, -1); len(got) != 1 || got[0] != id {
		t.Errorf("unit list after resume: %q", got)
	}
	if out := e.massOK("", "status", "--config", cfgPath); strings.Contains(out, "paused") {
		t.Errorf("status after resume:\n%s", out)
	}
	if code, _, _ := e.mass("", "pause", "--source", "a:b"); code != ExitUsage {
		t.Errorf("pause a:b: exit %d", code)
	}
}
