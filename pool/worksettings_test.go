package pool

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const workSettings = `
retry_backoff: exp:2s:10m:0.2
class_retry:
  MailJob: "5:fixed:30s"
  Archive: 2
max_recoveries: 0
heartbeat_interval: 2.5
mover: false
ruby_prune: yes
graceful_term: true
dirty_exit_on_term: false
`

// The work settings without a pool equivalent before: each file key
// becomes the work flag of the same name, in both formats.
func TestWorkSettingsBecomeFlags(t *testing.T) {
	want := []string{"--retry-backoff", "exp:2s:10m:0.2", "--class-retry", "Archive=2", "--class-retry", "MailJob=5:fixed:30s",
		"--max-recoveries", "0", "--heartbeat-interval", "2.5",
		"--mover=false", "--ruby-prune=true", "--graceful-term=true", "--dirty-exit-on-term=false"}
	for _, sets := range []string{"workers: {a: 1}\n", "queues: {a: {worker_count: 1}}\n"} {
		cfg := parse(t, workSettings+sets, LoadOptions{})
		args := cfg.Child(cfg.Sets[0]).Args
		i := slices.Index(args, "--retry-backoff")
		if i < 0 || !reflect.DeepEqual(args[i:], want) {
			t.Errorf("%sargs = %q\nwant them to end with %q", sets, args, want)
		}
	}
	// Unset, they are left to work (and its environment variables).
	cfg := parse(t, "workers: {a: 1}\n", LoadOptions{})
	for _, a := range cfg.Child(cfg.Sets[0]).Args {
		for _, f := range []string{"retry-backoff", "class-retry", "max-recoveries", "heartbeat-interval", "mover", "ruby-prune", "graceful-term", "dirty-exit-on-term"} {
			if strings.HasPrefix(a, "--"+f) {
				t.Errorf("unset %s passed: %q", f, a)
			}
		}
	}
}

func TestWorkSettingsErrors(t *testing.T) {
	for text, want := range map[string]string{
		"retry_backoff: exp":              `pool.yml:1: retry_backoff: backoff "exp": want none, fixed:30s or exp:BASE[:MAX[:JITTER]]`,
		"retry_backoff: fixed:soon":       `pool.yml:1: retry_backoff: backoff "fixed:soon"`,
		"retry_backoff: exp:1s:1m:2":      `pool.yml:1: retry_backoff: backoff "exp:1s:1m:2"`,
		"class_retry: {A: 0}":             `pool.yml:1: class_retry.A: "0": want ATTEMPTS[:BACKOFF]`,
		"class_retry: {A: '3:sometimes'}": `pool.yml:1: class_retry.A: backoff "sometimes"`,
		"class_retry: [A]":                `pool.yml:1: class_retry: want a mapping`,
		"max_recoveries: -1":              "pool.yml:1: max_recoveries: -1 is out of range",
		"heartbeat_interval: 0.5":         "pool.yml:1: heartbeat_interval: must be at least 1s",
		"heartbeat_interval: 2m":          "pool.yml:1: heartbeat_interval: must be at most 1m0s",
		"mover: sometimes":                `pool.yml:1: mover: want true or false, got "sometimes"`,
		"graceful_terms: true":            `pool.yml:1: unknown key "graceful_terms" (did you mean "graceful_term"?)`,
	} {
		_, err := Parse("pool.yml", []byte(text+"\nworkers: {a: 1}\n"), LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v\nwant %q", text, err, want)
		}
	}
}

// Each setting reaches the argv of the children the supervisor starts.
func TestSupervisorPassesWorkSettings(t *testing.T) {
	t.Parallel()
	h := newHarness(t, workSettings+"workers: {a: 1}\n", nil)
	h.sup.Start(context.Background())
	evs := h.waitFor("child", func(evs []Event) bool { return count(evs, EventStarted, "a") == 1 })
	pid := pidsOf(evs, EventStarted, "a")[0]
	h.ready(pid)
	got := h.childLog(pid)
	for _, want := range []string{"--retry-backoff exp:2s:10m:0.2", "--class-retry Archive=2", "--class-retry MailJob=5:fixed:30s",
		"--max-recoveries 0", "--heartbeat-interval 2.5", "--mover=false", "--ruby-prune=true", "--graceful-term=true", "--dirty-exit-on-term=false"} {
		if !strings.Contains(got, " "+want+" ") {
			t.Errorf("child args lack %q:\n%s", want, got)
		}
	}
	h.sup.Shutdown()
}
