package gateway

import (
	"encoding/json"
	"testing"
)

// P36: absent until set, kept by a clone, gone after a reset; the JSON
// shape is the documented one.
func TestIdentity_P36(t *testing.T) {
	ex, ctl := NewExchange(Inbound, Request{})
	if _, ok := ex.Identity(); ok || ctl.IdentityGen() != 0 {
		t.Fatal("an identity before any was set")
	}
	ex.SetIdentity(Identity{Subject: "alice", Scopes: []string{"read"}, Claims: json.RawMessage(`{"tier":"gold"}`)})
	g := ctl.IdentityGen()
	cp, _ := ctl.Clone()
	if id, ok := cp.Identity(); !ok || id.Subject != "alice" {
		t.Errorf("the clone lost the identity: %+v %v", id, ok)
	}
	ex.SetIdentity(Identity{Subject: "bob"})
	if ctl.IdentityGen() == g {
		t.Error("IdentityGen did not change on SetIdentity")
	}
	b, _ := json.Marshal(Identity{Subject: "alice", Scopes: []string{"read"}, Claims: json.RawMessage(`{"tier":"gold"}`)})
	if string(b) != `{"subject":"alice","scopes":["read"],"claims":{"tier":"gold"}}` {
		t.Errorf("JSON shape %s", b)
	}
	ctl.Reset(Inbound, Request{})
	if _, ok := ex.Identity(); ok {
		t.Error("the identity survived a reset into a new exchange")
	}
}

func TestIsFramingHeader(t *testing.T) {
	for _, n := range FramingHeaderNames() {
		if !IsFramingHeader(n) {
			t.Errorf("%s is not a framing header", n)
		}
	}
	for _, n := range []string{"content-length", "TE", "transfer-encoding"} {
		if !IsFramingHeader(n) {
			t.Errorf("%s (any case) is not a framing header", n)
		}
	}
	for _, n := range []string{"Content-Type", "Authorization", "Retry-After"} {
		if IsFramingHeader(n) {
			t.Errorf("%s is a framing header", n)
		}
	}
}
