package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/massio"
	"github.com/resque-go/resque-go/massqueue"
)

const massTestConfig = `
node_id: n1
pools:
  static: {general: {worker_count: 2}}
  batch:  {imports: {unit_count: 2, workers_per_unit: 2}}
mapping:
  static: {default: {default: general}}
  batch:  {default: {default: imports}, s3: {report: missing_batch}}
`

// mass runs `resque-go mass ARGS` against the test namespace, with stdin.
func (e *cliEnv) mass(stdin string, args ...string) (code int, stdout, stderr string) {
	e.t.Helper()
	out, errOut := newSyncBuffer(), newSyncBuffer()
	// flags may follow the arguments: the Redis ones go last
	argv := append(append([]string(nil), args...), e.redisArgs()...)
	parseMu.Lock()
	var unlock sync.Once
	defer unlock.Do(parseMu.Unlock)
	cmd := massCommand()
	app := baseApp(out, errOut, cmd)
	app.Reader = strings.NewReader(stdin)
	unlockOnAction(cmd, func() { unlock.Do(parseMu.Unlock) })
	code = runApp(context.Background(), app, append([]string{"resque-go", "mass"}, argv...))
	return code, out.String(), errOut.String()
}

func (e *cliEnv) massOK(stdin string, args ...string) string {
	e.t.Helper()
	code, out, errOut := e.mass(stdin, args...)
	if code != ExitOK {
		e.t.Fatalf("mass %v: exit %d\n%s%s", args, code, out, errOut)
	}
	return out
}

