package runtime_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	goruntime "runtime"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/internal/redistest"
	"github.com/resque-go/resque-go/internal/runtime"
	"github.com/resque-go/resque-go/worker"
)

// garbageRows are payloads no producer should write, each with what its
// failed entry's error must say.
func garbageRows() []struct{ name, payload, want string } {
	const mb = 1 << 20
	deep := 1_000_000
	return []struct{ name, payload, want string }{
		{"non-JSON", `this is not JSON {`, "not a JSON object"},
		{"JSON array", `[{"class":"Good","args":[]}]`, "not a JSON object"},
		{"JSON string", `"{\"class\":\"Good\"}"`, "not a JSON object"},
		{"10 MB payload", `{"class":"Good","args":["` + strings.Repeat("x", 10*mb), "not valid JSON"},
		{"invalid UTF-8", "{\"class\":\"Good\",\"args\":[\"caf\xe9\"]}", "not valid UTF-8 (bad byte 0xe9 at offset 28)"},
		{"missing class", `{"args":[1]}`, `no "class"`},
		{"numeric class", `{"class":5,"args":[]}`, `"class" is not a non-empty string`},
		{"array class", `{"class":["Good"],"args":[]}`, `"class" is not a non-empty string`},
		{"null class", `{"class":null,"args":[]}`, `"class" is not a non-empty string`},
		{"args a number", `{"class":"Good","args":5}`, `"args" is not an array or object`},
		{"args a string", `{"class":"Good","args":"a,b"}`, `"args" is not an array or object`},
		{"1,000,000-deep array", `{"class":"Good","args":` + strings.Repeat("[", deep) + strings.Repeat("]", deep) + `}`, "exceeded max depth"},
		{"unique a number", `{"class":"Good","args":[],"unique":5}`, "unique field is not an object"},
		{"unique uid a boolean", `{"class":"Good","args":[],"unique":{"uid":true}}`, "unique uid must be a string or number"},
		// the claim marks uid running: the failure must release it
		{"unique deferral a word", `{"class":"Good","args":[],"unique":{"uid":"garbage-1","deferrableBy":"soon"}}`, "unique deferrableBy must be a number"},
		{"unique deferral negative", `{"class":"Good","args":[],"unique":{"uid":"garbage-2","deferrableBy":-5}}`, "unique deferrableBy must be a number of seconds >= 0"},
		// past protocol.MaxDelaySeconds: its release would fail at every attempt
		{"unique deferral past 100 years", `{"class":"Good","args":[],"unique":{"uid":"garbage-3","deferrableBy":9e18}}`, "unique deferrableBy 9000000000000000000: out of range"},
	}
}

// heapInUse is the heap in use after a collection.
func heapInUse() uint64 {
	goruntime.GC()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.HeapInuse
}

// Every kind of garbage in a queue ends in failed as valid JSON whose
// error says what is wrong; the worker goes on to the next job, and its
// memory stays bounded. Not parallel: it measures the heap.
func TestGarbageInQueues(t *testing.T) {
	e := newEnv(t)
	ran := make(chan struct{}, 1)
	e.reg.Register("Good", func(ctx context.Context, j *worker.Job) error {
		if string(j.Args) == `["after the garbage"]` {
			ran <- struct{}{}
		}
		return nil
	})
	rows := garbageRows()

	// Keep only small facts of each finished job: the test holds no
	// payload the worker could otherwise have freed.
	type outcome struct {
		failed           bool
		exception, error string
	}
	var mu sync.Mutex
	var finished []outcome
	onFinish := func(f runtime.Finished) {
		mu.Lock()
		defer mu.Unlock()
		finished = append(finished, outcome{f.Failed, f.Exception, f.Error})
	}

	before := heapInUse()
	var peak uint64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var m goruntime.MemStats
		for {
			select {
			case <-stopSampling:
				return
			case <-tick.C:
				goruntime.ReadMemStats(&m)
				peak = max(peak, m.HeapInuse)
			}
		}
	}()

	for _, r := range rows {
		e.push("q", r.payload)
	}
	e.push("q", `{"class":"Good","args":["after the garbage"]}`)
	w := e.start(runtime.Config{Queues: "q", OnFinish: onFinish, Retry: noRetry})
	select {
	case <-ran:
	case <-time.After(redistest.Patience): // a loaded machine's Redis may time a call out once
		t.Fatal("the job pushed after the garbage did not run")
	}
	redistest.Eventually(t, 0, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(finished) == len(rows)+1
	}, "every job finished")
	w.Shutdown()
	close(stopSampling)
	<-sampled
	rows = nil // the payloads
	after := heapInUse()

	growth := int64(after) - int64(before)
	t.Logf("heap in use: %.1f MB before, %.1f MB peak, %.1f MB after (%+.1f MB)",
		float64(before)/1e6, float64(peak)/1e6, float64(after)/1e6, float64(growth)/1e6)
	if growth > 200<<20 {
		t.Errorf("heap grew by %d MB over the garbage (want < 200 MB)", growth>>20)
	}
	if peak > before+400<<20 {
		t.Errorf("heap peaked at %d MB, %d MB over the start", peak>>20, (peak-before)>>20)
	}

	mu.Lock()
	for _, f := range finished {
		if f.failed && f.exception != protocol.ExcBadPayload {
			t.Errorf("a garbage job failed as %s: %s", f.exception, f.error)
		}
	}
	mu.Unlock()

	rows = garbageRows()
	entries := e.list(e.client.Keys().Failed())
	if len(entries) != len(rows) {
		t.Fatalf("failed has %d entries, want %d", len(entries), len(rows))
	}
	for _, s := range entries {
		if !json.Valid([]byte(s)) || !utf8.ValidString(s) {
			t.Errorf("failed entry is not valid UTF-8 JSON: %.200q", s)
			continue
		}
		f := decodeFailed(t, s)
		original := string(f.Payload)
		if f.Payload[0] == '"' {
			var str string
			if err := json.Unmarshal(f.Payload, &str); err != nil {
				t.Fatal(err)
			}
			original = string(protocol.UnembedPayload(str))
		}
		found := false
		for _, r := range rows {
			if r.payload != original {
				continue
			}
			found = true
			if !strings.Contains(f.Error, r.want) || f.Exception != protocol.ExcBadPayload || f.Queue != "q" {
				t.Errorf("%s: failed as %s %q (queue %q); want %s saying %q", r.name, f.Exception, f.Error, f.Queue, protocol.ExcBadPayload, r.want)
			}
			if len(f.Error) > 1000 {
				t.Errorf("%s: error of %d bytes", r.name, len(f.Error))
			}
		}
		if !found {
			t.Errorf("failed entry with a payload of none of the rows: %.200q", original)
		}
	}
	for _, uid := range []string{"garbage-1", "garbage-2", "garbage-3"} {
		if st := e.get(e.client.Keys().UniqueState(uid)); st != "" {
			t.Errorf("unique uid %s is still %q after its job failed", uid, st)
		}
	}
	if n := len(e.list(e.client.Keys().Queue("q"))); n != 0 {
		t.Errorf("%d jobs left in the queue", n)
	}
}
