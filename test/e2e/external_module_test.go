package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/apicheck"
	"github.com/resque-go/resque-go/internal/redistest"
)

const modulePath = "github.com/resque-go/resque-go"

// A module outside this one (example.com/outside, requiring resque-go
// through a replace directive) builds and vets the examples, which use
// only public packages; no exported signature it reaches in client/, app/,
// node/, worker/ or the feature packages mentions an internal type; and the
// programs it builds work: the producer enqueues, the custom binary's
// worker runs the job, and an admin program adds a plan, lists and removes
// delayed jobs, clears a unique id and reads the failed list.
func TestExternalModuleUsesPublicPackages(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go tool is not on PATH: cannot build a module outside this one")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	rootMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go \S+$`).Find(rootMod)
	if !strings.HasPrefix(string(rootMod), "module "+modulePath+"\n") || goLine == nil {
		t.Fatalf("%s/go.mod is not module %s with a go line", root, modulePath)
	}

	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile := func(from, to string) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, from))
		if err != nil {
			t.Fatal(err)
		}
		write(to, string(b))
	}
	write("go.mod", "module example.com/outside\n\n"+string(goLine)+"\n\nrequire "+modulePath+" v0.0.0\n\nreplace "+modulePath+" => "+root+"\n")
	// The dependencies come from the module cache, checked against this
	// repository's sums: nothing is fetched.
	copyFile("go.sum", "go.sum")
	copyFile("examples/producer/main.go", "producer/main.go")
	copyFile("examples/custom/main.go", "custom/main.go")
	write("admin/main.go", outsideAdmin)
	// A leak the API check must find, to prove it finds one.
	write("internal/secret/secret.go", "package secret\n\ntype Token struct{ V int }\n")
	write("leaky/leaky.go", "package leaky\n\nimport \"example.com/outside/internal/secret\"\n\n"+
		"type Conf struct {\n\tName string\n\tTok  *secret.Token\n}\n\nfunc New() *Conf { return &Conf{} }\n")
	write("leakuser/main.go", "package main\n\nimport \"example.com/outside/leaky\"\n\nfunc main() { _ = leaky.New().Name }\n")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	goCmd := func(args ...string) []byte {
		t.Helper()
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOWORK=off",
			"GOTOOLCHAIN=local", "GOSUMDB=off")
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("go %s in the outside module: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
		}
		return out
	}
	goCmd("vet", "./...")
	goCmd("build", "./...")
	bin := filepath.Join(dir, "bin") + string(filepath.Separator)
	goCmd("build", "-o", bin, "./producer", "./custom", "./admin")

	exports := apicheck.ExportData(goCmd, "./producer", "./custom", "./admin", "./leakuser")
	api := apicheck.New(modulePath + "/")
	for _, prog := range []string{"producer", "custom", "admin"} {
		if err := api.UsedAPI(filepath.Join(dir, prog), exports); err != nil {
			t.Fatalf("type-check %s: %v", prog, err)
		}
	}
	for _, pkg := range []string{"client", "app", "node", "worker", "delayed", "plan", "unique", "failure"} {
		if err := api.PackageAPI(modulePath+"/"+pkg, exports); err != nil {
			t.Fatalf("load %s: %v", pkg, err)
		}
	}
	for _, l := range api.Leaks {
		t.Errorf("internal type in the public API: %s", l)
	}
	self := apicheck.New("example.com/outside/")
	if err := self.UsedAPI(filepath.Join(dir, "leakuser"), exports); err != nil {
		t.Fatal(err)
	}
	if len(self.Leaks) != 1 || !strings.Contains(self.Leaks[0], "secret.Token") {
		t.Errorf("the API check missed a planted internal type: %q", self.Leaks)
	}

	t.Run("producer and worker", func(t *testing.T) { runOutsidePrograms(t, bin) })
	t.Run("admin", func(t *testing.T) { runOutsideAdmin(t, bin) })
}

// outsideAdmin is a program of the outside module that administers a
// namespace through public packages only: it adds a plan, lists and
// removes delayed jobs, clears a unique id and reads the failed list.
const outsideAdmin = `package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/resque-go/resque-go/client"
	"github.com/resque-go/resque-go/delayed"
	"github.com/resque-go/resque-go/plan"
	"github.com/resque-go/resque-go/unique"
)

func main() {
	c, err := client.New(client.Options{URL: os.Getenv("REDIS_URL"), Namespace: os.Getenv("RESQUE_NAMESPACE")})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	id, err := c.AddPlan(ctx, plan.Plan{ID: "outside-plan", Queue: "reports", Class: "Report", Every: time.Hour})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("plan", id)

	at := time.Date(2031, 1, 1, 9, 0, 0, 0, time.UTC)
	if _, err := c.EnqueueAt(ctx, at, "mail", "Reminder", "u1"); err != nil {
		log.Fatal(err)
	}
	if _, err := c.EnqueueAt(ctx, at.Add(time.Minute), "mail", "Digest", "w"); err != nil {
		log.Fatal(err)
	}
	items, err := c.DelayedJobs(ctx, delayed.Filter{Queue: "mail"}, 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, it := range items {
		fmt.Println("delayed", it.Class, it.At.UTC().Format(time.RFC3339))
	}
	removed, err := c.RemoveDelayed(ctx, delayed.Filter{Class: "Reminder"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("removed", removed.Removed)

	res, err := c.ClearUnique(ctx, "acct-1", "outside")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("unique cleared", res == unique.ClearCleared)

	failed, err := c.Failed(ctx, 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range failed {
		fmt.Println("failed", f.Index, f.Job.Class, f.Error)
	}
}
`

