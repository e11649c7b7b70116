package e2e

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/resque-go/resque-go/internal/redistest"
)

// badSecret is the password of every URL in the bad input table: it must
// never show in any output.
const badSecret = "s3cr3t-Pw"

// badRow is one bad input: resque-go words... [--redis URL --namespace NS]
// args..., and what it must answer.
type badRow struct {
	words string   // "queue peek"
	args  []string // flags, then positional arguments
	code  int      // 2: usage or config, 1: Redis refused or unreachable
	want  string   // the one stderr line contains this
	// noRedis: the command takes no --redis (schedule validate); the row
	// sets its own --redis when args has one
	noRedis bool
}

// redisCommand is a command that connects to Redis, with arguments that
// are valid apart from what a row adds.
type redisCommand struct {
	words string
	flags []string // valid flags it needs
	pos   []string // valid positional arguments
	// oneShot: it exits 1 when Redis cannot be reached; a daemon (work,
	// scheduler, pool) waits for Redis instead
	oneShot bool
	// supervisor: the pool manager, which keeps restarting children that
	// Redis refuses and logs why (TestPoolLogsWhyRedisRefusesChildren)
	// rather than exiting 1
	supervisor bool
}

// badFiles writes the config files the table reads.
func badFiles(t *testing.T) map[string]string {
	dir := t.TempDir()
	files := map[string]string{
		"bad.yml":       "a: [\n",
		"ok-pool.yml":   "workers:\n  - queues: q\n",
		"bad-pool.yml":  "workers:\n  - queues: \"a,[b\"\n    processes: x\n  - queues: q\n    concurrency: -1\n",
		"url-pool.yml":  "redis: \"redis://:" + badSecret + "@host:notaport\"\nworkers:\n  - queues: q\n",
		"v3-pool.yml":   "redis: {hostname: h, port: 99999, password: " + badSecret + "}\nqueues:\n  q: {worker_count: 1}\n",
		"http-pool.yml": "workers: [{queues: q}]\nhandlers: {\"*\": {http: {url: \"ftp://x\", token: " + badSecret + "}}}\n",
		"cron.yml":      "job:\n  cron: \"61 * * * *\"\n  queue: q\n",
		"every.yml":     "job:\n  every: 5 minutes please\n  queue: q\n",
		"noqueue.yml":   "job:\n  every: 5m\n  class: C\n",
		"merge.yml":     "job: &a {every: 1m, queue: q, <<: *a}\n", // once a stack overflow
	}
	paths := map[string]string{}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return paths
}

