package runtimesuite

import (
	"bytes"
	"encoding/json"

	"github.com/abkit/abkit/internal/conformance"
	"github.com/abkit/abkit/sdk/intercept"
)

// samePayload reports whether a and b are the same payload of point in
// value: both decode strictly as the point's DTO, meet its rules, and
// re-encode to the same bytes. A re-encoding that loses what the rules
// require (an empty messages array written as {}) is not the same.
func samePayload(point, a, b string) bool {
	canon := func(s string) []byte {
		v, err := intercept.DecodeStrict(intercept.Point(point), []byte(s))
		if err != nil {
			return nil
		}
		out, _ := json.Marshal(v)
		return out
	}
	ca, cb := canon(a), canon(b)
	return ca != nil && bytes.Equal(ca, cb)
}

// seesHost checks that an extension (what) saw the host's payload host
// when it saw seen, under the D11.codec alternative the case follows: the
// host's exact bytes, or its value re-encoded. A re-encoding where the
// exact bytes are owed is a difference from abkit's choice; anything not
// equal in value breaks rule.
func seesHost(t *conformance.T, rule, point, host, seen, what string) {
	if t.Alternative("D11.codec") == "exact-bytes" && seen == host {
		return
	}
	if !samePayload(point, host, seen) {
		t.Errorf(rule, "%s: %s saw %q; want the host payload %q unchanged", point, what, seen, host)
		return
	}
	if t.Alternative("D11.codec") == "exact-bytes" {
		t.ChoiceErrorf("D11.codec", "D11", "%s: %s saw %q, the host payload re-encoded; want the host's own bytes %q", point, what, seen, host)
	}
}
