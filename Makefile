# abkit: build, test, bench, lint, proto, run, release.
GO ?= go
BENCHTIME ?= 1s
# Extra flags for go test, e.g. TESTFLAGS='-run TestSelftest -v'.
TESTFLAGS ?=
# The binaries integration tests run as real processes, built once per test
# run: internal/testbin's Packages is the one list (read only by the targets
# that use it).
TESTBIN_PKGS = $(shell $(GO) run ./internal/testbin/list)
GORELEASER ?= github.com/goreleaser/goreleaser/v2@v2.15.1

.PHONY: all build test test-stress test-hostile bench bench-live bench-peers lint proto proto-python proto-typescript run fmt replay release-snapshot clean mutate

all: build test

# build leaves abctl, conformance, abkit-runtime, every example plugin and
# the example runtime adapters in bin/. Version and commit come from the module and VCS stamps Go writes
# into every binary built inside the repository (-buildvcs=auto: some Go
# environments set GOFLAGS=-buildvcs=false).
build:
	$(GO) build -buildvcs=auto -o bin/ ./cmd/... ./examples/plugins/... ./examples/runtimes/...

test:
	$(GO) vet ./...
	@bin=$$(mktemp -d) && trap 'rm -rf "$$bin"' EXIT && \
	$(GO) build -o "$$bin/" $(TESTBIN_PKGS) && \
	ABKIT_TEST_BIN="$$bin" $(GO) test -race $(TESTFLAGS) ./...

# test-stress runs the whole suite twice with two CPU-burning processes
# beside it, as on a busy CI machine or laptop (docs/testing.md).
test-stress:
	@bash scripts/stress.sh $(MAKE) test TESTFLAGS='-count=2 $(TESTFLAGS)'

# test-hostile runs the hostile-client and hostile-upstream probes against
# a real abctl serve (idle connections, slow bodies, stalled event
# subscribers, a 1 GiB body, an endless SSE line, a broken upstream) and
# prints a table: probe, bound, measured (docs/limits.md, docs/perf.md).
# Long, so not part of make test, which runs the same probes small
# (TestHostileServeProbesShort); the bounds have fast tests there too.
test-hostile:
	@bin=$$(mktemp -d) && trap 'rm -rf "$$bin"' EXIT && \
	$(GO) build -o "$$bin/" $(TESTBIN_PKGS) && \
	ABKIT_TEST_BIN="$$bin" ABKIT_HOSTILE=1 $(GO) test -count=1 -timeout 30m -run 'TestHostileServeProbes' -v ./internal/cli/

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

# bench-live runs abctl serve (one plugin; inference-parser + guardrail),
# abctl record and a bare Go httputil.ReverseProxy side by side, each in
# its own process on 127.0.0.1 in front of one upstream, loads them in
# turn with SSE and JSON exchanges and prints requests/s, CPU per exchange
# and latency with the ratios to the bare proxy (docs/perf.md). Bounded:
# BENCH_LIVE_ROUNDS × 2 kinds × 4 proxies × BENCH_LIVE_DURATION of load.
BENCH_LIVE_ROUNDS ?= 3
BENCH_LIVE_DURATION ?= 2s
bench-live:
	@bin=$$(mktemp -d) && trap 'rm -rf "$$bin"' EXIT && \
	$(GO) build -o "$$bin/" ./cmd/abctl ./internal/benchlive && \
	"$$bin/benchlive" -abctl "$$bin/abctl" -rounds $(BENCH_LIVE_ROUNDS) -duration $(BENCH_LIVE_DURATION)

# bench-peers compares abkit's SSE parsing with other Go SSE parsers
# (bench/, a module of its own so that they never enter abkit's
# dependencies; docs/perf.md).
bench-peers:
	cd bench && $(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) .

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
	@if command -v grpc_python_plugin >/dev/null; then $(MAKE) proto-python; else echo "proto: grpc_python_plugin not found, sdk/python stubs not regenerated (apt-get install protobuf-compiler-grpc; TestPythonStubsCurrent checks them)"; fi
	@if [ -x sdk/typescript/node_modules/.bin/proto-loader-gen-types ]; then $(MAKE) proto-typescript; else echo "proto: sdk/typescript types not regenerated: run npm ci in sdk/typescript, then make proto-typescript (TestTypeScriptTypesCurrent checks them)"; fi

# The Python SDK's stubs (sdk/python/abkit/v1) of the plugin protocol (abkit.proto;
# runtime.proto is the conformance runtime's, not a plugin's),
# with Debian's protoc and grpc_python_plugin (protobuf-compiler-grpc); the
# output is committed and TestPythonStubsCurrent (internal/polyglot) checks it.
proto-python:
	@command -v grpc_python_plugin >/dev/null || { echo "proto-python: grpc_python_plugin not found; install it (Debian: apt-get install protobuf-compiler-grpc)"; exit 1; }
	protoc -I proto --plugin=protoc-gen-grpc_python=$$(command -v grpc_python_plugin) \
		--python_out=sdk/python --grpc_python_out=sdk/python proto/abkit/v1/abkit.proto

# The TypeScript SDK's types (sdk/typescript/src/gen) of the plugin protocol
# and the JSON descriptor it loads at run time (src/gen/abkit.json),
# with proto-loader-gen-types from the SDK's own dependencies (npm ci in
# sdk/typescript first); committed, checked by TestTypeScriptTypesCurrent.
proto-typescript:
	@test -x sdk/typescript/node_modules/.bin/proto-loader-gen-types || { echo "proto-typescript: run npm ci in sdk/typescript first (needs nodejs and npm)"; exit 1; }
	rm -rf sdk/typescript/src/gen
	cd sdk/typescript && node_modules/.bin/proto-loader-gen-types --keepCase --longs=String --enums=String --defaults \
		--grpcLib=@grpc/grpc-js -I ../../proto --outDir=src/gen abkit/v1/abkit.proto && \
		node scripts/proto-json.js ../../proto/abkit/v1/abkit.proto src/gen/abkit.json

replay:
	$(GO) run ./cmd/abctl replay --rechunk fixtures/*/

run:
	$(GO) run ./cmd/abctl

# release-snapshot builds the release archives of .goreleaser.yaml into
# dist/ without publishing anything. goreleaser is built from the module
# proxy into a temporary directory (a few minutes the first time).
release-snapshot:
	bin=$$(mktemp -d) && trap 'rm -rf "$$bin"' EXIT && \
	GOBIN=$$bin $(GO) install $(GORELEASER) && \
	$$bin/goreleaser release --snapshot --clean

clean:
	rm -rf bin/ dist/

# Mutation testing of both conformance suites (docs/mutation.md): a fixed
# sample of MUTATE_SAMPLE mutants per suite, built and judged in parallel.
MUTATE_SAMPLE ?= 100
mutate:
	$(GO) run ./cmd/conformance mutate --sample $(MUTATE_SAMPLE) --record internal/conformance/mutation/killrates.json
