// Package planio is the Redis side of package plan: add, read and remove
// plans, and the Planner that fires them, each (plan, slot) exactly once,
// with any number of planners running at once.
package planio
