package abkitv1

import (
	"net/http"
	"testing"
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
