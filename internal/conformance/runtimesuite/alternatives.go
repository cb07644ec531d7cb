package runtimesuite

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/internal/sse"
)

// The stream cases follow the frame shape and relay the runtime declares
// (choice points P19.frame and P19.relay): what stays a rule — which
// events are frames, their order, one last call — is checked the same for
// every alternative; only the bytes compared change.

// frameAs is what a plugin gets for the raw SSE block raw under the
// P19.frame alternative the case follows: the block itself, or its data
// lines joined by LF.
func frameAs(t *conformance.T, raw string) string {
	if t.Alternative("P19.frame") == "data-payload" {
		return sse.Parse([]byte(raw)).Data
	}
	return raw
}

// framesAs is frameAs over a list.
func framesAs(t *conformance.T, raws []string) []string {
	if raws == nil {
		return nil
	}
	out := make([]string, len(raws))
	for i, r := range raws {
		out[i] = frameAs(t, r)
	}
	return out
}

// relayed reports whether the client body got matches what the runtime
// owes of the upstream bytes want under the P19.relay alternative: every
// byte, or (re-framed) the same events' data in the same order.
func relayed(t *conformance.T, got []byte, want string) bool {
	if t.Alternative("P19.relay") == "reframed" {
		return slices.Equal(eventData(got), eventData([]byte(want)))
	}
	return string(got) == want
}

// eventData is the data of every dispatched event of an event stream,
// an unterminated final block included (a re-framing relay may complete
// it).
func eventData(b []byte) []string {
	var out []string
	var f sse.Framer
	emit := func(raw []byte, isFrame bool) error {
		if isFrame {
			out = append(out, sse.Parse(raw).Data)
		}
		return nil
	}
	_ = f.Feed(b, emit)
	_, _ = f.End(func(raw []byte, _ bool) error {
		if ev := sse.Parse(raw); ev.HasData {
			out = append(out, ev.Data)
		}
		return nil
	})
	return out
}

// repeatedNames is the build errors want owes under P1.names=repeated: no
// error for a repeated name, and an entry naming no plugin is an unknown
// plugin (P6).
func repeatedNames(want []string) []string {
	var out []string
	for _, w := range want {
		switch {
		case w == "P1()":
			out = append(out, "P6()")
		case strings.HasPrefix(w, "P1("):
		default:
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out
}

// denyBody reports whether the client body of a denial carries reason as
// the P15.deny-wire alternative the case follows has it: the reason as
// the whole text, or a JSON error body holding it.
func denyBody(t *conformance.T, body []byte, reason string) bool {
	if t.Alternative("P15.deny-wire") == "json" {
		return json.Valid(body) && strings.Contains(string(body), reason)
	}
	return strings.TrimSpace(string(body)) == reason
}
