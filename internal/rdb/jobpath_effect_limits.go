package rdb

import (
	"strconv"

	"github.com/resque-go/resque-go/internal/protocol"
)

// effectLimitsLayout is effect_limits.lua's section of the finish: a
// cap's slot freed, one section a cap the job holds.
var effectLimitsLayout = jobpathLayout{Module: "effect_limits",
	Keys: []string{"<ns>:resque-go:limit:<name>:holders", "<ns>:resque-go:limit:<name>:parked"},
	Args: []string{"tag", "member", "cap", "now-ms", "queue-prefix"}}

// LimitHold is a cap's slot a claimed job holds: the limit's name (a
// per-key limit's with its key) and its cap.
type LimitHold struct {
	Name string
	Cap  int
}

// LimitMember is how a cap's holders name a hold: the worker id and the
// claim's sequence.
func LimitMember(workerID, seq string) string { return workerID + ":" + seq }

// appendEffectLimits appends effectLimitsLayout's section for each hold.
func appendEffectLimits(k protocol.Keys, keys, args []any, member string, nowMS int64, holds []LimitHold) ([]any, []any) {
	now := strconv.FormatInt(nowMS, 10)
	for _, h := range holds {
		base := k.LimitBase(h.Name)
		keys = append(keys, base+protocol.LimitHoldersSuffix, base+protocol.LimitParkedSuffix)
		args = append(args, "m", member, strconv.Itoa(h.Cap), now, k.Queue(""))
	}
	return keys, args
}
