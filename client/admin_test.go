package client_test

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/massqueue"
	"github.com/resque-go/resque-go/plan"
	"github.com/resque-go/resque-go/unique"
)

// Plans are added, read back, listed and removed; the errors match both
// this package's sentinels and the plan package's.
func TestClientPlans(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	e := newEnv(t, client.Options{Now: fixedClock(now)})
	c := e.c
	id, err := c.AddPlan(ctx(), plan.Plan{ID: "nightly", Queue: "reports", Class: "Report", Args: json.RawMessage(`[1]`), Cron: "0 3 * * *"})
	if err != nil || id != "nightly" {
		t.Fatalf("AddPlan = %q, %v", id, err)
	}
	p, err := c.Plan(ctx(), "nightly")
	if err != nil || p.Class != "Report" || p.Queue != "reports" || !p.NextRun.Equal(time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC)) {
		t.Fatalf("Plan = %+v, %v", p, err)
	}
	if _, err := c.AddPlan(ctx(), plan.Plan{ID: "nightly", Queue: "reports", Class: "Report", Cron: "0 3 * * *"}); !errors.Is(err, client.ErrPlanExists) || !errors.Is(err, plan.ErrExists) {
		t.Errorf("AddPlan of a taken id: %v", err)
	}
	_, err = c.AddPlan(ctx(), plan.Plan{Queue: "reports", Cron: "0 3 * * *"})
	if !errors.Is(err, client.ErrInvalid) || !errors.Is(err, plan.ErrInvalid) || !strings.HasPrefix(err.Error(), "client: add plan: invalid plan: ") {
		t.Errorf("AddPlan without a class: %v", err)
	}
	ps, err := c.Plans(ctx())
	if err != nil || len(ps) != 1 || ps[0].ID != "nightly" {
		t.Fatalf("Plans = %+v, %v", ps, err)
	}
	if err := c.RemovePlan(ctx(), "nightly"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemovePlan(ctx(), "nightly"); !errors.Is(err, client.ErrNoSuchPlan) || !errors.Is(err, plan.ErrNotFound) {
		t.Errorf("RemovePlan of a removed plan: %v", err)
	}
	if _, err := c.Plan(ctx(), "nightly"); !errors.Is(err, client.ErrNoSuchPlan) {
		t.Errorf("Plan of a removed plan: %v", err)
	}
}

// Delayed jobs are listed, counted, removed by filter and cleared.
func TestClientDelayed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	c := e.c
	at := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, class := range []string{"A", "B", "A"} {
		if _, err := c.EnqueueAt(ctx(), at.Add(time.Duration(i)*time.Minute), "q", class, i); err != nil {
			t.Fatal(err)
		}
	}
	items, err := c.DelayedJobs(ctx(), delayed.Filter{Class: "A"}, 0, 0)
	if err != nil || len(items) != 2 || !items[0].At.Equal(at) || items[1].Class != "A" || string(items[1].Args) != "[2]" {
		t.Fatalf("DelayedJobs = %+v, %v", items, err)
	}
	if n, err := c.DelayedCount(ctx(), delayed.Filter{}); err != nil || n.Items != 3 || n.Buckets != 3 {
		t.Errorf("DelayedCount = %+v, %v", n, err)
	}
	if b, err := c.DelayedAt(ctx(), at.Add(time.Minute)); err != nil || len(b) != 1 || b[0].Class != "B" {
		t.Errorf("DelayedAt = %+v, %v", b, err)
	}
	if _, err := c.DelayedJobs(ctx(), delayed.Filter{Args: json.RawMessage(`[1]`)}, 0, 0); !errors.Is(err, client.ErrInvalid) || !errors.Is(err, delayed.ErrBadFilter) || !strings.HasPrefix(err.Error(), "client: delayed jobs: bad filter: ") {
		t.Errorf("DelayedJobs with args but no class: %v", err)
	}
	if _, err := c.RemoveDelayed(ctx(), delayed.Filter{}, nil); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("RemoveDelayed without a filter: %v", err)
	}
	var steps int
	r, err := c.RemoveDelayed(ctx(), delayed.Filter{Class: "A"}, func(delayed.Progress) { steps++ })
	if err != nil || r.Removed != 2 || steps == 0 {
		t.Fatalf("RemoveDelayed = %+v, %v (%d steps)", r, err, steps)
	}
	r, err = c.ClearDelayed(ctx(), nil)
	if err != nil || r.Removed != 1 {
		t.Fatalf("ClearDelayed = %+v, %v", r, err)
	}
	if n, err := c.DelayedCount(ctx(), delayed.Filter{}); err != nil || n.Items != 0 {
		t.Errorf("after ClearDelayed: %+v, %v", n, err)
	}
}

