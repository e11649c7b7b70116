package delayedio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/protocol"
)

// delayedState is the delayed queue of a namespace as comparable text:
// key (namespace cut) -> its values (list order kept, sets sorted, zset
// members as "member score").
type delayedState map[string][]string

// state reads every delayed-queue key of the test namespace.
func (e *env) state() delayedState {
	e.t.Helper()
	s := delayedState{}
	for _, pattern := range []string{"delayed:*", "timestamps:*", "delayed_queue_schedule"} {
		keys, err := e.c.ScanKeys(context.Background(), e.ns+":"+pattern)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, k := range keys {
			name := strings.TrimPrefix(k, e.ns+":")
			switch {
			case strings.HasPrefix(name, "delayed:"):
				s[name] = e.strs("LRANGE", k, 0, -1)
			case strings.HasPrefix(name, "timestamps:"):
				v := e.strs("SMEMBERS", k)
				slices.Sort(v)
				s[name] = v
			default:
				v := e.strs("ZRANGE", k, 0, -1, "WITHSCORES")
				for i := 0; i+1 < len(v); i += 2 {
					s[name] = append(s[name], v[i]+" "+v[i+1])
				}
			}
		}
	}
	return s
}

// fixtureState is the delayed queue of a captured dump in the same form.
func fixtureState(t *testing.T, d *fixtures.Dump) delayedState {
	t.Helper()
	s := delayedState{}
	for _, k := range d.Keys {
		name := strings.TrimPrefix(k.Key, "resque:")
		switch {
		case strings.HasPrefix(name, "delayed:"):
			s[name] = d.List(k.Key)
		case strings.HasPrefix(name, "timestamps:"):
			v := d.List(k.Key)
			slices.Sort(v)
			s[name] = v
		case name == "delayed_queue_schedule":
			var pairs [][2]json.Number
			if err := json.Unmarshal(k.Value, &pairs); err != nil {
				t.Fatal(err)
			}
			for _, p := range pairs {
				s[name] = append(s[name], p[0].String()+" "+p[1].String())
			}
		}
	}
	return s
}

// diff lists the differences between got and want, one line each.
func (got delayedState) diff(want delayedState) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok {
			out = append(out, fmt.Sprintf("missing %s = %q", k, want[k]))
		} else if !slices.Equal(g, want[k]) {
			out = append(out, fmt.Sprintf("%s = %q, want %q", k, g, want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("extra %s = %q", k, got[k]))
		}
	}
	return strings.Join(out, "\n")
}

// fillScript adds a batch of items to one bucket as delay.lua does, for
// tests that need many items fast.
const fillScript = `
for i = 3, #KEYS do
  redis.call('RPUSH', KEYS[1], ARGV[i])
  redis.call('SADD', KEYS[i], ARGV[2])
end
redis.call('ZADD', KEYS[2], ARGV[1], ARGV[1])
return 1`

// fill puts the plain jobs {"class":class,"args":[i]} for i in [first,
// first+n) into the delayed queue for queue, perBucket to a bucket from
// ts0 on, with the bytes delayed.EnqueueAt writes.
func (e *env) fill(queue, class string, first, n, perBucket int, ts0 int64) {
	e.t.Helper()
	for b := 0; b*perBucket < n; b++ {
		ts := ts0 + int64(b)
		k := e.c.Keys()
		keys := []any{k.Delayed(ts), k.DelayedSchedule()}
		argv := []any{strconv.FormatInt(ts, 10), protocol.DelayedMember(ts)}
		for i := b * perBucket; i < min(n, (b+1)*perBucket); i++ {
			payload := fmt.Sprintf(`{"class":%q,"args":[%d]}`, class, first+i)
			item, err := protocol.DelayedItem([]byte(payload), queue)
			if err != nil {
				e.t.Fatal(err)
			}
			keys = append(keys, k.Timestamps(item))
			argv = append(argv, item)
		}
		// ARGV is indexed like KEYS: ARGV[i] is the item of KEYS[i]
		e.do("EVAL", append(append([]any{fillScript, len(keys)}, keys...), argv...)...)
	}
}

// argCounts counts the promoted jobs of queue by their one integer arg.
func (e *env) argCounts(queue string) map[int]int {
	e.t.Helper()
	counts := map[int]int{}
	for _, p := range e.strs("LRANGE", e.c.Keys().Queue(queue), 0, -1) {
		var v struct{ Args []int }
		if err := json.Unmarshal([]byte(p), &v); err != nil || len(v.Args) != 1 {
			e.t.Fatalf("promoted payload %s: %v", p, err)
		}
		counts[v.Args[0]]++
	}
	return counts
}