// runOutsideAdmin runs the outside module's admin program on a namespace
// holding a unique id and a failed entry, and checks what it did.
func runOutsideAdmin(t *testing.T, bin string) {
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	do(t, c, "SET", k.UniqueState("acct-1"), "queued")
	do(t, c, "RPUSH", k.Failed(), `{"failed_at":"2026/01/01 00:00:00 UTC","payload":{"class":"Resize","args":["cat.png"]},"exception":"RuntimeError","error":"disk full","backtrace":[],"worker":"w:1:images","queue":"images"}`)
	cmd := exec.Command(bin + "admin")
	cmd.Env = append(os.Environ(), "REDIS_URL="+redisURL, "RESQUE_NAMESPACE="+ns)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("admin: %v\n%s", err, out)
	}
	want := "plan outside-plan\n" +
		"delayed Reminder 2031-01-01T09:00:00Z\n" +
		"delayed Digest 2031-01-01T09:01:00Z\n" +
		"removed 1\n" +
		"unique cleared true\n" +
		"failed 0 Resize disk full\n"
	if string(out) != want {
		t.Errorf("admin printed:\n%s\nwant:\n%s", out, want)
	}
	if n := do(t, c, "EXISTS", k.Plan("outside-plan")); n != int64(1) {
		t.Errorf("the plan's key exists %v times", n)
	}
	if n := do(t, c, "EXISTS", k.UniqueState("acct-1")); n != int64(0) {
		t.Errorf("the uid's state is still there (%v)", n)
	}
	if n := do(t, c, "ZCARD", k.DelayedSchedule()); n != int64(1) {
		t.Errorf("the delayed schedule holds %v buckets, want the Digest's", n)
	}
}

// runOutsidePrograms runs what the outside module built: the producer
// enqueues Greet, the custom binary's worker runs it.
func runOutsidePrograms(t *testing.T, bin string) {
	ns := redistest.Namespace(t)
	c := client(t, ns)
	prod := exec.Command(bin+"producer", "e2e")
	prod.Env = append(os.Environ(), "REDIS_URL="+redisURL, "RESQUE_NAMESPACE="+ns)
	out, err := prod.Output()
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	id := strings.TrimSpace(string(out))
	queued := strs(do(t, c, "LRANGE", c.Keys().Queue("default"), 0, -1))
	if len(queued) != 1 {
		t.Fatalf("queue default holds %q", queued)
	}
	var p struct {
		Class string   `json:"class"`
		Args  []string `json:"args"`
		ID    string   `json:"id"`
	}
	if err := json.Unmarshal([]byte(queued[0]), &p); err != nil || p.Class != "Greet" || len(p.Args) != 1 || p.Args[0] != "e2e" || p.ID != id {
		t.Fatalf("producer printed %q and queued %s", id, queued[0])
	}

	bad := exec.Command(bin + "producer")
	bad.Env = append(os.Environ(), "REDIS_URL=redis://:pa55word@127.0.0.1:nope/0")
	msg, _ := bad.CombinedOutput()
	if code := bad.ProcessState.ExitCode(); code != 2 || !strings.HasPrefix(string(msg), "producer: client: bad redis url ") || strings.Contains(string(msg), "pa55word") {
		t.Errorf("producer with a malformed URL: exit %d, %q", code, msg)
	}

	logs := &syncBuffer{}
	w := exec.Command(bin+"custom", "work", "-q", "default", "--redis", redisURL, "--namespace", ns)
	w.Stdout, w.Stderr = logs, logs
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Process.Kill(); _ = w.Wait() })
	redistest.Eventually(t, 0, func() bool {
		n, _ := c.Int(context.Background(), c.Keys().StatProcessed())
		return n == 1
	}, "the produced job to run")
	_ = w.Process.Signal(syscall.SIGQUIT)
	_ = w.Wait()
	if want := "hello, e2e (job " + id + " from queue default)"; !strings.Contains(logs.String(), want) {
		t.Errorf("worker output lacks %q:\n%s", want, logs.String())
	}
}
