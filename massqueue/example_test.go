package massqueue_test

import (
	"fmt"
	"log"

	"github.com/resque-go/resque-go/massqueue"
)

// ParseConfig checks a mass config (resqu-server's format); Map routes a
// source's job by it, as the allocators do when no override is set
// (client.SetMassRoute).
func ExampleParseConfig() {
	cfg, err := massqueue.ParseConfig([]byte(`
pools:
  static:
    default: {worker_count: 2}
    mail: {worker_count: 4}
  batch:
    imports: {unit_count: 2, workers_per_unit: 3}
mapping:
  static:
    default: {default: default, newsletter: mail}
  batch:
    default: {default: imports}
`), "worker-1.example.com")
	if err != nil {
		log.Fatal(err) // errors.Is(err, massqueue.ErrConfig)
	}
	for _, job := range []string{"newsletter", "invoice"} {
		pool, from := cfg.Map(massqueue.KindStatic, "tenant-7", job)
		fmt.Println(job, "->", pool, "("+from+")")
	}
	fmt.Println(cfg.UnitID(1))
	// Output:
	// newsletter -> mail (mapping.static.default.newsletter)
	// invoice -> default (mapping.static.default.default)
	// worker_1-1
}
