package rdb

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// A lone slot's plain success with a claim from plain queues takes
// finish_claim.lua's compact form; every case must leave Redis and the
// answers exactly as the short form does, and both as the full form (which
// removes the record before the claim; the others leave it for the claim
// to replace or remove): payloads that ask for a status,
// a unique state or an attempts counter, a payload that is not an object,
// a paused worker, empty queues, a second queue, and the finishes that are
// not plain after all (the record removed by another runtime, with the
// false DirtyExit it recorded, while jobs wait, none does or the worker is
// paused; the sequence moved by a recovery), which the compact form
// refuses and the short form deals with.
func TestCompactFinishClaimAsShortForm(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"plain", "marks", "garbage", "counters", "paused", "empty", "second queue", "removed", "removed empty", "removed paused", "stale"} {
		t.Run(c, func(t *testing.T) {
			t.Parallel()
			full := compactFixture(t, c, "full")
			if strings.HasPrefix(c, "removed") && strings.Contains(full.dump, "DirtyExit") {
				t.Errorf("the false DirtyExit entry is still there:\n%s", full.dump)
			}
			for _, form := range []string{"compact", "short"} {
				got := compactFixture(t, c, form)
				if got.dump != full.dump {
					t.Errorf("Redis after the %s form:\n%s\nafter the full form:\n%s", form, got.dump, full.dump)
				}
				if fmt.Sprint(got.answers) != fmt.Sprint(full.answers) {
					t.Errorf("answers: %s %q, full %q", form, got.answers, full.answers)
				}
			}
		})
	}
}

func compactFixture(t *testing.T, scenario, form string) batchResult {
	ctx := context.Background()
	c, ns, do := ringTestClient(t, true)
	c.noCompact, c.noShort = form != "compact", form == "full"
	k := c.Keys()
	now := time.Unix(1_800_000_000, 0)
	id := "h:1:q"
	queues := []string{"q"}
	payloads := []string{`{"class":"J","args":[1]}`, `{"class":"J","args":[2]}`, `{"class":"J","args":[3]}`}
	switch scenario {
	case "marks":
		payloads = append(payloads[:1], `{"class":"J","args":[],"id":"v3","isMonitored":true}`,
			`{"class":"J","args":[],"unique":{"uid":"u1"}}`, `{"class":"J","args":[],"id":"p1"}`)
		do("SET", k.JobStatus("p1"), `{"status":1,"updated":1}`)
	case "garbage":
		payloads = append(payloads[:1], `[1,"x"]`, `not json`)
	case "counters":
		do("ZADD", k.AttemptsIndex(), 1, k.Attempts("x"))
		p, err := protocol.DecodePayload([]byte(payloads[1]))
		if err != nil {
			t.Fatal(err)
		}
		do("SET", k.Attempts(protocol.AttemptsDigest(p)), "2")
	case "empty", "removed empty":
		payloads = payloads[:1]
	case "second queue":
		queues = []string{"q", "r"}
		payloads = payloads[:1]
		do("RPUSH", k.Queue("r"), `{"class":"J","args":["r"]}`)
	}
	for _, p := range payloads {
		do("RPUSH", k.Queue("q"), p)
	}
	a := ClaimArgs{WorkerID: id, Host: "h", Queues: queues, Now: now}
	res, err := c.Claim(ctx, a)
	if err != nil || res.Payload == nil {
		t.Fatalf("claim: %v %v", res, err)
	}
	if scenario == "paused" || scenario == "removed paused" {
		do("SET", k.PauseAll(), "true")
	}
	switch scenario {
	case "removed", "removed empty", "removed paused":
		do("DEL", k.Worker(id))
		do("RPUSH", k.Failed(), falseDirtyExit(id, "q", "J"))
	case "stale":
		do("HINCRBY", k.ClaimSeqs(), id, 1)
	}
	var out batchResult
	for i := 0; i < 3; i++ {
		o := Outcome{Seq: res.Seq, Kind: OutcomeOK, Class: "J", Now: now}
		ferr, next, err := c.FinishAndClaim(ctx, id, "h", res.Source, o, a)
		out.answers = append(out.answers, fmt.Sprintf("finish=%v claim=%s queue=%s seq=%s attempts=%d empty=%v paused=%v err=%v",
			ferr, next.Payload, next.Queue, next.Seq, next.Attempts, next.Empty, next.Paused, err))
		if err != nil || next.Payload == nil {
			break
		}
		res = next
	}
	out.dump = dumpNamespace(t, c, ns)
	return out
}
