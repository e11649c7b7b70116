package rdb

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// A static pool's source whose FIFO's key holds another type (a string
// written by hand) leaves the ring as a drained source does: the claim
// serves the next source, names the pool as skipped (WrongType), and the
// key is left as it was. Alone, in a batch of several sources (ring_next)
// and in a batch of one source (claim_static's short way).
func TestStaticClaimSkipsSourceOfWrongType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		unbatched bool
		sources   []string
	}{
		{"single", true, []string{"a", "bad", "c"}},
		{"batch", false, []string{"a", "bad", "c"}},
		{"batch-one-source", false, []string{"bad"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, _, do := ringTestClient(t, tc.unbatched)
			k := c.Keys()
			pool := "p"
			jobs := map[string]int{}
			for _, s := range tc.sources {
				jobs[s] = 4
			}
			fillStaticRing(c, do, pool, tc.sources, jobs)
			bad := func() {
				do("DEL", k.StaticSourceQueue(pool, "bad"))
				do("SET", k.StaticSourceQueue(pool, "bad"), "x")
			}
			src := protocol.StaticPoolSource(pool)
			now := time.Unix(1_800_000_000, 0)
			served := map[string]int{}
			var skipped []string
			if tc.unbatched {
				bad()
				for i := 0; i < 9; i++ {
					a := ClaimArgs{WorkerID: fmt.Sprintf("h:%d:static", i), Host: "h", Sources: []protocol.Source{src}, Now: now}
					res, err := c.Claim(ctx, a)
					if err != nil {
						t.Fatalf("claim %d: %v", i, err)
					}
					skipped = append(skipped, res.WrongType...)
					if res.Payload != nil {
						served[res.Source.Queue]++
					}
				}
			} else {
				// the first claims serve every source; then the bad one's
				// FIFO turns into another type
				batch, args := staticBatch(t, c, pool, len(tc.sources))
				bad()
				c.batch.send(batch)
				for i, a := range args {
					ferr, res, err := parseFinishClaim(a.WorkerID, a, batch[i].reply, batch[i].err)
					if err != nil || ferr != nil {
						t.Fatalf("slot %d: finish %v, claim %v", i, ferr, err)
					}
					skipped = append(skipped, res.WrongType...)
					if res.Payload != nil {
						served[res.Source.Queue]++
					}
				}
			}
			if len(skipped) == 0 || slices.ContainsFunc(skipped, func(q string) bool { return q != src.Queue }) {
				t.Errorf("WrongType over the claims: %q, want the pool's %q", skipped, src.Queue)
			}
			if len(tc.sources) > 1 && len(served) == 0 {
				t.Errorf("no job served past the bad source")
			}
			if v, err := c.do(ctx, "GET", k.StaticSourceQueue(pool, "bad")); err != nil || string(v.([]byte)) != "x" {
				t.Errorf("the key of the wrong type became %q (%v)", v, err)
			}
			ring, err := c.do(ctx, "LRANGE", k.StaticRing(pool), 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ring.([]any) {
				if string(e.([]byte)) == "bad" {
					t.Errorf("the bad source is still on the ring: %q", ring)
				}
			}
		})
	}
}
