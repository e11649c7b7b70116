//go:build chaos

package chaos

import (
	"testing"
	"time"
)

// The chaos ledger at full size: 20,000 enqueues over 10 minutes of
// faults, those that break every connection at random among the others
// (bursts of them included) and black holes of up to 8 s, mass jobs that
// retry and fail among them (`make chaos`; CHAOS_JOBS, CHAOS_DURATION,
// CHAOS_MAX_BLACKHOLE, CHAOS_CONN_GAP and CHAOS_MASS_RETRY change it).
func TestChaosLedgerFull(t *testing.T) {
	cfg := config{Jobs: 20000, Duration: 10 * time.Minute, Seed: 1, MaxHole: 8 * time.Second, MassRetry: true}.fromEnv(t)
	runChaos(t, cfg).report(t)
}
