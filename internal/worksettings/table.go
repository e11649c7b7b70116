// Package worksettings is the one table of a worker's settings: for each,
// the node.Config field it fills, the flag and environment variables
// resque-go work reads it from, the key a pool file gives it under (for
// every child), its type, its bounds and its default. The work command's
// flags, the pool file's worker-setting keys and the node.Config both
// build come from this table, so a setting is added in one place.
//
// To add a setting: add its field to node.Config (and check it in
// Config.Validate), then add a row to Table. A row with a Key is read from
// the top level of a pool file too; one without is work's only.
package worksettings

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/resque-go/resque-go/internal/protocol"
	"github.com/resque-go/resque-go/node"
	"github.com/resque-go/resque-go/worker"
)

// Type is how a setting is written.
type Type int

const (
	// Bool is true or false (a pool file takes YAML's yes/no too).
	Bool Type = iota + 1
	// Int is a whole number.
	Int
	// Duration is seconds (5, 0.5) or a Go duration (250ms, 2m).
	Duration
	// String is text; a pool file's is trimmed and must not be empty.
	String
	// List is a repeatable flag, one entry each time.
	List
	// ClassMap is a value per job class: 'Class=VALUE' as a repeatable
	// flag, a mapping {Class: VALUE} in a pool file.
	ClassMap
)

// Setting is one row of the table.
type Setting struct {
	// Field is the node.Config field the setting fills, as node's errors
	// name it (Config.FailRetries).
	Field string
	// Key is the top-level pool-file key; "" when a pool file does not
	// take it at the top level (a queue set's setting, or the manager's).
	Key string
	// SetKey is the key a queue set of a pool file gives it under, for
	// that set's children only; "" when a set does not take it.
	SetKey string
	// Flag is work's flag; Short its one-letter alias ("" for none).
	Flag, Short string
	// Env are the environment variables work reads the setting from: the
	// first is shown in --help; the others (the names Ruby Resque,
	// php-resque or earlier releases used) are read only when neither the
	// flag nor the first is set.
	Env []string
	// Type is how the setting is written.
	Type Type
	// Default is the flag's default as --help shows it ("" for none;
	// "true" for a Bool that is on unless turned off).
	Default string
	// Usage is the flag's help text.
	Usage string
	// Hidden keeps the flag out of --help (resque-go pool sets it).
	Hidden bool
	// Min and Max bound an Int of a pool file; MinDuration and
	// MaxDuration a Duration (MaxDuration 0: no upper bound).
	Min, Max                 int
	MinDuration, MaxDuration time.Duration
	// SetMinDuration bounds a Duration of a queue set from below where a
	// set's value means more than work's (a pool's child never drains:
	// its interval is at least 1ms).
	SetMinDuration time.Duration
	// Want, when set, says what a value given as 0 on the command line
	// (or in the environment) should have been: node.Config reads 0 as
	// the default, so there 0 is a mistake. It also says what a Duration
	// flag outside MinDuration..MaxDuration should be.
	Want string
	// Check validates a String (or each value of a ClassMap) read from a
	// pool file; work leaves that to node.Config.Validate.
	Check func(string) error
	// Set stores a value read from the flag or the file into c, in
	// node.Config's terms (work's --max-recoveries 0, none, is
	// MaxRecoveries -1 there).
	Set func(c *node.Config, v Value)
}

// Value is a setting's value as read; the field of its Type is set.
type Value struct {
	Bool     bool
	Int      int
	Duration time.Duration
	String   string
	// List holds a List's entries, or a ClassMap's as "Class=VALUE".
	List []string
}

// heartbeatWant is what --heartbeat-interval takes, and why.
const heartbeatWant = "1 to 60 seconds (heartbeats are stored to the second; Ruby Resque prunes a worker whose heartbeat is 300 s old)"