func badInputTable(t *testing.T, closedAddr string) []badRow {
	f := badFiles(t)
	_, srvAddr, _ := strings.Cut(redisURL, "://")
	refused := "redis://:" + badSecret + "@" + srvAddr // a password for a server that has none
	commands := []redisCommand{
		{"work", []string{"-q", "q", "--exec", "*=true"}, nil, false, false},
		{"enqueue", []string{"--queue", "q", "--class", "C"}, nil, true, false},
		{"stats", nil, nil, true, false},
		{"failed list", nil, nil, true, false},
		{"failed show", nil, []string{"0"}, true, false},
		{"failed retry", []string{"--all"}, nil, true, false},
		{"failed remove", nil, []string{"0"}, true, false},
		{"failed clear", []string{"--yes"}, nil, true, false},
		{"queue list", nil, nil, true, false},
		{"queue size", nil, []string{"q"}, true, false},
		{"queue peek", nil, []string{"q"}, true, false},
		{"queue remove", []string{"--class", "C"}, []string{"q"}, true, false},
		{"queue clear", []string{"--yes"}, []string{"q"}, true, false},
		{"unique list", nil, nil, true, false},
		{"unique show", nil, []string{"u"}, true, false},
		{"unique clear", nil, []string{"u"}, true, false},
		{"delayed list", nil, nil, true, false},
		{"delayed count", nil, nil, true, false},
		{"delayed show", nil, []string{"1700000000"}, true, false},
		{"delayed remove", []string{"--queue", "q"}, nil, true, false},
		{"delayed clear", []string{"--yes"}, nil, true, false},
		{"plan add", []string{"--queue", "q", "--class", "C", "--every", "5m"}, nil, true, false},
		{"plan list", nil, nil, true, false},
		{"plan show", nil, []string{"p"}, true, false},
		{"plan remove", nil, []string{"p"}, true, false},
		{"schedule list", nil, nil, true, false},
		{"schedule show", nil, []string{"s"}, true, false},
		{"scheduler", nil, nil, false, false},
		{"pool", []string{"--config", f["ok-pool.yml"]}, nil, false, true},
		{"pool status", nil, nil, true, false},
	}
	var rows []badRow
	with := func(c redisCommand, extra ...string) []string {
		return append(append(append([]string(nil), c.flags...), extra...), c.pos...)
	}
	// Every Redis command: a malformed URL, TLS files that are not there,
	// an unknown flag, a password the server refuses, a closed port.
	for _, c := range commands {
		rows = append(rows,
			badRow{words: c.words, args: with(c, "--redis", "redis://:"+badSecret+"@host:notaport"), code: 2, want: `bad redis url "redis://:xxxxx@host:notaport"`},
			badRow{words: c.words, args: with(c, "--redis", badSecret+"@host:1:2"), code: 2, want: "bad redis url"},
			badRow{words: c.words, args: with(c, "--redis", "user:pa://"+badSecret+"@host:1"), code: 2, want: "bad redis url"},
			badRow{words: c.words, args: with(c, "--redis", "redis://:"+badSecret+"@h:1/0?db=2"), code: 2, want: "query strings are not supported"},
			badRow{words: c.words, args: with(c, "--redis", "redis://:"+badSecret+"@h:1", "--sentinel-password", badSecret), code: 2, want: "names no Sentinels"},
			badRow{words: c.words, args: with(c, "--redis", "rediss://:"+badSecret+"@h:1", "--tls-ca-file", "/nonexistent/ca.pem"), code: 2, want: `CA file "/nonexistent/ca.pem"`},
			badRow{words: c.words, args: with(c, "--no-such-flag"), code: 2, want: "flag provided but not defined: -no-such-flag"},
		)
		if !c.supervisor {
			rows = append(rows, badRow{words: c.words, args: with(c, "--redis", refused), code: 1, want: "refused the connection: ERR AUTH"})
		}
		if c.oneShot {
			rows = append(rows, badRow{words: c.words, args: with(c, "--redis", "redis://:"+badSecret+"@"+closedAddr), code: 1,
				want: "cannot reach redis at redis://:xxxxx@" + closedAddr})
		}
	}
	r := func(words string, code int, want string, args ...string) badRow {
		return badRow{words: words, args: args, code: code, want: want}
	}
	rows = append(rows,
		// work: every setting
		r("work", 2, `invalid value "x" for flag -concurrency`, "-q", "q", "--concurrency", "x"),
		r("work", 2, `--concurrency -1`, "-q", "q", "--exec", "*=true", "--concurrency", "-1"),
		r("work", 2, `--interval "abc"`, "-q", "q", "--interval", "abc"),
		r("work", 2, `--timeout "-5": must not be negative`, "-q", "q", "--timeout", "-5"),
		r("work", 2, `--term-timeout "1 hour"`, "-q", "q", "--term-timeout", "1 hour"),
		r("work", 2, `--heartbeat-interval "0"`, "-q", "q", "--heartbeat-interval", "0"),
		r("work", 2, `--retry-backoff: backoff "exp:x"`, "-q", "q", "--retry-backoff", "exp:x"),
		r("work", 2, `--class-retry "Foo"`, "-q", "q", "--class-retry", "Foo"),
		r("work", 2, `--fail-retries 0`, "-q", "q", "--fail-retries", "0"),
		r("work", 2, `invalid value "many" for flag -max-recoveries`, "-q", "q", "--max-recoveries", "many"),
		r("work", 2, `unmatched [`, "-q", "a,[b"),
		r("work", 2, `no queues`, "-q", ""),
		r("work", 2, `--exec "noequals"`, "-q", "q", "--exec", "noequals"),
		r("work", 2, `--http "C=ftp://x"`, "-q", "q", "--http", "C=ftp://x"),
		r("work", 2, `--http-timeout "x"`, "-q", "q", "--http-timeout", "x"),
		r("work", 2, `--serial "other"`, "-q", "q", "--serial", "other"),
		r("work", 2, `--log-level "loud"`, "-q", "q", "--log-level", "loud"),
		r("work", 2, `--log-format "xml"`, "-q", "q", "--log-format", "xml"),
		r("work", 2, `--metrics-addr "notaport"`, "-q", "q", "--exec", "*=true", "--metrics-addr", "notaport"),
		r("work", 2, `CA file "`+f["bad.yml"]+`" holds no PEM certificate`, "-q", "q", "--redis", "rediss://h:1", "--tls-ca-file", f["bad.yml"]),
		r("work", 2, `given without its key file`, "-q", "q", "--redis", "rediss://h:1", "--tls-cert-file", f["bad.yml"]),
		r("work", 2, `the database must be a number`, "-q", "q", "--redis", "redis://:"+badSecret+"@h:1/x"),
		// enqueue: JSON, times, durations, names
		r("enqueue", 2, `args are not valid JSON: "[1,"`, "--queue", "q", "--class", "C", "--args", "[1,"),
		r("enqueue", 2, `args are not valid JSON`, "--queue", "q", "--class", "C", "--args", `{"a":`),
		r("enqueue", 2, `args are not valid UTF-8 (bad byte 0xff at offset 2)`, "--queue", "q", "--class", "C", "--args", "[\"\xff\"]"),
		r("enqueue", 2, `--plain writes args as Ruby's Resque.enqueue does`, "--queue", "q", "--class", "C", "--plain", "--args", `{"a":1}`),
		r("enqueue", 2, `--at "yesterday"`, "--queue", "q", "--class", "C", "--at", "yesterday"),
		r("enqueue", 2, `--at "2026-13-01T00:00:00Z"`, "--queue", "q", "--class", "C", "--at", "2026-13-01T00:00:00Z"),
		r("enqueue", 2, `--in "5x"`, "--queue", "q", "--class", "C", "--in", "5x"),
		r("enqueue", 2, `--in "-5m"`, "--queue", "q", "--class", "C", "--in", "-5m"),
		r("enqueue", 2, `give --at or --in, not both`, "--queue", "q", "--class", "C", "--at", "1700000000", "--in", "5m"),
		r("enqueue", 2, `--deferrable-by "x"`, "--queue", "q", "--class", "C", "--unique-id", "u", "--deferrable-by", "x"),
		r("enqueue", 2, `--deferrable-by "-1"`, "--queue", "q", "--class", "C", "--unique-id", "u", "--deferrable-by", "-1"),
		r("enqueue", 2, `--deferrable-by needs --unique-id`, "--queue", "q", "--class", "C", "--deferrable-by", "5"),
		r("enqueue", 2, `--plain writes only class and args: it takes no --unique-id`, "--queue", "q", "--class", "C", "--plain", "--unique-id", "u"),
		r("enqueue", 2, `enqueue needs --class`, "--queue", "q"),
		r("enqueue", 2, `enqueue needs --queue`, "--class", "C"),
		r("enqueue", 2, `enqueue needs --queue and --class`),
		r("plan add", 2, `plan add needs --queue and --class`, "--every", "5m"),
		r("enqueue", 2, `queue name "a,b"`, "--queue", "a,b", "--class", "C"),
		r("enqueue", 2, `enqueue takes no arguments (got "extra")`, "--queue", "q", "--class", "C", "extra"),
		// stats
		r("stats", 2, `--every "x"`, "--watch", "--every", "x"),
		r("stats", 2, `--every "0": must be more than 0`, "--watch", "--every", "0"),
		r("stats", 2, `stats takes no arguments (got "extra")`, "extra"),
		// failed
		r("failed list", 2, `--offset and --limit must not be negative`, "--offset", "-1"),
		r("failed list", 2, `invalid value "x" for flag -limit`, "--limit", "x"),
		r("failed show", 2, `"abc" is not an entry index`, "abc"),
		r("failed show", 2, `show needs at least one INDEX`),
		r("failed retry", 2, `retry needs INDEX... or --all`),
		r("failed retry", 2, `"-1" is not an entry index`, "-1"),
		r("failed remove", 2, `remove needs INDEX... or --all`),
		r("failed remove", 2, `"1.5" is not an entry index`, "1.5"),
		r("failed clear", 2, `clear takes no index`, "0"),
		r("failed clear", 2, `clear deletes every failed entry (0 now): add --yes to confirm`),
		r("failed remove", 2, `remove --all deletes every failed entry matching --class "C": add --yes to confirm`, "--all", "--class", "C"),
		// queue
		r("queue size", 2, `size needs a QUEUE`),
		r("queue size", 2, `size takes one QUEUE, got 2 arguments`, "a", "b"),
		r("queue peek", 2, `invalid value "x" for flag -offset`, "--offset", "x", "q"),
		r("queue peek", 2, `--offset and --limit must not be negative`, "--limit", "-1", "q"),
		r("queue peek", 2, `peek takes one QUEUE, got 2 arguments`, "q", "--limit", "5", "r"),
		r("queue remove", 2, `remove needs --class`, "q"),
		r("queue remove", 2, `--args "["`, "--class", "C", "--args", "[", "q"),
		r("queue remove", 2, `remove needs a QUEUE`, "--class", "C"),
		r("queue clear", 2, `add --yes to confirm`, "q"),
		r("queue clear", 2, `clear needs a QUEUE`, "--yes"),
		r("queue list", 2, `list takes no argument`, "extra"),
		// unique
		r("unique show", 2, `show takes one UID`),
		r("unique clear", 2, `clear takes one UID`),
		r("unique clear", 2, `clear takes one UID`, "a", "b"),
		r("unique list", 2, `unique list takes no argument`, "extra"),
		// delayed: times, JSON, filters
		r("delayed list", 2, `--from "yesterday"`, "--from", "yesterday"),
		r("delayed list", 2, `--to "x"`, "--to", "x"),
		r("delayed list", 2, `the time range ends (2020-01-01T00:00:00Z) before it begins`, "--from", "2030-01-01T00:00:00Z", "--to", "2020-01-01T00:00:00Z"),
		r("delayed list", 2, `--args "[": not valid JSON`, "--args", "[", "--class", "C", "--queue", "q"),
		r("delayed list", 2, `--args needs --class`, "--args", "[1]"),
		r("delayed list", 2, `invalid value "x" for flag -limit`, "--limit", "x"),
		r("delayed count", 2, `--from "x"`, "--from", "x"),
		r("delayed show", 2, `TIME "notatime"`, "notatime"),
		r("delayed show", 2, `show needs one TIME`),
		r("delayed remove", 2, `remove needs a filter`),
		r("delayed clear", 2, `add --yes to confirm`),
		// plan: durations, periods, cron, zones, times, JSON
		r("plan add", 2, `--every "5x"`, "--queue", "q", "--class", "C", "--every", "5x"),
		r("plan add", 2, `--every "0.5s"`, "--queue", "q", "--class", "C", "--every", "0.5s"),
		r("plan add", 2, `period "P1H"`, "--queue", "q", "--class", "C", "--period", "P1H"),
		r("plan add", 2, `period "P0D" is zero`, "--queue", "q", "--class", "C", "--period", "P0D"),
		r("plan add", 2, `7000000 days is too large`, "--queue", "q", "--class", "C", "--period", "P1000000W"),
		r("plan add", 2, `cron "61 * * * *": end of range (61) above maximum (59)`, "--queue", "q", "--class", "C", "--cron", "61 * * * *"),
		r("plan add", 2, `the recurrence has no slot after`, "--queue", "q", "--class", "C", "--cron", "0 0 30 2 *"),
		r("plan add", 2, `use an every interval instead of @every`, "--queue", "q", "--class", "C", "--cron", "@every 5m"),
		r("plan add", 2, `time zone "Mars/Olympus"`, "--queue", "q", "--class", "C", "--cron", "0 3 * * *", "--timezone", "Mars/Olympus"),
		r("plan add", 2, `a time zone applies to a period or a cron line`, "--queue", "q", "--class", "C", "--every", "5m", "--timezone", "Europe/Prague"),
		r("plan add", 2, `--start "yesterday"`, "--queue", "q", "--class", "C", "--every", "5m", "--start", "yesterday"),
		r("plan add", 2, `misfire "maybe"`, "--queue", "q", "--class", "C", "--every", "5m", "--misfire", "maybe"),
		r("plan add", 2, `--args "[1,"`, "--queue", "q", "--class", "C", "--every", "5m", "--args", "[1,"),
		r("plan add", 2, `args are not valid UTF-8`, "--queue", "q", "--class", "C", "--every", "5m", "--args", "[\"\xff\"]"),
		r("plan add", 2, `queue name "a,b"`, "--queue", "a,b", "--class", "C", "--every", "5m"),
		r("plan add", 2, `plan add needs one of --every, --period or --cron`, "--queue", "q", "--class", "C"),
		r("plan add", 2, `period "P1000000Y": the first run would be in the year`, "--queue", "q", "--class", "C", "--period", "P1000000Y"),
		r("plan add", 2, `every 1000000h0m0s: the first run would be in the year`, "--queue", "q", "--class", "C", "--every", "1000000h"),
		r("plan add", 2, `start in the year 9999 is more than 100 years away`, "--queue", "q", "--class", "C", "--every", "5m", "--start", "9999-12-31T00:00:00Z"),
		r("plan add", 2, `start 1969-12-31T23:59:55Z is before 1970`, "--queue", "q", "--class", "C", "--every", "5m", "--start", "-5"),
		r("plan show", 2, `show needs a plan ID`),
		r("plan show", 2, `--next must not be negative`, "--next", "-1", "p"),
		r("plan show", 2, `invalid value "x" for flag -next`, "--next", "x", "p"),
		r("plan remove", 2, `remove needs a plan ID`),
		r("plan list", 2, `list takes no argument`, "extra"),
		// schedule files
		r("schedule show", 2, `show needs a schedule NAME`),
		r("schedule list", 2, `did not find expected node content`, "--schedule", f["bad.yml"]),
		r("schedule show", 2, `no such file or directory`, "--schedule", "/nonexistent.yml", "s"),
		r("scheduler", 2, `--lock-timeout "x"`, "--lock-timeout", "x"),
		r("scheduler", 2, `--schedule-interval must be positive`, "--schedule-interval", "0"),
		r("scheduler", 2, `open /nonexistent.yml: no such file or directory`, "--schedule", "/nonexistent.yml"),
		r("scheduler", 2, `did not find expected node content`, "--schedule", f["bad.yml"]),
		r("scheduler", 2, `cron "61 * * * *": end of range (61)`, "--schedule", f["cron.yml"]),
		r("scheduler", 2, `--metrics-addr "notaport"`, "--metrics-addr", "notaport"),
		r("scheduler", 2, `scheduler takes no arguments (got "extra")`, "extra"),
		// pool config files
		r("pool", 2, `no such file or directory`, "--config", "/nonexistent.yml"),
		r("pool", 2, `:1: invalid YAML: did not find expected node content`, "--config", f["bad.yml"]),
		r("pool", 2, `workers[0].queues: bad queue list "a,[b"`, "--config", f["bad-pool.yml"]),
		r("pool", 2, `redis: bad redis url "redis://:xxxxx@host:notaport"`, "--config", f["url-pool.yml"]),
		r("pool", 2, `--kill-timeout "x"`, "--config", f["ok-pool.yml"], "--kill-timeout", "x"),
		r("pool", 2, `--exec "nope"`, "--config", f["ok-pool.yml"], "--exec", "nope"),
		r("pool check", 2, `workers[1].concurrency: -1 is out of`, "--config", f["bad-pool.yml"]),
		r("pool check", 2, `redis.port: 99999 is out of range`, "--config", f["v3-pool.yml"]),
		r("pool check", 2, `handlers.*.http.url: "ftp://x"`, "--config", f["http-pool.yml"]),
		r("pool check", 2, `bad redis url "redis://:xxxxx@host:notaport"`, "--config", f["url-pool.yml"]),
		r("pool check", 2, `--redis: bad redis url`, "--config", f["ok-pool.yml"], "--redis", "redis://:"+badSecret+"@host:notaport"),
		r("pool check", 2, `flag needs an argument: -environment`, "--config", f["ok-pool.yml"], "--environment"),
		r("pool check", 2, `pool check takes no arguments (got "extra")`, "--config", f["ok-pool.yml"], "extra"),
		r("pool status", 2, `pool status takes no arguments (got "extra")`, "extra"),
		// mass: required flags
		r("mass weight", 2, `mass weight needs --source and --weight`),
		r("mass limit", 2, `mass limit needs --concurrency`, "--source", "s"),
		r("mass enqueue", 2, `mass enqueue needs --name and --class`, "--source", "s"),
		r("mass batch create", 2, `mass batch create needs --source`, "--name", "n"),
		r("mass pause", 2, `mass pause needs --source`),
		// commands without Redis
		badRow{words: "schedule validate", noRedis: true, code: 2, want: `validate needs a schedule FILE`},
		badRow{words: "schedule validate", noRedis: true, code: 2, want: `open /nonexistent.yml: no such file or directory`, args: []string{"/nonexistent.yml"}},
		badRow{words: "schedule validate", noRedis: true, code: 2, want: `yaml: line 1: did not find expected node content`, args: []string{"--json", f["bad.yml"]}},
		badRow{words: "schedule validate", noRedis: true, code: 2, want: `every: "5 minutes please" is not a duration`, args: []string{f["every.yml"]}},
		badRow{words: "schedule validate", noRedis: true, code: 2, want: `queue: missing`, args: []string{f["noqueue.yml"]}},
		badRow{words: "schedule validate", noRedis: true, code: 2, want: `aliases and merge keys expand to more than`, args: []string{f["merge.yml"]}},
		r("scheduler", 2, `aliases and merge keys expand to more than`, "--schedule", f["merge.yml"]),
		badRow{words: "bench", noRedis: true, code: 2, want: `invalid value "x" for flag -runs`, args: []string{"--runs", "x"}},
		badRow{words: "no-such-command", noRedis: true, code: 2, want: `no command "no-such-command"`},
	)
	return rows
}

