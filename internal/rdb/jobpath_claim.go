package rdb

// claimLayout is the fixed part of the core claim's layout
// (scripts/jobpath/claim.lua); the sources' keys and arguments follow, as
// its header says (buildClaimKeysArgs lays them out).
var claimLayout = jobpathLayout{Module: "claim",
	Keys: []string{"pause-all-workers", "worker:<id>", "claim-sequences", "attempts-index"},
	Args: []string{"run_at", "now", "status-prefix", "worker-id", "attempts-prefix"},
}