// Table is every setting of a worker, in the order work's --help lists
// them (after the Redis, logging and handler flags every worker command
// shares).
var Table = []Setting{
	{Field: "Fork", SetKey: "fork", Flag: "fork", Env: []string{"RESQUE_FORK"}, Type: Bool,
		Usage: "run every job in a fresh child process (this binary re-executed; each slot starts its next one ahead), isolating crashes and leaks",
		Set:   func(c *node.Config, v Value) { c.Fork = v.Bool }},
	{Field: "Queues", Flag: "queues", Short: "q", Env: []string{"QUEUE", "QUEUES"}, Type: String,
		Usage: "queues in priority order: high,low; * and globs expand against the queues set; !pattern excludes",
		Set:   func(c *node.Config, v Value) { c.Queues = v.String }},
	{Field: "Mass", Flag: "mass", Env: []string{"RESQUE_MASS"}, Type: String,
		Usage: "instead of --queues, work a mass-queue pool: static:POOL (its sources round-robin) or unit:POOL:UNIT (a batch pool's unit); resque-go pool sets it from a mass config",
		Set:   func(c *node.Config, v Value) { c.Mass = v.String }},
	{Field: "Concurrency", SetKey: "concurrency", Flag: "concurrency", Short: "c", Env: []string{"COUNT", "RESQUE_CONCURRENCY"}, Type: Int, Default: "1",
		Usage: "job slots in this process, each with its own worker id", Want: fmt.Sprintf("1 to %d", node.MaxConcurrency),
		Min: 1, Max: node.MaxConcurrency,
		Set: func(c *node.Config, v Value) { c.Concurrency = v.Int }},
	{Field: "Interval", SetKey: "interval", Flag: "interval", Env: []string{"INTERVAL"}, Type: Duration, Default: "5", SetMinDuration: time.Millisecond,
		Usage: "poll interval when polling (seconds, or a duration such as 500ms); 0: work until every queue is empty, then exit (Ruby's INTERVAL=0)",
		Set: func(c *node.Config, v Value) {
			// Ruby's INTERVAL=0: work until the queues are empty
			c.Interval, c.Drain = v.Duration, v.Duration == 0
		}},
	{Field: "Serial", Flag: "serial", Env: []string{"RESQUE_SERIAL"}, Type: List,
		Usage: "run this queue one job at a time across every process (a queue named in --queues; repeatable)",
		Set:   func(c *node.Config, v Value) { c.Serial = v.List }},
	{Field: "Polling", SetKey: "polling", Flag: "polling", Env: []string{"RESQUE_POLLING"}, Type: Bool,
		Usage: "poll every --interval instead of blocking waits",
		Set:   func(c *node.Config, v Value) { c.Polling = v.Bool }},
	{Field: "Hostname", Flag: "hostname", Env: []string{"RESQUE_HOSTNAME"}, Type: String,
		Usage: "host name in worker ids and queue statistics (default: this machine's)",
		Set:   func(c *node.Config, v Value) { c.Hostname = v.String }},
	{Field: "JobTimeout", SetKey: "timeout", Flag: "timeout", Env: []string{"RESQUE_JOB_TIMEOUT"}, Type: Duration, Default: "0",
		Usage: "per-job timeout; 0 means none (seconds or a duration)",
		Set:   func(c *node.Config, v Value) { c.JobTimeout = v.Duration }},
	{Field: "TermTimeout", Key: "term_timeout", Flag: "term-timeout", Env: []string{"RESQUE_TERM_TIMEOUT"}, Type: Duration, Default: "4",
		Usage: "on TERM/INT, how long cancelled jobs get before they are requeued (0: at once)",
		Set: func(c *node.Config, v Value) {
			// 0 takes jobs back at once (Ruby's TERM_TIMEOUT=0), which
			// node.Config spells with a negative duration (0 is its default)
			if c.TermTimeout = v.Duration; v.Duration == 0 {
				c.TermTimeout = -1
			}
		}},
	{Field: "GracefulTerm", Key: "graceful_term", Flag: "graceful-term", Env: []string{"GRACEFUL_TERM"}, Type: Bool,
		Usage: "TERM acts like QUIT: finish running jobs, then exit",
		Set:   func(c *node.Config, v Value) { c.GracefulTerm = v.Bool }},
	{Field: "DirtyExitOnTerm", Key: "dirty_exit_on_term", Flag: "dirty-exit-on-term", Env: []string{"RESQUE_DIRTY_EXIT_ON_TERM"}, Type: Bool,
		Usage: "record jobs interrupted by TERM/INT in failed as Resque::DirtyExit instead of requeueing them",
		Set:   func(c *node.Config, v Value) { c.DirtyExitOnTerm = v.Bool }},
	{Field: "HeartbeatInterval", Key: "heartbeat_interval", Flag: "heartbeat-interval", Env: []string{"WORKER_HEARTBEAT_INTERVAL"}, Type: Duration, Default: "5",
		Usage:       "heartbeat interval, 1 to 60 seconds (seconds or a duration)",
		MinDuration: time.Second, MaxDuration: time.Minute, Want: heartbeatWant,
		Set: func(c *node.Config, v Value) { c.HeartbeatInterval = v.Duration }},
	{Field: "MaxRecoveries", Key: "max_recoveries", Flag: "max-recoveries", Env: []string{"RESQUE_MAX_RECOVERIES"}, Type: Int, Default: "3",
		Usage: "how often a dead worker's job is requeued before it is recorded as failed", Min: 0, Max: 1000,
		Set: func(c *node.Config, v Value) {
			// 0 means none, which node.Config spells -1 (0 is its default)
			if c.MaxRecoveries = v.Int; v.Int == 0 {
				c.MaxRecoveries = -1
			}
		}},
	{Field: "FailRetries", Key: "fail_retries", Flag: "fail-retries", Env: []string{"RESQUE_FAIL_RETRIES", "FAIL_RETRIES"}, Type: Int, Default: strconv.Itoa(worker.DefaultMaxAttempts),
		Usage: "attempts a failing job gets in all (resque-v3's fail_retries); 1 never retries", Min: 1, Max: 1000, Want: "1 or more (1 never retries)",
		Set: func(c *node.Config, v Value) { c.FailRetries = v.Int }},
	{Field: "RetryBackoff", Key: "retry_backoff", Flag: "retry-backoff", Env: []string{"RESQUE_RETRY_BACKOFF"}, Type: String, Default: "none",
		Usage: "delay before a retry: none, fixed:30s, or exp:BASE[:MAX[:JITTER]] (exp:2s:10m:0.2)",
		Check: checkBackoff,
		Set:   func(c *node.Config, v Value) { c.RetryBackoff = v.String }},
	{Field: "ClassRetry", Key: "class_retry", Flag: "class-retry", Type: ClassMap,
		Usage: "'Class=ATTEMPTS[:BACKOFF]' overrides the retry policy of one class (MailJob=5:exp:2s:10m); repeatable",
		Check: checkClassRetry,
		Set:   func(c *node.Config, v Value) { c.ClassRetry = v.List }},
	{Field: "Limits", Key: "limits", Flag: "limit", Env: []string{"RESQUE_LIMITS"}, Type: ClassMap,
		Usage: "'Class=N', 'queue:QUEUE=N' or 'Class[PATH]=N' (Import[args.0.tenant]=2: per value at PATH in the payload): at most N such jobs running across every process and host (docs/limits.md); repeatable",
		Check: checkLimitValue,
		Set:   func(c *node.Config, v Value) { c.Limits = v.List }},
	{Field: "Rates", Key: "rates", Flag: "rate", Env: []string{"RESQUE_RATES"}, Type: ClassMap,
		Usage: "'Class=N/PERIOD', 'queue:QUEUE=N/PERIOD' or 'Class[PATH]=N/PERIOD' (Import=100/1m): at most N starts of such jobs per PERIOD across every process and host (docs/limits.md); repeatable",
		Check: checkRateValue,
		Set:   func(c *node.Config, v Value) { c.Rates = v.List }},
	{Field: "NoMover", Key: "mover", Flag: "mover", Env: []string{"RESQUE_MOVER"}, Type: Bool, Default: "true",
		Usage: "promote due jobs of the delayed queue (retries with backoff, reschedules; resque-scheduler's layout); safe with other movers",
		Set:   func(c *node.Config, v Value) { c.NoMover = !v.Bool }},
	{Field: "MetricsAddr", Flag: "metrics-addr", Env: []string{"RESQUE_METRICS_ADDR"}, Type: String,
		Usage: "serve Prometheus /metrics, /healthz (liveness) and /readyz (readiness) on this address (e.g. 127.0.0.1:9292; a bare port, 9292 or :9292, listens on 127.0.0.1 only, 0.0.0.0:9292 on every interface); empty: off",
		Set:   func(c *node.Config, v Value) { c.MetricsAddr = v.String }},
	{Field: "MetricsToken", Flag: "metrics-token", Env: []string{"RESQUE_METRICS_TOKEN"}, Type: String,
		Usage: "bearer token /metrics, /healthz and /readyz require (401 without it); empty: none",
		Set:   func(c *node.Config, v Value) { c.MetricsToken = v.String }},
	{Field: "SupervisorPID", Flag: "supervisor-pid", Type: Int, Hidden: true,
		Usage: "exit (as on TERM) when this process is no longer our parent; set by resque-go pool",
		Set:   func(c *node.Config, v Value) { c.SupervisorPID = v.Int }},
	{Field: "RubyPrune", Key: "ruby_prune", Flag: "ruby-prune", Env: []string{"RESQUE_RUBY_PRUNE"}, Type: Bool,
		Usage: "record a dead worker's job as failed at once (Ruby Resque's behaviour) instead of requeueing it",
		Set:   func(c *node.Config, v Value) { c.RubyPrune = v.Bool }},
	{Field: "Events", Key: "events", Flag: "events", Env: []string{"RESQUE_EVENTS"}, Type: Bool,
		Usage: "append every job's start and end (started, succeeded, failed, retried, rescheduled) to the events stream <ns>:resque-go:events, in the same step (docs/events.md)",
		Set:   func(c *node.Config, v Value) { c.Events = v.Bool }},
	{Field: "EventsMaxLen", Key: "events_max_len", Flag: "events-max-len", Env: []string{"RESQUE_EVENTS_MAX_LEN"}, Type: Int, Default: "100000",
		Usage: "with --events: how many entries the stream keeps, about (whole nodes of entries are trimmed)", Min: 1, Max: 100000000,
		Want: "1 or more entries", Set: func(c *node.Config, v Value) { c.EventsMaxLen = v.Int }},
	{Field: "EventsMaxAge", Key: "events_max_age", Flag: "events-max-age", Env: []string{"RESQUE_EVENTS_MAX_AGE"}, Type: Duration, Default: "0",
		Usage: "with --events: also drop entries older than this (seconds or a duration: 24h); 0 keeps them by count only",
		Set:   func(c *node.Config, v Value) { c.EventsMaxAge = v.Duration }},
}