// A uid is listed, shown and cleared; a cleared uid takes a new job.
func TestClientUnique(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	c := e.c
	if _, err := c.EnqueueRaw(ctx(), "q", "Sync", []byte(`[1]`), client.Unique("acct-7")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.EnqueueRaw(ctx(), "q", "Sync", []byte(`[1]`), client.Unique("acct-7")); !errors.Is(err, client.ErrDuplicate) {
		t.Fatalf("second unique enqueue: %v", err)
	}
	ids, err := c.UniqueIDs(ctx())
	if err != nil || len(ids) != 1 || ids[0].UID != "acct-7" || ids[0].State != "queued" {
		t.Fatalf("UniqueIDs = %+v, %v", ids, err)
	}
	if in, err := c.UniqueID(ctx(), "acct-7"); err != nil || in.State != "queued" {
		t.Errorf("UniqueID = %+v, %v", in, err)
	}
	if res, err := c.ClearUnique(ctx(), "acct-7", ""); err != nil || res != unique.ClearCleared {
		t.Fatalf("ClearUnique = %q, %v", res, err)
	}
	if res, err := c.ClearUnique(ctx(), "acct-7", ""); err != nil || res != unique.ClearAbsent {
		t.Errorf("ClearUnique of a free uid = %q, %v", res, err)
	}
	if in, err := c.UniqueID(ctx(), "acct-7"); err != nil || in.State != "" {
		t.Errorf("UniqueID after clear = %+v, %v", in, err)
	}
	if _, err := c.ClearUnique(ctx(), " ", ""); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("ClearUnique of an empty uid: %v", err)
	}
}

// Schedules reads the dynamic schedules Resque.set_schedule writes.
func TestClientSchedules(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	e.do("HSET", e.key("persistent_schedules"), "cleanup", `{"class":"Cleanup","queue":"low","every":"1h"}`)
	o, err := e.c.Schedules(ctx(), client.ScheduleQuery{})
	if err != nil || len(o.Schedules) != 1 || o.Schedules[0].Name != "cleanup" || o.Schedules[0].Class != "Cleanup" || o.Master != "" {
		t.Fatalf("Schedules = %+v, %v", o, err)
	}
}

