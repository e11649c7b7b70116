package pool_test

import (
	"fmt"
	"log"

	"github.com/resque-go/resque-go/pool"
)

// Parse reads a pool file (here resque-pool's format); each queue set
// becomes Processes children, each started with the node config Child
// gives. `resque-go pool` runs them.
func ExampleParse() {
	cfg, err := pool.Parse("resque-pool.yml", []byte(`
"high,low": 2
mail: 1
`), pool.LoadOptions{})
	if err != nil {
		log.Fatal(err) // every problem, each with its line
	}
	fmt.Println(cfg.Format)
	for _, set := range cfg.Sets {
		child := cfg.Child(set)
		fmt.Println(set.Processes, "x", child.Queues, "concurrency", child.Concurrency)
	}
	// Output:
	// resque-pool
	// 2 x high,low concurrency 1
	// 1 x mail concurrency 1
}
