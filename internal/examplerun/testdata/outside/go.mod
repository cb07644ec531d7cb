// An example module outside abkit's: it builds copies of the
// inference-parser and guardrail examples, and of the minipipe runtime with
// its adapter, against the public SDK only.
// outside_test.go (in internal/examplerun) copies this module and the
// examples' current sources (with the files they embed) to a temporary directory, so
// the copy never drifts, and runs `conformance run --plugin` on the
// binaries (`--runtime` on minipipe-runtime). The replace points at this
// checkout.
module example.com/outside

go 1.26.7

require github.com/abkit/abkit v0.0.0

require (
	github.com/fatih/color v1.13.0 // indirect
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/hashicorp/go-hclog v1.6.3 // indirect
	github.com/hashicorp/go-plugin v1.8.0 // indirect
	github.com/hashicorp/yamux v0.1.2 // indirect
	github.com/mattn/go-colorable v0.1.12 // indirect
	github.com/mattn/go-isatty v0.0.17 // indirect
	github.com/oklog/run v1.1.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/grpc v1.85.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/abkit/abkit => ../../../..