// internalName finds a message that names an internal package.
var internalName = regexp.MustCompile(`(^|: )(protocol|rdb|redisproc|recovery|runtime): `)

// usageHint is the one line a usage error may add after the problem.
var usageHint = regexp.MustCompile(`^Run 'resque-go( [a-z-]+)* --help' for (usage|the commands)\.$`)

// Every command given malformed flags, JSON, times, durations, URLs or
// config files answers with one line naming the problem (plus, for a
// usage error, the hint to --help) and exit code 2; a connection Redis
// refuses exits 1 (work, scheduler and the one-shot commands; the pool
// manager keeps its children restarting and logs why), and so does a
// Redis that cannot be reached (the one-shot commands; the daemons wait
// for it). No output ever shows the password.
func TestBadInputTable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	ns := redistest.Namespace(t)
	rows := badInputTable(t, closed)
	t.Logf("%d rows", len(rows))

	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, row := range rows {
		argv := strings.Fields(row.words)
		if !row.noRedis {
			if !contains(row.args, "--redis") {
				argv = append(argv, "--redis", redisURL)
			}
			argv = append(argv, "--namespace", ns)
		}
		argv = append(argv, row.args...)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			code, out, errOut := runWithEnv(t, []string{"REDIS_URL=", "REDIS_BACKEND=", "QUEUE=", "QUEUES=", "RESQUE_POOL_CONFIG="}, argv...)
			lines := lines(errOut)
			ok := code == row.code && out == "" && (len(lines) == 1 || len(lines) == 2 && usageHint.MatchString(lines[1]))
			if ok && (!strings.HasPrefix(lines[0], "resque-go: ") || !strings.Contains(lines[0], row.want) || internalName.MatchString(lines[0])) {
				ok = false
			}
			if !ok {
				t.Errorf("resque-go %s: exit %d, stdout %q, stderr %q;\nwant exit %d and one line saying %q", strings.Join(argv, " "), code, out, errOut, row.code, row.want)
			}
			if strings.Contains(out+errOut, badSecret) || strings.Contains(out+errOut, "pa://") {
				t.Errorf("resque-go %s: the password shows: %q", strings.Join(argv, " "), out+errOut)
			}
		}()
	}
	wg.Wait()

	// bench only with --help: a real run starts its own servers.
	code, out, errOut := runWithEnv(t, nil, "bench", "--help")
	if code != 0 || !strings.Contains(out, "resque-go bench") || errOut != "" {
		t.Errorf("bench --help: exit %d, stderr %q", code, errOut)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
