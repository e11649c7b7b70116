// Command resque-go is a Resque-compatible worker runtime.
package main

import (
	"os"

	"github.com/resque-go/resque-go/app"
	"github.com/resque-go/resque-go/worker"
)

func main() {
	os.Exit(app.Main(worker.NewRegistry()))
}