// The failed list's bulk operations: retry and remove by filter, clear.
func TestClientFailedBulk(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	for i, q := range []string{"mail", "mail", "img"} {
		entry := `{"failed_at":"2026/01/01 00:00:00 UTC","payload":{"class":"C","args":[` + string(rune('0'+i)) + `]},"exception":"E","error":"boom","backtrace":[],"worker":"w","queue":"` + q + `"}`
		e.do("RPUSH", e.key("failed"), entry)
	}
	r, err := e.c.RetryFailedWhere(ctx(), client.FailedFilter{Queue: "mail"})
	if err != nil || r.Done != 2 {
		t.Fatalf("RetryFailedWhere = %+v, %v", r, err)
	}
	if n, _ := e.c.QueueSize(ctx(), "mail"); n != 2 {
		t.Errorf("mail holds %d after the retry", n)
	}
	r, err = e.c.RemoveFailedWhere(ctx(), client.FailedFilter{Queue: "img"})
	if err != nil || r != (client.FailedResult{Done: 1}) {
		t.Fatalf("RemoveFailedWhere = %+v, %v", r, err)
	}
	if _, err := e.c.ClearFailed(ctx(), client.FailedFilter{}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.c.FailedCount(ctx()); err != nil || n != 0 {
		t.Errorf("FailedCount after ClearFailed = %d, %v", n, err)
	}
}

// Mass routes, settings, pause and resume, batches by id, the status.
func TestClientMassAdmin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, client.Options{})
	c := e.c
	if err := c.SetMassRoute(ctx(), "s1", "import", "big"); err != nil {
		t.Fatal(err)
	}
	rs, err := c.MassRoutes(ctx(), nil)
	if err != nil || len(rs) != 1 || rs[0].Pool != "big" || rs[0].Source != "s1" {
		t.Fatalf("MassRoutes = %+v, %v", rs, err)
	}
	cfg, err := massqueue.ParseConfig([]byte(massConfig), "host1")
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.MassRoute(ctx(), cfg, massqueue.KindBatch, "s1", "import"); err != nil || r.Pool != "big" || r.Problem != "" {
		t.Errorf("MassRoute = %+v, %v", r, err)
	}
	if r, err := c.MassRoute(ctx(), cfg, massqueue.KindStatic, "s2", "mail"); err != nil || r.Pool != "default" {
		t.Errorf("MassRoute by the mapping = %+v, %v", r, err)
	}
	if err := c.SetMassRoute(ctx(), "bad:source", "import", "big"); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("SetMassRoute of a bad source: %v", err)
	}
	if err := c.SetMassWeight(ctx(), "s1", 3); err != nil {
		t.Fatal(err)
	}
	if err := c.SetMassWeight(ctx(), "s1", 0); !errors.Is(err, client.ErrInvalid) {
		t.Errorf("SetMassWeight 0: %v", err)
	}
	if err := c.SetMassLimit(ctx(), "s1", 2); err != nil {
		t.Fatal(err)
	}
	if p, err := c.PauseMassSource(ctx(), "s1"); err != nil || p.Already {
		t.Fatalf("PauseMassSource = %+v, %v", p, err)
	}
	set, err := c.MassSettings(ctx())
	if err != nil || len(set) != 1 || set[0] != (massqueue.SourceSetting{Source: "s1", Weight: 3, Limit: 2, Paused: true}) {
		t.Fatalf("MassSettings = %+v, %v", set, err)
	}
	if _, err := c.ResumeMassSource(ctx(), "s1", massqueue.ResumeOptions{}); err != nil {
		t.Fatal(err)
	}
	id, err := c.CreateMassBatch(ctx(), "s1", "import", time.Minute)
	if err != nil || !strings.HasPrefix(id, "s1:import:") {
		t.Fatalf("CreateMassBatch = %q, %v", id, err)
	}
	b, err := c.OpenMassBatch(id, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CommitMassBatch(ctx(), id); !errors.Is(err, massqueue.ErrBatchEmpty) && !errors.Is(err, massqueue.ErrBatchExpired) {
		t.Errorf("CommitMassBatch of an empty batch: %v", err)
	}
	if err := b.Push(ctx(), client.MassJob{Class: "Import", Args: json.RawMessage(`[1]`)}); err != nil {
		t.Fatal(err)
	}
	if err := c.CommitMassBatch(ctx(), id); err != nil {
		t.Fatal(err)
	}
	if err := c.CommitMassBatch(ctx(), id); err == nil || !strings.HasPrefix(err.Error(), "client: commit mass batch: ") {
		t.Errorf("a second CommitMassBatch: %v", err)
	}
	if _, err := c.MassStatus(ctx(), nil, 0); err != nil {
		t.Fatal(err)
	}
	if f, err := c.MassFailures(ctx()); err != nil || len(f) != 0 {
		t.Errorf("MassFailures = %+v, %v", f, err)
	}
	if n, err := c.ReallocateMass(ctx(), ""); err != nil || n != 0 {
		t.Errorf("ReallocateMass = %d, %v", n, err)
	}
}

const massConfig = "pools: {static: {default: {worker_count: 1}}, batch: {big: {unit_count: 1, workers_per_unit: 1}}}\n" +
	"mapping: {static: {default: {default: default}}, batch: {default: {default: big}}}"

// The admin methods report a refused connection as ErrRefused, under
// their own operation, without the password.
func TestClientAdminRefused(t *testing.T) {
	t.Parallel()
	addr := strings.TrimPrefix(os.Getenv(redisEnv), "redis://")
	c, err := client.New(client.Options{URL: "redis://:" + secret + "@" + addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for op, call := range map[string]func() error{
		"add plan": func() error {
			_, err := c.AddPlan(ctx(), plan.Plan{Queue: "q", Class: "C", Every: time.Minute})
			return err
		},
		"delayed jobs": func() error { _, err := c.DelayedJobs(ctx(), delayed.Filter{}, 0, 0); return err },
		"unique ids":   func() error { _, err := c.UniqueIDs(ctx()); return err },
		"schedules":    func() error { _, err := c.Schedules(ctx(), client.ScheduleQuery{}); return err },
		"mass status":  func() error { _, err := c.MassStatus(ctx(), nil, 0); return err },
		"snapshot":     func() error { _, err := c.Snapshot(ctx(), ""); return err },
	} {
		err := call()
		if !errors.Is(err, client.ErrRefused) || !strings.HasPrefix(err.Error(), "client: "+op+": ") || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: %v", op, err)
		}
	}
}
