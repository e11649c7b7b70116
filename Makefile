# resque-go developer commands. `make test` is what CI runs.

GO ?= go

.PHONY: test demo build bench fuzz lint

## test: vet, format check, and the whole suite with the race detector
## (needs redis-server on PATH; node and npm for the node-resque interop test)
test: lint
	$(GO) test -race -count=1 ./...

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## demo: run a worker over sample jobs on an embedded Redis
demo:
	$(GO) run . demo

build:
	$(GO) build -o bin/resque-go .

## bench: throughput and idle pickup latency against a local redis-server
bench:
	$(GO) test -run '^$$' -bench . -benchtime 20000x ./worker

## fuzz: the payload decoder and worker-id parser, 30 s each
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecodePayload -fuzztime 30s ./internal/protocol
	$(GO) test -run '^$$' -fuzz FuzzParseWorkerID -fuzztime 30s ./internal/protocol
