# abkit: build, test, bench, lint, proto, run.
GO ?= go
BENCHTIME ?= 1s

.PHONY: all build test bench lint proto run fmt replay

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
	@command -v protoc >/dev/null || { echo "proto: protoc not found; install it (Debian: apt-get install protobuf-compiler)"; exit 1; }
	bin=$$(mktemp -d) && trap 'rm -rf "$$bin"' EXIT && \
	GOBIN=$$bin $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12 && \
	GOBIN=$$bin $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.1 && \
	protoc --plugin=protoc-gen-go=$$bin/protoc-gen-go --plugin=protoc-gen-go-grpc=$$bin/protoc-gen-go-grpc \
		--go_out=. --go_opt=module=github.com/abkit/abkit \
		--go-grpc_out=. --go-grpc_opt=module=github.com/abkit/abkit \
		proto/abkit/v1/*.proto

replay:
	$(GO) run ./cmd/abctl replay --rechunk fixtures/*/

run:
	$(GO) run ./cmd/abctl
