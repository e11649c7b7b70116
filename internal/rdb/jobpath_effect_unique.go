package rdb

import (
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
)

// effectUniqueLayout is effect_unique.lua's section of the finish: a
// unique job's state.
var effectUniqueLayout = jobpathLayout{Module: "effect_unique",
	Keys: []string{"<ns>:unique:<uid>:state", "<ns>:unique:<uid>:deferred"}, Args: []string{"tag", "prefix", "failed_at"}}

// appendEffectUnique appends effectUniqueLayout's section for uid.
func appendEffectUnique(k protocol.Keys, keys, args []any, uid string, now time.Time) ([]any, []any) {
	return append(keys, k.UniqueState(uid), k.UniqueDeferred(uid)),
		append(args, "u", k.Prefix(), protocol.FormatFailedAt(now))
}
