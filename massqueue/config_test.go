package massqueue_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/massqueue"
)

// The released server's config.yml, with its other sections, reads as is.
const releasedConfig = `
node_id: "web_1"
log:
    level: notice
    path: "php://stdout"
redis:
    hostname: redis
    port: 6379
task_include_path: "/var/www"
fail_retries: 5
allocators:
    job-count: 1
    batch-count: 1
pools:
    static:
        general:
            worker_count: 2
        reports:
            worker_count: 1
    batch:
        imports:
            unit_count: 2
            workers_per_unit: 2
mapping:
    static:
        default:
            default: general
            report: reports
        s1:
            report: general
    batch:
        default:
            default: imports
        s1:
            report: general_batch
`

func TestParseReleasedConfig(t *testing.T) {
	cfg, err := massqueue.ParseConfig([]byte(releasedConfig), "host-a.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.NodeID != "web_1" || len(cfg.StaticPools) != 2 || cfg.StaticPools[0] != (massqueue.StaticPool{Name: "general", WorkerCount: 2}) ||
		len(cfg.BatchPools) != 1 || cfg.BatchPools[0] != (massqueue.BatchPool{Name: "imports", UnitCount: 2, WorkersPerUnit: 2}) {
		t.Fatalf("%+v", cfg)
	}
	for _, c := range []struct {
		kind              massqueue.Kind
		source, job, pool string
	}{
		{massqueue.KindStatic, "s9", "x", "general"},
		{massqueue.KindStatic, "s9", "report", "reports"},
		{massqueue.KindStatic, "s1", "report", "general"},
		{massqueue.KindBatch, "s1", "report", "general_batch"},
		{massqueue.KindBatch, "s1", "other", "imports"},
	} {
		if p, _ := cfg.Map(c.kind, c.source, c.job); p != c.pool {
			t.Errorf("%s %s/%s: %q, want %q", c.kind, c.source, c.job, p, c.pool)
		}
	}
	if cfg.UnitID(1) != "web_1-1" {
		t.Errorf("unit id %q", cfg.UnitID(1))
	}
	d, err := massqueue.ParseConfig([]byte("pools: {static: {g: {worker_count: 1}}}\nmapping: {static: {default: {default: g}}}"), "host-a.example.com")
	if err != nil || d.NodeID != "host_a" {
		t.Errorf("default node id: %+v %v", d, err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"node_id: a-b\n", "node_id"},
		{"pools: {static: {g: {}}}\nmapping: {static: {default: {default: g}}}", "worker_count"},
		{"pools: {batch: {g: {unit_count: 1}}}\nmapping: {batch: {default: {default: g}}}", "workers_per_unit"},
		{"pools: {static: {g: {worker_count: 1}}}\nmapping: {static: {default: {x: g}}}", "default.default"},
		{"pools: {static: {g: {worker_count: 1}}, batch: {g: {unit_count: 1, workers_per_unit: 1}}}\nmapping: {static: {default: {default: g}}, batch: {default: {default: g}}}", "unique"},
		{"pools: {static: {'a:b': {worker_count: 1}}}\nmapping: {static: {default: {default: g}}}", "':'"},
		{"pools: [", "yaml"},
	} {
		_, err := massqueue.ParseConfig([]byte(c.yaml), "h")
		if err == nil || !errors.Is(err, massqueue.ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.yaml, err, c.want)
		}
	}
}
