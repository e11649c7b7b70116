# resque-go developer commands. `make test` is what CI runs.

GO ?= go

.PHONY: test deps demo build bench fuzz lint

## test: vet, format check, the whole suite with the race detector, and one
## pass of the claim/finish benchmarks so they keep compiling and running
test: deps lint
	$(GO) test -race -count=1 ./...
	$(GO) test -run '^$$' -bench 'ClaimFinish|NoopJobs/payload=ruby/slots=1$$' -benchtime 1x ./internal/bench ./internal/runtime

## deps: what the tests need beyond Go: redis-server (Debian package, installed
## when missing and we are root) and node-resque for the interop test (npm ci)
deps:
	@command -v redis-server >/dev/null 2>&1 || { \
		echo "installing redis-server (apt-get)"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -q && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server; }
	@if [ ! -d test/interop/node/node_modules/node-resque ]; then \
		if command -v npm >/dev/null 2>&1; then (cd test/interop/node && npm ci --no-audit --no-fund --loglevel=error); \
		else echo "npm not found: the node-resque interop test will be skipped"; fi; fi

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## demo: run a worker over sample jobs on an embedded Redis
demo:
	$(GO) run . demo

build:
	$(GO) build -o bin/resque-go .

## bench: the Go benchmarks (throughput, idle pickup, claim/finish), then
## `resque-go bench`: Redis CPU, commands and round trips per job against a
## minimal Resque loop, idle cost, pickup latency (starts its own redis-server).
## Quick run: make bench BENCH_FLAGS='--jobs 20000 --runs 1 --idle 3s'
BENCH_FLAGS ?=
bench:
	$(GO) test -run '^$$' -bench . -benchtime 20000x ./worker ./internal/runtime ./internal/bench
	$(GO) run . bench $(BENCH_FLAGS)

## fuzz: the payload decoder and worker-id parser, 30 s each
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecodePayload -fuzztime 30s ./internal/protocol
	$(GO) test -run '^$$' -fuzz FuzzParseWorkerID -fuzztime 30s ./internal/protocol
