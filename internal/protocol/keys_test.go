package protocol_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/resque-go/resque-go/fixtures"
	"github.com/resque-go/resque-go/internal/protocol"
)

func TestKeys(t *testing.T) {
	t.Parallel()
	const (
		id  = "vm:25407:high,mail"
		sha = "da39a3ee5e6b4b0d3255bfef95601890afd80709"
		job = "b43b12917df99a3fc079a8852f9f4f32"
	)
	builders := []struct {
		name string
		key  func(protocol.Keys) string
		want string // without "<ns>:"
	}{
		{"Queues", protocol.Keys.Queues, "queues"},
		{"Queue", func(k protocol.Keys) string { return k.Queue("mail") }, "queue:mail"},
		{"Queue with colon", func(k protocol.Keys) string { return k.Queue("mail:eu:1") }, "queue:mail:eu:1"},
		{"QueuePrefix", protocol.Keys.QueuePrefix, "queue:"},
		{"Workers", protocol.Keys.Workers, "workers"},
		{"Worker", func(k protocol.Keys) string { return k.Worker(id) }, "worker:" + id},
		{"WorkerStarted", func(k protocol.Keys) string { return k.WorkerStarted(id) }, "worker:" + id + ":started"},
		{"Heartbeats", protocol.Keys.Heartbeats, "workers:heartbeat"},
		{"StatProcessed", protocol.Keys.StatProcessed, "stat:processed"},
		{"StatFailed", protocol.Keys.StatFailed, "stat:failed"},
		{"StatRetries", protocol.Keys.StatRetries, "stat:retries"},
		{"StatProcessedWorker", func(k protocol.Keys) string { return k.StatProcessedWorker(id) }, "stat:processed:" + id},
		{"StatFailedWorker", func(k protocol.Keys) string { return k.StatFailedWorker(id) }, "stat:failed:" + id},
		{"Failed", protocol.Keys.Failed, "failed"},
		{"Retries", protocol.Keys.Retries, "retries"},
		{"PauseAll", protocol.Keys.PauseAll, "pause-all-workers"},
		{"PruneLock", protocol.Keys.PruneLock, "pruning_dead_workers_in_progress"},
		{"QueueStat", func(k protocol.Keys) string {
			return k.QueueStat("web1", protocol.QueueStatDequeued, "mail")
		}, "queuestat:web1:dequeued:mail"},
		{"QueueStat queue with colon", func(k protocol.Keys) string {
			return k.QueueStat("web1", protocol.QueueStatProcessingTime, "a:b")
		}, "queuestat:web1:processing_time:a:b"},
		{"QueueStatPattern", protocol.Keys.QueueStatPattern, "queuestat:*"},
		{"WorkerIntervals", protocol.Keys.WorkerIntervals, "resque-go:heartbeat_interval"},
		{"Recoveries", func(k protocol.Keys) string { return k.Recoveries(sha) }, "resque-go:recovered:" + sha},
		{"JobStatus", func(k protocol.Keys) string { return k.JobStatus(job) }, "job:" + job + ":status"},
		{"JobStatusPrefix", protocol.Keys.JobStatusPrefix, "job:"},
		{"PlanCalendars", protocol.Keys.PlanCalendars, "resque-go:plan_calendars"},
		{"PausedPlans", protocol.Keys.PausedPlans, "resque-go:plans_paused"},
		{"PausedPlanGroups", protocol.Keys.PausedPlanGroups, "resque-go:plan_groups_paused"},
	}
	namespaces := []struct {
		name string
		keys protocol.Keys
		ns   string
	}{
		{"resque", protocol.NewKeys("resque"), "resque"},
		{"resque-v3", protocol.NewKeys("resque-v3"), "resque-v3"},
		{"trailing colon", protocol.NewKeys("resque-v3:"), "resque-v3"},
		{"php PREFIX", protocol.NewKeys("resque:"), "resque"},
		{"empty means default", protocol.NewKeys(""), "resque"},
		{"only a colon", protocol.NewKeys(":"), "resque"},
		{"zero value", protocol.Keys{}, "resque"},
		{"nested", protocol.NewKeys("app:resque"), "app:resque"},
	}
	for _, ns := range namespaces {
		if got := ns.keys.Namespace(); got != ns.ns {
			t.Errorf("%s: Namespace() = %q, want %q", ns.name, got, ns.ns)
		}
		for _, b := range builders {
			want := ns.ns + ":" + b.want
			if ns.ns == protocol.V3Namespace && (b.name == "Workers" || b.name == "Heartbeats") {
				// the registry is kept where the v3 runtime does not read it
				want = ns.ns + ":resque-go:" + b.want
			}
			if got := b.key(ns.keys); got != want {
				t.Errorf("%s: %s = %q, want %q", ns.name, b.name, got, want)
			}
		}
	}
	if protocol.DefaultNamespace != "resque" {
		t.Errorf("DefaultNamespace = %q", protocol.DefaultNamespace)
	}
	// QueuePrefix maps a queue key back to its name.
	k := protocol.NewKeys("resque-v3")
	if q, ok := strings.CutPrefix(k.Queue("a:b"), k.QueuePrefix()); !ok || q != "a:b" {
		t.Errorf("QueuePrefix does not strip Queue: %q %v", q, ok)
	}
	if p := k.JobStatusPrefix(); k.JobStatus(job) != p+job+":status" {
		t.Errorf("JobStatusPrefix %q does not prefix JobStatus %q", p, k.JobStatus(job))
	}
}

