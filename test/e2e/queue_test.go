package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/redistest"
)

// resque-go queue list|size|peek|remove|clear through the binary.
func TestQueueCommand(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	k := c.Keys()
	do(t, c, "SADD", k.Queues(), "mail", "low")
	do(t, c, "RPUSH", k.Queue("mail"), `{"class":"Mail","args":[1],"id":"a1"}`, `{"class":"Mail","args":[{"to":"x","n":2}]}`, "oops", `{"class":"Other","args":{"to":"x"}}`)
	r := func(sub string, args ...string) (int, string) {
		return runCLI(t, append([]string{"queue", sub, "--redis", redisURL, "--namespace", ns}, args...)...)
	}
	if code, out := r("list"); code != 0 || !strings.Contains(out, "QUEUE  SIZE\nlow    0\nmail   4\n") {
		t.Fatalf("list: %d\n%s", code, out)
	}
	if code, out := r("size", "--json", "mail"); code != 0 || strings.Join(strings.Fields(out), "") != `{"queue":"mail","size":4}` {
		t.Errorf("size --json: %d %q", code, out)
	}
	code, out := r("peek", "--json", "mail")
	var page struct {
		Items []struct {
			Position int
			Payload  json.RawMessage
		}
		Total int
	}
	if err := json.Unmarshal([]byte(out), &page); code != 0 || err != nil || page.Total != 4 || len(page.Items) != 4 ||
		string(page.Items[2].Payload) != `"oops"` || page.Items[2].Position != 2 || page.Items[0].Payload[0] != '{' {
		t.Errorf("peek --json: %d %v\n%s", code, err, out)
	}
	if code, out := r("remove", "--class", "Mail", "--args", `{"to":"x"}`, "mail"); code != 0 || out != "removed 1\n" {
		t.Errorf("remove --args: %d %q", code, out)
	}
	if code, out := r("remove", "--class", "Mail", "--id", "a1", "--json", "mail"); code != 0 || strings.Join(strings.Fields(out), "") != `{"queue":"mail","removed":1}` {
		t.Errorf("remove --id: %d %q", code, out)
	}
	if got := strs(do(t, c, "LRANGE", k.Queue("mail"), 0, -1)); !slices.Equal(got, []string{"oops", `{"class":"Other","args":{"to":"x"}}`}) {
		t.Errorf("queue after removes: %q", got)
	}
	if code, out := r("clear", "mail"); code != 2 || len(errLines(out)) != 1 || !strings.Contains(out, "--yes") {
		t.Errorf("clear without --yes: %d %q", code, out)
	}
	if code, out := r("clear", "--yes", "mail"); code != 0 || out != "removed 2\n" {
		t.Errorf("clear --yes: %d %q", code, out)
	}
	for _, bad := range [][]string{{"size"}, {"remove", "mail"}, {"remove", "--class", "A", "--args", "x", "mail"}, {"peek", "--limit", "-2", "mail"}} {
		if code, out := r(bad[0], bad[1:]...); code != 2 {
			t.Errorf("queue %v: exit %d, want 2\n%s", bad, code, out)
		}
	}
	code, out = runCLI(t, "queue", "size", "--redis", "redis://:hunter2@127.0.0.1:1", "mail")
	if code != 1 || strings.Contains(out, "hunter2") || strings.Count(out, "\n") != 1 {
		t.Errorf("unreachable redis: exit %d %q; want 1, one line, no password", code, out)
	}
}

// The binary's remove on a 20,000-job queue while a producer pushes and a
// consumer pops: exactly the matching jobs that were there and not popped
// go, every other job stays in order.
func TestQueueRemoveWhileBusy(t *testing.T) {
	t.Parallel()
	ns := redistest.Namespace(t)
	c := client(t, ns)
	ctx := context.Background()
	key := c.Keys().Queue("busy")
	job := func(kind string, i int) string {
		class := "Keep"
		if i%2 == 0 {
			class = "Drop"
		}
		return fmt.Sprintf(`{"class":%q,"args":[%d],"id":"%s%d"}`, class, i, kind, i)
	}
	var orig []string
	args := []any{key}
	for i := range 20000 {
		orig = append(orig, job("o", i))
		args = append(args, orig[i])
	}
	do(t, c, "RPUSH", args...)
	stop, begun := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	var popped, pushed []string
	wg.Add(3)
	go func() { // the others start once remove has taken its first step
		defer wg.Done()
		defer close(begun)
		for {
			n, err := redis.Int(c.Do(ctx, "LLEN", key))
			select {
			case <-stop:
				return
			default:
			}
			if err == nil && n < len(orig) {
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		<-begun
		for {
			select {
			case <-stop:
				return
			default:
			}
			if v, err := redis.String(c.Do(ctx, "LPOP", key)); err == nil {
				popped = append(popped, v)
			}
		}
	}()
	go func() {
		defer wg.Done()
		<-begun
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := job("p", i)
			if _, err := c.Do(ctx, "RPUSH", key, p); err == nil {
				pushed = append(pushed, p)
			}
		}
	}()
	code, out := runCLI(t, "queue", "remove", "--redis", redisURL, "--namespace", ns, "--class", "Drop", "--json", "busy")
	close(stop)
	wg.Wait()
	var res struct{ Removed int }
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil {
		t.Fatalf("remove: %d %v\n%s", code, err, out)
	}
	gone := map[string]bool{}
	for _, p := range popped {
		gone[p] = true
	}
	var want []string
	removed := 0
	for _, o := range orig {
		if strings.HasPrefix(o, `{"class":"Drop"`) && !gone[o] {
			removed++
			continue
		}
		want = append(want, o)
	}
	want = append(want, pushed...)
	seen := append(popped, strs(do(t, c, "LRANGE", key, 0, -1))...)
	t.Logf("removed %d while %d were popped and %d pushed", res.Removed, len(popped), len(pushed))
	if res.Removed != removed || !slices.Equal(seen, want) {
		t.Fatalf("removed %d, want %d; popped+remaining %d jobs, want %d", res.Removed, removed, len(seen), len(want))
	}
}
