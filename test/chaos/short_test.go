package chaos

import (
	"testing"
	"time"
)

// The chaos ledger at CI size (about 80 s on a 2-core machine): every
// fault of the full run, fewer of each, and the faults that break every
// connection spaced 10 s apart with black holes of at most 3 s, so that a
// worker misses at most two heartbeats in a row. CHAOS_JOBS,
// CHAOS_DURATION, CHAOS_SEED, CHAOS_MAX_BLACKHOLE, CHAOS_CONN_GAP and
// CHAOS_MASS_RETRY resize it; `make chaos` runs TestChaosLedgerFull.
func TestChaosLedgerShort(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos ledger: skipped with -short")
	}
	cfg := config{Jobs: 1500, Duration: 70 * time.Second, Seed: 1, MaxHole: 3 * time.Second, ConnGap: 10 * time.Second, MassRetry: true}.fromEnv(t)
	runChaos(t, cfg).report(t)
}
