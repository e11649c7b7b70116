# resque-go developer commands. `make test` is what CI runs.

GO ?= go

.PHONY: test deps demo build bench bench-web fuzz lint test-group-large

## test: vet, format check, the whole suite with the race detector (the
## chaos ledger's short version included), one pass of the claim/finish
## benchmarks so they keep compiling and running, and 3 s of every fuzz target
test: deps lint
	$(GO) test -race -count=1 -timeout 30m ./...
	$(GO) vet -tags otel ./internal/tracing/... ./internal/cli
	$(GO) test -race -count=1 -tags otel ./internal/tracing/... ./internal/cli
	$(GO) test -run '^$$' -bench 'ClaimFinish|NoopJobs/payload=ruby/slots=1$$' -benchtime 1x ./internal/bench ./internal/runtime
	$(MAKE) --no-print-directory fuzz-ci

## deps: the Go modules (all of them: the outside-module test builds from
## the module cache with the network off), redis-server and chromium (Debian
## packages, installed when missing; chromium drives the dashboard's browser
## test) and node-resque for the interop test (npm ci)
deps:
	@$(GO) mod download
	@command -v redis-server >/dev/null 2>&1 || { \
		echo "installing redis-server (apt-get)"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -q && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server; }
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
		echo "installing chromium (apt-get) for the dashboard's browser test"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -q && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }
	@if [ ! -d test/interop/node/node_modules/node-resque ]; then \
		if command -v npm >/dev/null 2>&1; then (cd test/interop/node && npm ci --no-audit --no-fund --loglevel=error); \
		else echo "npm not found: the node-resque interop test will be skipped"; fi; fi

## test-group-large: a group of 100,000 jobs with retries and workers killed
## with -9 fires its callback once with the right counts (the suite runs 300)
test-group-large: deps
	RESQUE_GO_E2E_RACE=0 RESQUE_GO_E2E_GROUP_JOBS=100000 $(GO) test -count=1 -timeout 120m -run 'TestGroupCallbackFiresOnceUnderKills' ./test/e2e

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## demo: run a worker over sample jobs on an embedded Redis
demo:
	$(GO) run . demo

## build: a static binary (no cgo: libc is not mapped, about 1.4 MB less
## RSS per process, and the binary runs on any Linux of its architecture),
## without urfave/cli's man-page and markdown writers, which resque-go does
## not use (0.4 MB less binary, 0.5 MB less RSS per process)
build:
	CGO_ENABLED=0 $(GO) build -tags urfave_cli_no_docs -o bin/resque-go .

## build-otel: the same binary with the OpenTelemetry SDK and its OTLP/HTTP
## and console exporters (docs/tracing.md): tracing job attempts from the
## OTEL_* environment costs each process about 4 MB more resident memory
## at start, traced or not, so the default build leaves them out
.PHONY: build-otel
build-otel:
	CGO_ENABLED=0 $(GO) build -tags urfave_cli_no_docs,otel -o bin/resque-go .

## bench: the Go benchmarks (throughput, idle pickup, claim/finish), then
## `resque-go bench`: Redis CPU, commands and round trips per job against a
## minimal Resque loop, idle cost, pickup latency (starts its own redis-server).
## Quick run: make bench BENCH_FLAGS='--jobs 20000 --runs 1 --idle 3s'
BENCH_FLAGS ?=
bench:
	$(GO) test -run '^$$' -bench . -benchtime 20000x ./worker ./internal/runtime ./internal/bench
	$(GO) run . bench $(BENCH_FLAGS)

## bench-web: the dashboard over 1,000,000 failed entries, 1,000 queues and
## 100,000 delayed due times: p50/p95 page times, Redis commands per page,
## search times, the Redis load of 1 and 50 live tabs (about 600 MB of Redis)
bench-web:
	$(GO) test -v -run '^$$' -bench Dashboard -benchtime 1x -timeout 60m ./web

## fuzz: every fuzz target (package:target) for FUZZTIME (30 s) each: the
## payload decoder, encoder and unique field, the worker-id parser, ISO 8601
## periods, cron and period recurrences, resque-scheduler durations,
## entries and files, the pool config parser, the Redis URL parser and its
## secret redaction. A crasher is written to the package's testdata/fuzz,
## where `go test` runs it from then on: commit it with the fix.
FUZZTIME ?= 30s
FUZZ_TARGETS = \
	./internal/protocol:FuzzDecodePayload ./internal/protocol:FuzzNewPayload \
	./internal/protocol:FuzzParseUnique ./internal/protocol:FuzzParseWorkerID \
	./internal/protocol:FuzzParsePeriod ./plan:FuzzCron ./plan:FuzzPeriodic \
	./schedule:FuzzParseDuration ./schedule:FuzzScheduleEntry ./schedule:FuzzScheduleFile \
	./pool:FuzzParseConfig ./internal/rdb:FuzzRedisURL ./internal/rdb:FuzzRedisURLSecret
## Go 1.26's fuzz coordinator can end a run that found nothing with a bare
## "context deadline exceeded" at the -fuzztime boundary (go.dev/issue/75804,
## fixed in Go 1.27): that alone is reported and passed; a crasher is not.
fuzz:
	@log=$$(mktemp); trap 'rm -f $$log' EXIT; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "$(GO) test -run '^$$' -fuzz '^$$name\$$' -fuzztime $(FUZZTIME) $$pkg"; \
		if $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg >$$log 2>&1; then \
			grep -v '^fuzz: elapsed' $$log; \
		elif grep -q '^    context deadline exceeded$$' $$log && ! grep -q -e 'Failing input' -e 'hung or terminated' -e '^panic' $$log; then \
			grep -v '^fuzz: elapsed' $$log; echo "(go.dev/issue/75804 at the fuzztime boundary, no failing input: passed)"; \
		else \
			grep -v '^fuzz: elapsed' $$log; exit 1; \
		fi; \
	done

## fuzz-ci: every fuzz target for 3 s (what CI runs)
.PHONY: fuzz-ci
fuzz-ci:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=3s

## chaos: the chaos ledger at full size (test/chaos, build tag chaos): a pool,
## schedulers, plans, unique and serial jobs, a static and a batch mass pool through a proxy; kill -9s of
## workers, schedulers and the pool manager, redis-server restarts on its
## append-only file, connections cut and black-holed; then every job is
## accounted for and the ledger printed. About 11 minutes at the default size.
## Smaller: make chaos CHAOS_JOBS=5000 CHAOS_DURATION=3m
## Connection faults spaced as in the short run: CHAOS_CONN_GAP=10s CHAOS_MAX_BLACKHOLE=3s
## Mass jobs that retry and fail left out: CHAOS_MASS_RETRY=0
## Keep the logs of a failed run: CHAOS_KEEP=1
CHAOS_JOBS ?= 20000
CHAOS_DURATION ?= 10m
.PHONY: chaos
chaos: deps
	CHAOS_JOBS=$(CHAOS_JOBS) CHAOS_DURATION=$(CHAOS_DURATION) $(GO) test -tags chaos -count=1 -timeout 90m -v -run '^TestChaosLedgerFull$$' ./test/chaos