func writeMassConfig(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "config.yml")
	if err := os.WriteFile(p, []byte(massTestConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func (e *cliEnv) strs(cmd string, args ...any) []string {
	e.t.Helper()
	v, err := e.client.Do(context.Background(), cmd, args...)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, x := range v.([]any) {
		out = append(out, string(x.([]byte)))
	}
	return out
}

func TestMassEnqueueAndBatch(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	id := strings.TrimSpace(e.massOK("", "enqueue", "--source", "s1", "--name", "imp", "--class", "Imp", "--args", `{"a": 1}`))
	got := e.strs("LRANGE", e.ns+":unassigned", 0, -1)
	if len(got) != 1 || !regexp.MustCompile(`^\{"class":"Imp","sourceId":"s1","name":"imp","args":\{"a":1\},"id":"`+id+`","queue_time":\d+\.\d{4}\}$`).MatchString(got[0]) {
		t.Fatalf("unassigned %q (id %q)", got, id)
	}

	batch := strings.TrimSpace(e.massOK("", "batch", "create", "--source", "s2", "--name", "imp"))
	if !regexp.MustCompile(`^s2:imp:[0-9a-f]{8}$`).MatchString(batch) {
		t.Fatalf("batch id %q", batch)
	}
	e.massOK("", "batch", "push", "--class", "Imp", "--args", `[1]`, batch)
	out := e.massOK("{\"class\":\"Imp\",\"args\":[2]}\n\n{\"class\":\"Imp\",\"args\":[3],\"unique\":{\"uid\":\"u3\"}}\n", "batch", "push", "--json", batch)
	var res struct{ Pushed int }
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Pushed != 2 {
		t.Fatalf("push: %s %v", out, err)
	}
	items := e.strs("LRANGE", e.ns+":uncommitted:"+batch, 0, -1)
	if len(items) != 3 || !strings.Contains(items[0], `"args":[3],"unique":{"uid":"u3"}`) || !strings.Contains(items[2], `"args":[1]`) {
		t.Fatalf("uncommitted: %q", items)
	}
	e.massOK("", "batch", "commit", batch)
	if got := e.strs("LRANGE", e.ns+":committed", 0, -1); len(got) != 1 || got[0] != batch {
		t.Fatalf("committed: %q", got)
	}
	if code, _, errOut := e.mass("", "batch", "commit", batch); code != ExitFailure || !strings.Contains(errOut, "already committed") {
		t.Errorf("second commit: %d %s", code, errOut)
	}
	if code, _, errOut := e.mass("", "batch", "push", "--class", "Imp", batch); code != ExitFailure || !strings.Contains(errOut, "expired") {
		t.Errorf("push after commit: %d %s", code, errOut)
	}
	if code, _, errOut := e.mass("not json\n", "batch", "push", "s2:imp:00000000"); code != ExitUsage || !strings.Contains(errOut, "line 1") {
		t.Errorf("bad line: %d %s", code, errOut)
	}
	if code, _, _ := e.mass("", "enqueue", "--source", "a:b", "--name", "n", "--class", "C"); code != ExitUsage {
		t.Errorf("source with ':': exit %d", code)
	}
}

func TestMassRoutesStatusFailures(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	ctx := context.Background()
	cfgPath := writeMassConfig(t)
	e.massOK("", "route", "--source", "s1", "--name", "report", "--pool", "general")
	if code, _, _ := e.mass("", "route", "--source", "s1"); code != ExitUsage {
		t.Errorf("route without --pool: exit %d", code)
	}
	var routeList listJSON[massqueue.Route]
	if err := json.Unmarshal([]byte(e.massOK("", "routes", "--json", "--config", cfgPath)), &routeList); err != nil || routeList.Total != len(routeList.Items) {
		t.Fatal(err, routeList.Total)
	}
	routes := routeList.Items
	if len(routes) != 4 || routes[0].From != "src:s1:cfg:report" || routes[0].Pool != "general" || routes[3].Problem == "" {
		t.Fatalf("routes: %+v", routes)
	}
	e.massOK("", "route", "--source", "s1", "--name", "report", "--remove")

	// a unit, batches and a static job, allocated
	cfg, err := massqueue.LoadConfig(cfgPath, "h")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := e.client.UnitBeat(ctx, "imports", "n1-0", now); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"s1", "s1", "s3"} {
		name := "imp"
		if s == "s3" {
			name = "report"
		}
		b, _ := massio.NewBatch(e.client, s, name, 0)
		_ = b.Push(ctx, massqueue.Job{Class: "J"}, massqueue.Job{Class: "J"})
		if err := b.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	e.massOK("", "enqueue", "--source", "s9", "--name", "x", "--class", "C")
	a, err := massio.NewAllocator(massio.AllocatorConfig{Client: e.client, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	var st massqueue.Status
	if err := json.Unmarshal([]byte(e.massOK("", "status", "--json", "--config", cfgPath)), &st); err != nil {
		t.Fatal(err)
	}
	if st.Failures != 1 || len(st.Static) != 1 || st.Static[0].Waiting != 1 || st.Static[0].Sources[0].Source != "s9" ||
		len(st.Batch) != 1 || len(st.Batch[0].Units) != 1 || !st.Batch[0].Units[0].Alive || len(st.Batch[0].Units[0].Batches) != 1 ||
		st.Batch[0].Units[0].Batches[0].Remaining != 2 || len(st.Batch[0].Sources) != 1 || len(st.Batch[0].Sources[0].Backlog) != 1 ||
		st.Batch[0].Sources[0].Active == "" {
		t.Fatalf("status: %+v", st)
	}
	if out := e.massOK("", "status", "--config", cfgPath); !strings.Contains(out, "unit n1-0: alive") || !strings.Contains(out, "backlog 1") {
		t.Errorf("status text:\n%s", out)
	}
	var failures listJSON[struct {
		Kind, ID, Reason, At string
	}]
	err = json.Unmarshal([]byte(e.massOK("", "failures", "--json")), &failures)
	fs := failures.Items
	if err != nil || len(fs) != 1 || failures.Total != 1 || fs[0].Kind != "batch" ||
		!strings.Contains(fs[0].Reason, "missing_batch") || !strings.HasSuffix(fs[0].At, "Z") {
		t.Fatalf("failures: %+v %v", failures, err)
	}
	if code, _, _ := e.mass("", "reallocate", "nope:x:1"); code != ExitUsage {
		t.Errorf("reallocate unknown: exit %d", code)
	}
	if out := e.massOK("", "reallocate", fs[0].ID); out != "reallocated 1\n" {
		t.Errorf("reallocate: %q", out)
	}
	if got := e.strs("LRANGE", e.ns+":committed", 0, -1); len(got) != 1 || got[0] != fs[0].ID {
		t.Errorf("committed after reallocate: %q", got)
	}
	if out := e.massOK("", "reallocate", "--all"); out != "reallocated 0\n" {
		t.Errorf("reallocate --all: %q", out)
	}
}

func TestMassSettings(t *testing.T) {
	t.Parallel()
	e := newCLIEnv(t)
	e.massOK("", "weight", "--source", "s1", "--weight", "3")
	e.massOK("", "limit", "--source", "s1", "--concurrency", "2")
	e.massOK("", "pause", "--source", "s2")
	var settings listJSON[massqueue.SourceSetting]
	if err := json.Unmarshal([]byte(e.massOK("", "settings", "--json")), &settings); err != nil || settings.Total != 2 {
		t.Fatal(err, settings.Total)
	}
	ss := settings.Items
	if len(ss) != 2 || ss[0] != (massqueue.SourceSetting{Source: "s1", Weight: 3, Limit: 2}) || !ss[1].Paused {
		t.Fatalf("settings %+v", ss)
	}
	e.massOK("", "resume", "--source", "s2")
	e.massOK("", "limit", "--source", "s1", "--concurrency", "0")
	e.massOK("", "weight", "--source", "s1", "--weight", "1")
	if out := e.massOK("", "settings", "--json"); strings.Join(strings.Fields(out), "") != `{"items":[],"total":0}` {
		t.Errorf("settings left: %s", out)
	}
	if code, _, _ := e.mass("", "weight", "--source", "s1", "--weight", "0"); code != ExitUsage {
		t.Errorf("weight 0: exit %d", code)
	}
}
