package rdb

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// BenchmarkClaimKeysArgs measures laying out a claim's keys and arguments,
// which a busy process does for every job (no Redis needed):
//
//	go test -run '^$' -bench ClaimKeysArgs -benchmem ./internal/rdb
func BenchmarkClaimKeysArgs(b *testing.B) {
	c, err := New(Options{URL: "redis://127.0.0.1:1", Namespace: "resque"})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		name string
		srcs []protocol.Source
	}{
		{"queue", []protocol.Source{protocol.QueueSource("default")}},
		{"static", []protocol.Source{protocol.StaticPoolSource("general")}},
		{"queues=3", protocol.QueueSources([]string{"high", "default", "low"})},
	} {
		b.Run(tc.name, func(b *testing.B) {
			a := ClaimArgs{WorkerID: "host:1234-1:default", Host: "host", Sources: tc.srcs, Token: "0123456789abcdef0123456789abcdef"}
			now := time.Now()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				a.Now = now.Add(time.Duration(i) * time.Microsecond)
				keys, args := c.claimKeysArgs(a)
				if len(keys) == 0 || len(args) == 0 {
					b.Fatal("nothing laid out")
				}
			}
		})
	}
}

// The kept parts of a claim's layout give what building it anew gives,
// also across a second's change.
func TestClaimKeysArgsKeptParts(t *testing.T) {
	c, err := New(Options{URL: "redis://127.0.0.1:1", Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srcs := []protocol.Source{protocol.QueueSource(`we"ird`), {Queue: "s", Serial: true}, protocol.StaticPoolSource("p")}
	a := ClaimArgs{WorkerID: "h:1:q", Sources: srcs, Token: "tok", Now: time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)}
	for _, now := range []time.Time{a.Now, a.Now.Add(500 * time.Millisecond), a.Now.Add(time.Second)} {
		a.Now = now
		keys, args := c.claimKeysArgs(a)
		runAt := protocol.FormatRunAt(now)
		want := []any{"ns:pause-all-workers", "ns:worker:h:1:q", "ns:resque-go:claim_seq", c.keys.AttemptsIndex(),
			"ns:queue:we\"ird", "ns:queue:s", c.keys.SourceKey(srcs[2]),
			c.keys.SerialLock("s"), c.keys.StaticState("p")}
		if len(keys) != len(want) {
			t.Fatalf("keys %v", keys)
		}
		for i := range want {
			if keys[i] != want[i] {
				t.Errorf("key %d = %v, want %v", i, keys[i], want[i])
			}
		}
		wantArgs := []any{"3", strconv.FormatInt(now.Unix(), 10), c.keys.JobStatusPrefix(), "h:1:q", c.keys.AttemptsPrefix(),
			protocol.RecordHead(srcs[0], runAt), protocol.RecordHead(srcs[1], runAt), ringRecordHead(runAt),
			protocol.RecordSourceSuffix(srcs[0]) + "}", protocol.RecordSourceSuffix(srcs[1]) + "}", "",
			"", "1", "r18", "tok", int64(30000), c.keys.UniquePrefix()}
		wantArgs = append(wantArgs, c.ringArgs(srcs[2])...)
		if len(args) != len(wantArgs) {
			t.Fatalf("args %v, want %v", args, wantArgs)
		}
		for i := range wantArgs {
			if args[i] != wantArgs[i] {
				t.Errorf("%v: arg %d = %v, want %v", now, i, args[i], wantArgs[i])
			}
		}
	}
}

// A slot's ClaimCache gives the layout claimKeysArgs builds without it, the
// same lists while nothing changes, and a new layout when the second, the
// queues, the sources, the worker id or the token change.
func TestClaimCacheReusesOnlyWhileArgumentsHold(t *testing.T) {
	c, err := New(Options{URL: "redis://127.0.0.1:1", Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var cc ClaimCache
	now := time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC)
	base := ClaimArgs{WorkerID: "h:1:q", Host: "h", Queues: []string{"a", "b"}, Now: now}
	check := func(name string, a ClaimArgs, reused bool) {
		t.Helper()
		a.Cache = &cc
		before := cc.keys
		keys, args := c.claimKeysArgs(a)
		a.Cache = nil
		wantKeys, wantArgs := c.claimKeysArgs(a)
		if !slices.Equal(keys, wantKeys) || !slices.Equal(args, wantArgs) {
			t.Errorf("%s: cached layout %v %v, want %v %v", name, keys, args, wantKeys, wantArgs)
		}
		if got := before != nil && &before[0] == &keys[0]; got != reused {
			t.Errorf("%s: reused %v, want %v", name, got, reused)
		}
		if got, want := a.sources(), protocol.QueueSources(a.Queues); a.Sources == nil && !slices.Equal(got, want) {
			t.Errorf("%s: sources %v, want %v", name, got, want)
		}
	}
	check("first", base, false)
	check("same", base, true)
	later := base
	later.Now = now.Add(900 * time.Millisecond)
	check("same second", later, true)
	later.Now = now.Add(time.Second)
	check("next second", later, false)
	queues := later
	queues.Queues = []string{"a", "c"}
	check("other queues", queues, false)
	queues.Queues = []string{"a", "c"} // another slice, the same names
	check("same queues", queues, true)
	id := queues
	id.WorkerID = "h:2:q"
	check("other worker id", id, false)
	serial := id
	serial.Queues, serial.Sources = nil, []protocol.Source{{Queue: "a", Serial: true}}
	serial.Token = "t1"
	check("sources", serial, false)
	check("same sources", serial, true)
	serial.Token = "t2"
	check("other token", serial, false)
	serial.Sources = []protocol.Source{{Queue: "a"}}
	check("source no longer serial", serial, false)
}
