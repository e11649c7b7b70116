package rdb

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// A queue whose key holds another type (a SET written by hand) is skipped
// by every claim, in every form of the per-job scripts, and named in the
// claim's result (WrongType); the queues after it in priority order are
// served, the finish that rode with the claim is recorded, and the key is
// left as it was.
func TestClaimSkipsQueueOfWrongType(t *testing.T) {
	t.Parallel()
	forms := []struct {
		name    string
		serial  bool // the bad queue is serial: claim() instead of claim_plain
		batched bool // two slots finish and claim in one batch script call
		form    string
		kind    OutcomeKind
	}{
		{"compact", false, false, "compact", OutcomeOK},
		{"short", false, false, "short", OutcomeOK},
		{"full", false, false, "full", OutcomeOK},
		{"full-fail", false, false, "full", OutcomeFail},
		{"serial-short", true, false, "short", OutcomeOK},
		{"serial-full", true, false, "full", OutcomeOK},
		{"batch", false, true, "", OutcomeOK},
		{"batch-fail", false, true, "", OutcomeFail},
		{"batch-serial", true, true, "", OutcomeOK},
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, _, do := ringTestClient(t, !f.batched)
			c.noCompact, c.noShort = f.form == "short" || f.form == "full", f.form == "full"
			k := c.Keys()
			do("SET", k.Queue("b"), "x")
			for i := 0; i < 4; i++ {
				do("RPUSH", k.Queue("a"), fmt.Sprintf(`{"class":"J","args":[%d]}`, i))
			}
			now := time.Unix(1_800_000_000, 0)
			srcs := []protocol.Source{{Queue: "b", Serial: f.serial}, {Queue: "a"}}
			slots := 1
			if f.batched {
				slots = 2
			}
			args := make([]ClaimArgs, slots)
			outcomes := make([]Outcome, slots)
			for i := range args {
				args[i] = ClaimArgs{WorkerID: fmt.Sprintf("h:%d:b,a", i), Host: "h", Sources: srcs, Now: now, Token: fmt.Sprintf("%032d", i)}
				res, err := c.Claim(ctx, args[i])
				if err != nil || string(res.Payload) != fmt.Sprintf(`{"class":"J","args":[%d]}`, i) || res.Queue != "a" {
					t.Fatalf("claim %d past the queue of the wrong type: %+v %v", i, res, err)
				}
				if !slices.Equal(res.WrongType, []string{"b"}) {
					t.Errorf("claim %d: WrongType %q, want [b]", i, res.WrongType)
				}
				outcomes[i] = Outcome{Seq: res.Seq, Kind: f.kind, Class: "J", Now: now}
				if f.kind == OutcomeFail {
					outcomes[i].Entry = []byte(`{"failed_at":"x","payload":{},"exception":"E","error":"e","backtrace":[],"worker":"w","queue":"a"}`)
				}
			}
			check := func(i int, ferr error, res ClaimResult, err error) {
				t.Helper()
				want := fmt.Sprintf(`{"class":"J","args":[%d]}`, slots+i)
				if err != nil || ferr != nil || string(res.Payload) != want || res.Queue != "a" {
					t.Fatalf("slot %d: finish %v, claim %+v, err %v; want the finish recorded and %s claimed", i, ferr, res, err, want)
				}
				if !slices.Equal(res.WrongType, []string{"b"}) {
					t.Errorf("slot %d: WrongType %q, want [b]", i, res.WrongType)
				}
			}
			if !f.batched {
				ferr, res, err := c.FinishAndClaim(ctx, args[0].WorkerID, "h", protocol.QueueSource("a"), outcomes[0], args[0])
				check(0, ferr, res, err)
			} else {
				batch := make([]*batchCall, slots)
				for i, a := range args {
					ck, ca := c.claimKeysArgs(a)
					batch[i] = &batchCall{workerID: a.WorkerID, host: "h", src: protocol.QueueSource("a"), o: outcomes[i],
						ck: ck, ca: ca, sources: len(srcs), done: make(chan struct{})}
				}
				c.batch.send(batch)
				for i, a := range args {
					ferr, res, err := parseFinishClaim(a.WorkerID, a, batch[i].reply, batch[i].err)
					check(i, ferr, res, err)
				}
			}
			if n, _ := c.Int(ctx, k.StatProcessed()); n != int64(slots) {
				t.Errorf("stat:processed = %d, want %d", n, slots)
			}
			// every queue after it drained: the claim is empty, and still names it
			do("DEL", k.Queue("a"))
			a := args[0]
			a.WorkerID = "h:9:b,a"
			res, err := c.Claim(ctx, a)
			if err != nil || !res.Empty || !slices.Equal(res.WrongType, []string{"b"}) {
				t.Errorf("claim with nothing else to take: %+v %v; want empty, WrongType [b]", res, err)
			}
			if v, err := c.do(ctx, "GET", k.Queue("b")); err != nil || string(v.([]byte)) != "x" {
				t.Errorf("the key of the wrong type became %q (%v)", v, err)
			}
		})
	}
}