// ByKey returns the setting a pool file gives under key, nil for none.
func ByKey(key string) *Setting {
	for i := range Table {
		if key != "" && Table[i].Key == key {
			return &Table[i]
		}
	}
	return nil
}

// ByFlag returns the setting of work's flag name, nil for none.
func ByFlag(name string) *Setting {
	for i := range Table {
		if Table[i].Flag == name {
			return &Table[i]
		}
	}
	return nil
}

// BySetKey returns the setting a pool file's queue set gives under key,
// nil for none.
func BySetKey(key string) *Setting {
	for i := range Table {
		if key != "" && Table[i].SetKey == key {
			return &Table[i]
		}
	}
	return nil
}

// SetKeys are the queue-set keys of the table, in its order.
func SetKeys() []string {
	var keys []string
	for _, s := range Table {
		if s.SetKey != "" {
			keys = append(keys, s.SetKey)
		}
	}
	return keys
}

// Keys are the pool-file keys of the table, in its order.
func Keys() []string {
	var keys []string
	for _, s := range Table {
		if s.Key != "" {
			keys = append(keys, s.Key)
		}
	}
	return keys
}

// checkBackoff checks a retry delay as node.Config.RetryBackoff reads it.
func checkBackoff(s string) error {
	_, err := node.ParseBackoff(s)
	return err
}

// checkClassRetry checks one class's ATTEMPTS[:BACKOFF] (5, 5:exp:2s:10m).
func checkClassRetry(spec string) error {
	attempts, backoff, hasBackoff := strings.Cut(spec, ":")
	if n, err := strconv.Atoi(attempts); err != nil || n < 1 || n > 1000 {
		return fmt.Errorf("%q: want ATTEMPTS[:BACKOFF] with attempts from 1 to 1000 (5, 5:exp:2s:10m)", spec)
	}
	if hasBackoff {
		return checkBackoff(backoff)
	}
	return nil
}

// checkLimitValue checks a cap's N (a pool file's limits: {Import: 5}).
func checkLimitValue(v string) error {
	_, err := protocol.ParseLimit("X=" + v)
	return err
}

// checkRateValue checks a rate's N/PERIOD (rates: {Import: 100/1m}).
func checkRateValue(v string) error {
	_, err := protocol.ParseRate("X=" + v)
	return err
}
