// Package hooks holds the contract types of the hook bus (family H of the
// abkit contracts): what a proxy hook author implements, and the values that
// cross the process boundary, as JSON, between a proxy and a hook binary.
//
// A proxy runs three kinds of hooks:
//
//   - submit hooks ([SubmitHook]) see each request before routing; they may
//     change it in place, or reject it with [Reject] (H4);
//   - part hooks ([PartHook]) see each request part ([KindRequestPart]) or
//     response event ([KindResponsePart]) and return the part to pass on;
//   - tool reactors ([ToolReactor]) see each tool lifecycle event and answer
//     with a [ToolDecision]: pass, rewrite, replace or swallow (H5).
//
// Every hook declares a [Spec]: its ID, its order ([H1]), its error policy
// (H2, H3) and its kind. The bus orders hooks by Order ascending, then ID,
// then registration order.
//
// A submit hook that tags every request and rejects one model:
//
//	h := hooks.NewSubmitHook(hooks.Spec{ID: "tagger", Order: 10, Policy: hooks.PolicyFailOpen},
//		func(ctx context.Context, s *hooks.Submit) error {
//			if s.Model == "forbidden-model" {
//				return hooks.Reject("model not allowed here")
//			}
//			s.SetMetadata("tagged-by", "tagger")
//			return nil
//		})
//
// [H1]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package hooks

import (
	"context"
	"errors"
	"fmt"
)

// Policy is what the bus does when a hook fails: it returns an error, panics,
// or (for tool reactors) answers with an invalid decision.
type Policy string

const (
	// PolicyUnspecified is the zero value. The bus treats it as
	// [PolicyFailClosed] for submit and part hooks (H3); for tool reactors
	// the bus-level tool policy decides (H6).
	PolicyUnspecified Policy = ""
	// PolicyFailOpen records the error and goes on with the value as it was
	// before the failing hook (H2).
	PolicyFailOpen Policy = "fail-open"
	// PolicyFailClosed stops the chain and returns the error (H3).
	PolicyFailClosed Policy = "fail-closed"
	// PolicySwallow is valid only as the bus-level tool policy: a failing
	// reactor drops the tool event (H6).
	PolicySwallow Policy = "swallow"
)

// CheckHook reports whether p is a valid policy for a single hook's Spec:
// unspecified, fail-open or fail-closed.
func (p Policy) CheckHook() error {
	switch p {
	case PolicyUnspecified, PolicyFailOpen, PolicyFailClosed:
		return nil
	case PolicySwallow:
		return fmt.Errorf("policy %q is a bus-level tool policy (H6); a hook declares %q, %q or leaves it empty", p, PolicyFailOpen, PolicyFailClosed)
	}
	return fmt.Errorf("unknown policy %q; want %q, %q or empty (fail-closed)", string(p), PolicyFailOpen, PolicyFailClosed)
}

// CheckTool reports whether p is a valid bus-level tool policy:
// unspecified (fail-open), fail-open, fail-closed or swallow (H6).
func (p Policy) CheckTool() error {
	switch p {
	case PolicyUnspecified, PolicyFailOpen, PolicyFailClosed, PolicySwallow:
		return nil
	}
	return fmt.Errorf("unknown tool policy %q; want %q, %q, %q or empty (fail-open)", string(p), PolicyFailOpen, PolicyFailClosed, PolicySwallow)
}

// Kind is the kind of hook: which values it sees.
type Kind string

const (
	KindSubmit       Kind = "submit"
	KindRequestPart  Kind = "request_part"
	KindResponsePart Kind = "response_part"
	KindTool         Kind = "tool"
)

// Check reports whether k is a known kind.
func (k Kind) Check() error {
	switch k {
	case KindSubmit, KindRequestPart, KindResponsePart, KindTool:
		return nil
	}
	return fmt.Errorf("unknown hook kind %q; want %q, %q, %q or %q", string(k), KindSubmit, KindRequestPart, KindResponsePart, KindTool)
}

// Spec is what a hook declares about itself; a hook binary declares one per
// hook it serves. The bus reads it once, when it is built.
type Spec struct {
	// ID names the hook in errors, results and traces. It is the second
	// ordering key (H1); IDs need not be unique.
	ID string `json:"id"`
	// Order is the first ordering key, ascending (H1).
	Order int `json:"order"`
	// Policy is the hook's error policy (H2, H3).
	Policy Policy `json:"policy,omitempty"`
	Kind   Kind   `json:"kind"`
}

