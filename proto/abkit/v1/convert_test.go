package abkitv1

import (
	"net/http"
	"testing"

	"github.com/abkit/abkit/sdk/gateway"
)

func TestHeaderDeltaRoundTrip(t *testing.T) {
	before := http.Header{"A": {"1"}, "B": {"2", "3"}, "C": {"4"}}
	after := http.Header{"A": {"1"}, "B": {"2", "x"}, "D": {"5"}}
	for name, d := range map[string]*HeaderDelta{"map": HeaderDeltaOf(before, after), "wire": HeaderDeltaFrom(HeaderToProto(before), after)} {
		got := before.Clone()
		d.Apply(got)
		if len(got) != len(after) || got.Get("D") != "5" || got.Values("B")[1] != "x" || got.Get("C") != "" {
			t.Errorf("%s: applied delta gives %v, want %v", name, got, after)
		}
		if len(d.GetSet()) != 2 || len(d.GetDeleted()) != 1 {
			t.Errorf("%s: delta %v: want B and D set, C deleted", name, d)
		}
	}
	if d := HeaderDeltaFrom(HeaderToProto(before), before.Clone()); d != nil {
		t.Errorf("unchanged header gave delta %v", d)
	}
	wire := HeaderToProto(before)
	if n := testing.AllocsPerRun(100, func() { HeaderDeltaFrom(wire, before) }); n != 0 {
		t.Errorf("unchanged header: %v allocations, want 0", n)
	}
}

func TestActionRejectionRoundTrip(t *testing.T) {
	a := gateway.RejectWith(401, "no", gateway.Rejection{Header: http.Header{"Www-Authenticate": {`Bearer realm="r"`}}, Body: []byte{}, ContentType: "application/json"})
	got := ActionToProto(a).Gateway()
	if got.Status != 401 || got.Reason != "no" || got.Rejection == nil || got.Rejection.Body == nil || len(got.Rejection.Body) != 0 ||
		got.Rejection.ContentType != "application/json" || got.Rejection.Header.Get("Www-Authenticate") != `Bearer realm="r"` {
		t.Errorf("round trip of %+v gave %+v", a, got)
	}
	if r := ActionToProto(gateway.Reject(403, "x")).Gateway(); r.Rejection != nil {
		t.Errorf("a plain rejection came back with %+v", r.Rejection)
	}
	if c := ActionToProto(gateway.Continue()).Gateway(); !c.IsContinue() || c.Rejection != nil {
		t.Errorf("continue came back as %+v", c)
	}
}
