package rdb

import (
	"strconv"

	"github.com/resque-go/resque-go/internal/protocol"
)

// effectTagsLayout is effect_tags.lua's section of the finish: the job
// leaves its tags' indexes (one key a tag).
var effectTagsLayout = jobpathLayout{Module: "effect_tags",
	Keys: []string{"<ns>:resque-go:tag:<t>"}, Args: []string{"tag", "tags", "job-id"}}

// appendEffectTags appends effectTagsLayout's section for job id's tags.
func appendEffectTags(k protocol.Keys, keys, args []any, id string, tags []string) ([]any, []any) {
	for _, t := range tags {
		keys = append(keys, k.Tag(t))
	}
	return keys, append(args, "t", strconv.Itoa(len(tags)), id)
}