// Validate reports whether s is well formed: a non-empty ID, a known kind
// and a policy a hook may declare.
func (s Spec) Validate() error {
	var errs []error
	if s.ID == "" {
		errs = append(errs, errors.New("id is empty; give the hook a stable ID, it names the hook in errors and traces"))
	}
	if err := s.Kind.Check(); err != nil {
		errs = append(errs, err)
	}
	if err := s.Policy.CheckHook(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// SubmitHook runs on each request before routing.
//
// OnSubmit may change s in place. Returning nil continues the chain;
// returning [Reject] stops it with a rejection (H4); any other error is a
// failure handled by the hook's policy (H2, H3). Under fail-open the bus
// hands the hook a copy, so a change made before an error is dropped.
type SubmitHook interface {
	Spec() Spec
	OnSubmit(ctx context.Context, s *Submit) error
}

// PartHook runs on each request part or response event, depending on its
// Spec's Kind. It returns the part to pass on; an error is a failure handled
// by the hook's policy. The part's bytes belong to the hook during the call;
// the bus gives it a copy whenever the hook's change could have to be undone.
type PartHook interface {
	Spec() Spec
	OnPart(ctx context.Context, p Part) (Part, error)
}

// ToolReactor runs on each tool lifecycle event and answers with a decision
// (H5). The event is the reactor's own copy. An error is a failure handled by
// the bus-level tool policy (H6).
type ToolReactor interface {
	Spec() Spec
	OnTool(ctx context.Context, ev ToolEvent) (ToolDecision, error)
}

// SubmitFunc is the function form of [SubmitHook.OnSubmit].
type SubmitFunc func(ctx context.Context, s *Submit) error

// PartFunc is the function form of [PartHook.OnPart].
type PartFunc func(ctx context.Context, p Part) (Part, error)

// ToolFunc is the function form of [ToolReactor.OnTool].
type ToolFunc func(ctx context.Context, ev ToolEvent) (ToolDecision, error)

// NewSubmitHook returns a SubmitHook with the given spec that calls fn. An
// empty spec Kind is set to [KindSubmit].
func NewSubmitHook(spec Spec, fn SubmitFunc) SubmitHook {
	if spec.Kind == "" {
		spec.Kind = KindSubmit
	}
	return submitFunc{spec, fn}
}

// NewPartHook returns a PartHook with the given spec that calls fn. The
// spec's Kind must say which parts it sees: [KindRequestPart] or
// [KindResponsePart].
func NewPartHook(spec Spec, fn PartFunc) PartHook { return partFunc{spec, fn} }

// NewToolReactor returns a ToolReactor with the given spec that calls fn. An
// empty spec Kind is set to [KindTool].
func NewToolReactor(spec Spec, fn ToolFunc) ToolReactor {
	if spec.Kind == "" {
		spec.Kind = KindTool
	}
	return toolFunc{spec, fn}
}

type submitFunc struct {
	spec Spec
	fn   SubmitFunc
}

func (h submitFunc) Spec() Spec                                    { return h.spec }
func (h submitFunc) OnSubmit(ctx context.Context, s *Submit) error { return h.fn(ctx, s) }

type partFunc struct {
	spec Spec
	fn   PartFunc
}

func (h partFunc) Spec() Spec                                       { return h.spec }
func (h partFunc) OnPart(ctx context.Context, p Part) (Part, error) { return h.fn(ctx, p) }

type toolFunc struct {
	spec Spec
	fn   ToolFunc
}

func (h toolFunc) Spec() Spec { return h.spec }
func (h toolFunc) OnTool(ctx context.Context, ev ToolEvent) (ToolDecision, error) {
	return h.fn(ctx, ev)
}

// RejectError is a submit rejection (H4). Hook authors return it through
// [Reject]; the bus fills in Hook and returns it to the caller unwrapped, so
// a rejection is never mistaken for a hook failure.
type RejectError struct {
	// Hook is the ID of the rejecting hook, set by the bus.
	Hook string `json:"hook,omitempty"`
	// Reason is the hook's explanation, meant for the client.
	Reason string `json:"reason"`
}

func (e *RejectError) Error() string {
	if e.Hook == "" {
		return "submit rejected: " + e.Reason
	}
	return fmt.Sprintf("submit rejected by hook %q: %s", e.Hook, e.Reason)
}

// Reject returns the error a submit hook returns to reject the request with
// reason (H4).
func Reject(reason string) error { return &RejectError{Reason: reason} }

// IsReject reports whether err is or wraps a [RejectError], and its reason.
func IsReject(err error) (reason string, ok bool) {
	var re *RejectError
	if errors.As(err, &re) {
		return re.Reason, true
	}
	return "", false
}
