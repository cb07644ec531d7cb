package runtimekit

import (
	"net/http"

	abkitv1 "github.com/abkit/abkit/proto/abkit/v1"
)

// The protocol's messages (proto/abkit/v1/runtime.proto), under the kit's
// names so that an adapter imports the kit alone. They are aliases: the
// generated types themselves, with their Get methods.
type (
	// ProbeSpec declares a probe: name, capabilities, behaviours, config
	// schema (P); manifest (D); hook spec (H).
	ProbeSpec = abkitv1.ProbeSpec
	// ProbeCall is one hook call on a probe, with what the hook observed.
	ProbeCall = abkitv1.ProbeCall
	// ProbeReply scripts what the hook does (see [Reply]).
	ProbeReply = abkitv1.ProbeReply
	// PipelineEntry is one chain entry: plugin, config, on_error.
	PipelineEntry = abkitv1.PipelineEntry
	// ExchangeSpec is one scripted exchange: request, upstream, client.
	ExchangeSpec = abkitv1.ExchangeSpec
	// HTTPRequest is the client's request.
	HTTPRequest = abkitv1.HTTPRequest
	// UpstreamSpec is the upstream's script (see [NewUpstream]).
	UpstreamSpec = abkitv1.UpstreamSpec
	// PipelineRun is a family P result.
	PipelineRun = abkitv1.PipelineRun
	// ExchangeRun is one exchange's result.
	ExchangeRun = abkitv1.ExchangeRun
	// OutcomeMsg is an exchange's outcome (see [Outcome]).
	OutcomeMsg = abkitv1.Outcome
	// BuildErrorMsg is one build error (see [BuildError]).
	BuildErrorMsg = abkitv1.BuildError
	// WarningMsg is one runtime warning (see [Warning]).
	WarningMsg = abkitv1.RuntimeWarning
	// InterceptRun and InterceptResult are family D results.
	InterceptRun    = abkitv1.InterceptRun
	InterceptResult = abkitv1.InterceptResult
	// ExtensionFailure is an extension's failure or a dispatcher warning.
	ExtensionFailure = abkitv1.ExtensionFailure
	// HookRun and HookFailure are family H results.
	HookRun     = abkitv1.HookRun
	HookFailure = abkitv1.HookFailure
)

// Header converts the protocol's headers (a request's, an upstream's).
func Header(h []*abkitv1.Header) http.Header { return abkitv1.HeaderFromProto(h) }

// ProtoHeader converts headers to the protocol's (a request's as a hook
// sees it, the upstream request's in an [ExchangeRun]).
func ProtoHeader(h http.Header) []*abkitv1.Header { return abkitv1.HeaderToProto(h) }
