//go:build chaos

package chaos

import (
	"testing"
	"time"
)

// The chaos ledger at full size: 20,000 enqueues over 10 minutes of
// faults (`make chaos`; CHAOS_JOBS and CHAOS_DURATION resize it).
func TestChaosLedgerFull(t *testing.T) {
	cfg := config{Jobs: 20000, Duration: 10 * time.Minute, Seed: 1, MaxHole: 8 * time.Second}.fromEnv(t)
	runChaos(t, cfg).report(t)
}
