# abkit: build, test, bench, lint, proto, run.
GO ?= go
BENCHTIME ?= 1s

.PHONY: all build test bench lint proto run fmt

all: build test

build:
	$(GO) build ./...

test:
	$(GO) vet ./...
	$(GO) test -race ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

proto:
	@echo "proto: the protocol has not landed yet (issue 4)"

run:
	$(GO) run ./cmd/abctl
