package rdb

// effectWakeLayout is effect_wake.lua's section of the finish: a static
// pool's source put back on its ring.
var effectWakeLayout = jobpathLayout{Module: "effect_wake",
	Keys: []string{"<ns>:static:ring:<pool>", "<ns>:static:state:<pool>"}, Args: []string{"tag", "source"}}

// appendEffectWake appends effectWakeLayout's section (protocol.Keys.StaticWakeKeys).
func appendEffectWake(keys, args []any, ring, state, source string) ([]any, []any) {
	return append(keys, ring, state), append(args, "w", source)
}
