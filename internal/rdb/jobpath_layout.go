package rdb

// jobpathLayout is the slice of KEYS and ARGV a module of the job's path
// (scripts/jobpath/<Module>.lua) owns, named as its header names them,
// relative to its base: Keys[i] is its KEYS[+i], Args[i] its ARGV[+i].
// The Go file of the module's name appends exactly that slice;
// TestJobpathHeaders checks each header against its layout.
type jobpathLayout struct {
	Module     string
	Keys, Args []string
}

// jobpathLayouts are the layouts of the modules that own a slice. A module
// not listed reads the layout of the claim or the finish it is part of
// (its header says which entries).
var jobpathLayouts = []jobpathLayout{
	claimLayout, finishLayout, finishPushLayout, finishDelayedLayout,
	effectStatusLayout, effectAttemptsLayout, effectWaitingLayout,
	effectReleaseLayout, effectUniqueLayout, effectWakeLayout, effectLimitsLayout, effectDepsLayout, effectGroupLayout,
	sourceStaticRingLayout, sourceUnitRingLayout, sourceLimitsLayout,
	effectTagsLayout, effectEventsLayout,
}
