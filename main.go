// Command resque-go is a Resque-compatible worker runtime.
package main

import (
	"os"

	"github.com/rs/zerolog"

	"github.com/resque-go/resque-go/app"
	"github.com/resque-go/resque-go/worker"
)

func main() {
	// Durations in logs carry their unit ("duration":"1.52ms"), in the
	// console and in JSON alike. zerolog keeps this setting in a package
	// variable, so it is set here, once, before anything logs.
	zerolog.DurationFieldFormat = zerolog.DurationFormatString
	os.Exit(app.Main(worker.NewRegistry()))
}
