package rdb

import "github.com/resque-go/resque-go/internal/protocol"

// effectReleaseLayout is effect_release.lua's section of the finish: the
// release of a serial source's lock.
var effectReleaseLayout = jobpathLayout{Module: "effect_release",
	Keys: []string{"<ns>:queuedata:<q>:lock"}, Args: []string{"tag", "token"}}

// appendEffectRelease appends effectReleaseLayout's section for queue q's
// lock, held with token.
func appendEffectRelease(k protocol.Keys, keys, args []any, q, token string) ([]any, []any) {
	return append(keys, k.SerialLock(q)), append(args, "l", token)
}
