package rdb

import (
	"strconv"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// effectAttemptsLayout is effect_attempts.lua's section of the finish: the
// job's attempts counter (the claim's side reads the claim's layout).
var effectAttemptsLayout = jobpathLayout{Module: "effect_attempts",
	Keys: []string{"<ns>:attempts:<digest>", "<ns>:attempts-index"}, Args: []string{"tag", "attempts", "ttl"}}

// appendEffectAttempts appends effectAttemptsLayout's section: the counter
// of digest set to attempts for ttl (at least a second), or deleted when
// attempts is 0.
func appendEffectAttempts(k protocol.Keys, keys, args []any, digest string, attempts int, ttl time.Duration) ([]any, []any) {
	secs := int64(ttl / time.Second)
	if secs <= 0 {
		secs = 1
	}
	return append(keys, k.Attempts(digest), k.AttemptsIndex()), append(args, "a", strconv.Itoa(max(attempts, 0)), secs)
}
