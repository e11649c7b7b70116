package pool

import (
	"path/filepath"
	"strings"
	"testing"
)

// scheduler: true or a mapping adds a scheduler child with the file's Redis
// and host settings; a schedule path is taken from the pool file's
// directory.
func TestParseScheduler(t *testing.T) {
	cfg, err := Parse("/etc/resque/pool.yml", []byte(`
redis: redis://127.0.0.1:6390/2
namespace: app
hostname: web-1
scheduler:
  schedule: schedule.yml
  environment: production
  dynamic: true
workers: [{queues: q, processes: 1}]
`), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc := cfg.SchedulerChild()
	if sc.Schedule != filepath.Join("/etc/resque", "schedule.yml") || sc.Environment != "production" || !sc.Dynamic ||
		sc.Redis.URL != "redis://127.0.0.1:6390/2" || sc.Redis.Namespace != "app" || sc.Hostname != "web-1" {
		t.Errorf("scheduler child = %+v", sc)
	}
	on := parse(t, "scheduler: true\nworkers: [{queues: q, processes: 1}]\n", LoadOptions{})
	if on.Scheduler == nil || on.Scheduler.Schedule != "" {
		t.Errorf("scheduler: true = %+v", on.Scheduler)
	}
	off := parse(t, "scheduler: false\nworkers: [{queues: q, processes: 1}]\n", LoadOptions{})
	if off.Scheduler != nil {
		t.Errorf("scheduler: false = %+v", off.Scheduler)
	}
	for _, bad := range []string{"scheduler: [1]\n", "scheduler: {schedul: x.yml}\n", "scheduler: maybe\n"} {
		_, err := Parse("pool.yml", []byte(bad+"workers: [{queues: q, processes: 1}]\n"), LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), "scheduler") {
			t.Errorf("%q: err = %v, want one naming scheduler", bad, err)
		}
	}
}
