package gateway_test

import (
	"encoding/json"
	"testing"

	"github.com/abkit/abkit/sdk/gateway"
)

// TestExtensionChanges: the host learns each key a call set or deleted,
// once, with the value it held before, and can put that value back.
func TestExtensionChanges(t *testing.T) {
	ex, ctl := gateway.NewExchange(gateway.Inbound, gateway.Request{Method: "GET", URL: "/"})
	ex.SetExtension("a", 1)
	if chs := ctl.TakeExtensionChanges(); len(chs) != 1 || chs[0].Key != "a" || chs[0].HadPrev {
		t.Fatalf("changes = %+v", chs)
	}
	ex.SetExtension("a", 2)
	ex.SetExtension("a", 3)
	ex.DeleteExtension("missing")
	chs := ctl.TakeExtensionChanges()
	if len(chs) != 1 || chs[0].Prev != 1 || !chs[0].HadPrev {
		t.Fatalf("changes = %+v, want a once with its value from before the call", chs)
	}
	ctl.RestoreExtension(chs[0])
	if v, _ := ex.Extension("a"); v != 1 {
		t.Errorf("restored a = %v, want 1", v)
	}
	ex.DeleteExtension("a")
	if _, ok := ex.Extension("a"); ok {
		t.Error("a still there after DeleteExtension")
	}
	if chs := ctl.TakeExtensionChanges(); len(chs) != 1 || chs[0].Key != "a" {
		t.Errorf("changes after delete = %+v", chs)
	}
	if chs := ctl.TakeExtensionChanges(); chs != nil {
		t.Errorf("second take = %+v, want none", chs)
	}
}

// TestCapabilitiesEqual_Extensions: the declarations are part of the
// static capabilities (P2), compared field by field and schema byte for
// byte; Normalize copies them.
func TestCapabilitiesEqual_Extensions(t *testing.T) {
	a := gateway.Capabilities{Description: "d", Extensions: []gateway.ExtensionSpec{{Key: "k", Writes: true, Schema: json.RawMessage(`{}`)}}}
	b := a.Normalize()
	if !a.Equal(b) {
		t.Fatal("Normalize changed the declarations")
	}
	b.Extensions[0].Schema[0] = '['
	if a.Extensions[0].Schema[0] != '{' {
		t.Error("Normalize shares the schema bytes")
	}
	if a.Equal(b) {
		t.Error("different schemas compare equal")
	}
	if w, ok := a.Writer("k"); !ok || w.Key != "k" {
		t.Errorf("Writer(k) = %v %v", w, ok)
	}
}