func TestQueueStatNames(t *testing.T) {
	t.Parallel()
	got := []string{protocol.QueueStatDequeued, protocol.QueueStatQueueTime, protocol.QueueStatProcessed,
		protocol.QueueStatProcessingTime, protocol.QueueStatFailed, protocol.QueueStatRetries}
	want := []string{"dequeued", "queue_time", "processed", "processing_time", "failed", "retries"}
	if !slices.Equal(got, want) {
		t.Errorf("queue stat names = %q, want %q", got, want)
	}
}

// TestKeysMatchFixtures checks our key names against the keys Ruby and PHP
// actually wrote in the captured dumps.
func TestKeysMatchFixtures(t *testing.T) {
	t.Parallel()
	k := protocol.NewKeys("")
	tests := []struct {
		dir, scenario string
		keys          []string
	}{
		{"ruby-resque-3.0.0", "enqueue", []string{k.Queue("mail"), k.Queues()}},
		{"ruby-resque-3.0.0", "worker-running", []string{
			k.Workers(), k.Worker("vm:25407:high,mail"), k.WorkerStarted("vm:25407:high,mail"),
			k.Heartbeats(), k.PruneLock(), k.Queues()}},
		{"ruby-resque-3.0.0", "failure", []string{
			k.Failed(), k.StatFailed(), k.StatProcessed(),
			k.StatFailedWorker("vm:25655:high,mail"), k.StatProcessedWorker("vm:25655:high,mail")}},
		{"ruby-resque-3.0.0", "pause", []string{k.PauseAll()}},
		{"ruby-resque-2.7.0", "worker-running", []string{k.Workers(), k.Heartbeats(), k.PruneLock()}},
		{"php-resque-resque-1.3.6", "status-waiting", []string{k.JobStatus("198ba821d73212318fb6fec884f2fb9b")}},
		{"php-resque-chrisboulton", "status-complete", []string{k.JobStatus("94e5e94b60c0987121bcfeeaadbed970")}},
		{"node-resque-9.7.1", "worker-running", []string{k.Workers(), k.Worker("vm:2351:high,mail"), k.WorkerStarted("vm:2351:high,mail")}},
	}
	for _, tt := range tests {
		names := fixtures.MustLoad(tt.dir, tt.scenario).Names()
		for _, key := range tt.keys {
			if !slices.Contains(names, key) {
				t.Errorf("%s/%s has no key %q; it has %q", tt.dir, tt.scenario, key, names)
			}
		}
	}
}

func TestParseQueueStat(t *testing.T) {
	t.Parallel()
	stats := []string{protocol.QueueStatDequeued, protocol.QueueStatQueueTime, protocol.QueueStatProcessed,
		protocol.QueueStatProcessingTime, protocol.QueueStatFailed, protocol.QueueStatRetries}
	for _, ns := range []string{"resque", "resque-v3", "resque-v3:", "app:resque"} {
		k := protocol.NewKeys(ns)
		for _, host := range []string{"web1", "vm", "ip-10-0-0-1.ec2.internal"} {
			for _, stat := range stats {
				for _, q := range []string{"mail", "a:b", "mail:eu:1", "q:", ":q", "é ✓"} {
					key := k.QueueStat(host, stat, q)
					h, s, gotQ, ok := k.ParseQueueStat(key)
					if !ok || h != host || s != stat || gotQ != q {
						t.Errorf("ns %q: ParseQueueStat(%q) = %q %q %q %v, want %q %q %q", ns, key, h, s, gotQ, ok, host, stat, q)
					}
				}
			}
		}
	}

	k := protocol.NewKeys("resque")
	for _, key := range []string{
		"",
		"resque:queuestat:web1:dequeued", // no queue part
		"resque:queuestat:web1",
		"resque:queuestat:",
		"resque:stat:processed",
		"resque-v3:queuestat:web1:dequeued:mail", // another namespace
		"queuestat:web1:dequeued:mail",
		"resque:queue:mail",
	} {
		if h, s, q, ok := k.ParseQueueStat(key); ok {
			t.Errorf("ParseQueueStat(%q) = %q %q %q true, want false", key, h, s, q)
		}
	}
	// The pattern used for SCAN covers every key QueueStat builds.
	pat := k.QueueStatPattern()
	if ok, err := protocol.MatchGlob(pat, k.QueueStat("h", protocol.QueueStatFailed, "a:b")); err != nil || !ok {
		t.Errorf("QueueStatPattern %q does not match a queuestat key (%v)", pat, err)
	}
}
