package rdb

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gomodule/redigo/redis"

	"github.com/resque-go/resque-go/internal/protocol"
)

// One limit whose key was written by hand with another type, or an index
// of another type, does not stop the sweep of the others: cap B's parked
// job moves back to its queue. The bad index is named in the error, after
// the sweep. Before, the sweep failed whole at each tick, and no parked
// job of any limit moved back.
func TestSweepLimitsSetsBadKeysAside(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		bad     func(k protocol.Keys) string
		wantErr bool
	}{
		{"holders", func(k protocol.Keys) string { return k.LimitBase("class:A") + protocol.LimitHoldersSuffix }, false},
		{"parked", func(k protocol.Keys) string { return k.LimitBase("class:A") + protocol.LimitParkedSuffix }, false},
		{"index", func(k protocol.Keys) string { return k.LimitsIndex() }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _, do := ringTestClient(t, true)
			k := c.Keys()
			l := NewClaimLimits(limitsRules(t, "A=1", "B=1"), time.Minute)
			do("RPUSH", k.LimitBase("class:A")+protocol.LimitParkedSuffix, `{"queue":"q","payload":"{\"class\":\"A\",\"args\":[]}"}`)
			do("RPUSH", k.LimitBase("class:B")+protocol.LimitParkedSuffix, `{"queue":"q","payload":"{\"class\":\"B\",\"args\":[]}"}`)
			bad := tc.bad(k)
			do("DEL", bad)
			do("SET", bad, "written by hand")
			swept, err := c.SweepLimits(context.Background(), l, []HeldSlot{{Name: "class:A", Member: "h:1:q:1"}}, time.Now(), "h:1:q")
			var kt *KeyTypeError
			if tc.wantErr != (err != nil) || (err != nil && (!errors.As(err, &kt) || kt.Key != bad)) {
				t.Fatalf("sweep: %v, want an error naming %s: %v", err, bad, tc.wantErr)
			}
			got, err := redis.Strings(c.do(context.Background(), "LRANGE", k.Queue("q"), 0, -1))
			if n := swept.Moved; err != nil || n < 1 || !contains(got, `{"class":"B","args":[]}`) {
				t.Errorf("moved %d, queue q %q %v: B's parked job not moved back", swept.Moved, got, err)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Entries of a cap's parked list and a rate's waiting list that are not a
// job's (written by hand) go to failed, each a valid-JSON
// ResqueGo::BadPayload naming its list, while the jobs among them move
// back: the lists empty, so the cap can be leased again and the rate's
// blocks taken (both wait for an empty list).
func TestSweepSetsAsideEntriesThatAreNotJobs(t *testing.T) {
	t.Parallel()
	c, _, do := ringTestClient(t, true)
	k := c.Keys()
	ctx := context.Background()
	l := NewClaimLimits(limitsRules(t, "A=2", "rate:B=100/1s"), time.Minute)
	parked := k.LimitBase("class:A") + protocol.LimitParkedSuffix
	waiting := k.LimitBase("class:B") + protocol.LimitWaitingSuffix
	garbage := map[string]string{ // entry: its list
		"not JSON {":                            parked,
		`{"queue":"q"}`:                         parked,
		"{\"queue\":\"q\",\"payload\":\"\xff\"": parked, // invalid UTF-8, not JSON
		`[1,2,3]`:                               waiting,
		`{"due":1,"queue":5,"payload":"{}"}`:    waiting,
	}
	do("RPUSH", parked, "not JSON {", `{"queue":"q","payload":"{\"class\":\"A\",\"args\":[1]}"}`, `{"queue":"q"}`,
		"{\"queue\":\"q\",\"payload\":\"\xff\"", `{"queue":"q","payload":"{\"class\":\"A\",\"args\":[2]}"}`)
	do("RPUSH", waiting, `[1,2,3]`, `{"due":1,"queue":"q","payload":"{\"class\":\"B\",\"args\":[]}"}`, `{"due":1,"queue":5,"payload":"{}"}`)

	swept, err := c.SweepLimits(ctx, l, nil, time.Now(), "h:1:q")
	if err != nil {
		t.Fatal(err)
	}
	if swept.Moved != 3 {
		t.Errorf("moved %d, want the 2 parked and 1 waiting jobs", swept.Moved)
	}
	if len(swept.SetAside) != len(garbage) {
		t.Errorf("set aside %q, want the %d entries that are not jobs", swept.SetAside, len(garbage))
	}
	for _, e := range swept.SetAside {
		if garbage[e.Entry] != e.List {
			t.Errorf("set aside %q of %s", e.Entry, e.List)
		}
	}
	for _, list := range []string{parked, waiting} {
		if n, _ := redis.Int(c.do(ctx, "LLEN", list)); n != 0 {
			t.Errorf("%s: %d entries left", list, n)
		}
	}
	q, _ := redis.Strings(c.do(ctx, "LRANGE", k.Queue("q"), 0, -1))
	if len(q) != 3 {
		t.Errorf("queue q: %q, want the 3 jobs", q)
	}
	failed, _ := redis.ByteSlices(c.do(ctx, "LRANGE", k.Failed(), 0, -1))
	if len(failed) != len(garbage) {
		t.Fatalf("%d failed entries, want %d", len(failed), len(garbage))
	}
	seen := map[string]bool{}
	for i, raw := range failed {
		if !json.Valid(raw) || !utf8.Valid(raw) {
			t.Errorf("failed entry %d is not valid UTF-8 JSON: %q", i, raw)
			continue
		}
		f := protocol.ParseFailedEntry(int64(i), raw)
		entry := string(f.Payload)
		if len(f.Payload) > 0 && f.Payload[0] == '"' {
			var s string
			if err := json.Unmarshal(f.Payload, &s); err != nil {
				t.Fatal(err)
			}
			entry = string(protocol.UnembedPayload(s))
		}
		list, ok := garbage[entry]
		if !ok || seen[entry] {
			t.Errorf("failed entry %d holds %q", i, entry)
			continue
		}
		seen[entry] = true
		if f.Exception != protocol.ExcBadPayload || !strings.Contains(f.Error, list) || f.Worker != "h:1:q" {
			t.Errorf("failed entry %d: %s %q by %q, want %s naming %s", i, f.Exception, f.Error, f.Worker, protocol.ExcBadPayload, list)
		}
	}

	// a second sweep finds nothing more
	swept, err = c.SweepLimits(ctx, l, nil, time.Now(), "h:1:q")
	if err != nil || swept.Moved != 0 || len(swept.SetAside) != 0 {
		t.Errorf("second sweep: %+v, %v", swept, err)
	}
}
