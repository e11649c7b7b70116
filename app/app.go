// Package app is the entry point for binaries that embed resque-go: build
// your own main, register Go handlers by class name, and get the same CLI
// (work, enqueue, demo ...) with those handlers available.
//
//	func main() {
//		reg := worker.NewRegistry()
//		reg.Register("Archive", func(ctx context.Context, j *worker.Job) error { ... })
//		os.Exit(app.Main(reg))
//	}
package app

import (
	"context"
	"os"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/internal/cli"
	"github.com/resque-go/resque-go/internal/proctitle"
	"github.com/resque-go/resque-go/worker"
)

// Main runs the resque-go CLI on os.Args with the handlers in reg and
// returns the exit code: 0 clean (also after a signal), 1 runtime failure,
// 2 usage or configuration error.
func Main(reg *worker.Registry) int {
	// The worker shows what it does in its process title (ps), where Ruby
	// Resque and php-resque look for live workers: the command-line memory
	// will change, so nothing may keep referring to it.
	os.Args = proctitle.Prepare(os.Args)
	// Durations in logs carry their unit ("duration":"1.52ms"), in the
	// console and in JSON alike; zerolog keeps this in a package variable.
	zerolog.DurationFieldFormat = zerolog.DurationFormatString
	return cli.Run(context.Background(), os.Args, os.Stdout, os.Stderr, reg)
}
