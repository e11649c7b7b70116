package chaos

import (
	"testing"
	"time"
)

// The chaos ledger at CI size (about 90 s on a 2-core machine): every
// fault of the full run, fewer of each. CHAOS_JOBS, CHAOS_DURATION,
// CHAOS_SEED and CHAOS_MAX_BLACKHOLE resize it; `make chaos` runs
// TestChaosLedgerFull.
func TestChaosLedgerShort(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos ledger: skipped with -short")
	}
	cfg := config{Jobs: 1500, Duration: 45 * time.Second, Seed: 1, MaxHole: 6 * time.Second}.fromEnv(t)
	runChaos(t, cfg).report(t)
}
