// Package poolrun is the process supervisor behind `resque-go pool`: it
// keeps one worker process running per slot of a pool.Config, restarts
// what dies with a capped backoff, converges on a new config, and stops
// the children gracefully (QUIT) or hard (TERM, then KILL after a
// deadline); it publishes the manager's status record (ReadStatus reads
// them back).
//
// Children are the same binary started as `<binary> work --node-config-fd
// 3`, each handed its node.Config (pool.Config.Child) whole through a
// pipe, so a binary that embeds the CLI with its own Go handlers
// supervises children that have them. The package does not touch signals
// of its own process: internal/cli maps them to Stop, Shutdown, Reload and
// Signal.
package poolrun
