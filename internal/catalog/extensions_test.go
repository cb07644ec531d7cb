package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/abkit/abkit/sdk/family"
	"github.com/abkit/abkit/sdk/gateway"
)

// TestValidateChain_X2: chain validate reports a reader of an extension
// with no writer before it, at the reader's entry; with the writer first
// there is nothing to say.
func TestValidateChain_X2(t *testing.T) {
	cat := &Catalog{Plugins: []Descriptor{
		{Name: "parser", Description: "Parses", Families: []string{family.Pipeline}, Capabilities: &Capabilities{
			Extensions: []gateway.ExtensionSpec{{Key: "inference", Writes: true, Schema: json.RawMessage(`{"type":"object"}`)}}}},
		{Name: "reader", Description: "Reads", Families: []string{family.Pipeline}, Capabilities: &Capabilities{
			Extensions: []gateway.ExtensionSpec{{Key: "inference", Reads: true}}}},
	}}
	cf, err := ParseChain("c.yaml", []byte("outbound:\n  - name: reader\n  - name: parser\n"))
	if err != nil {
		t.Fatal(err)
	}
	fs := ValidateChain(cf, cat)
	if len(fs) != 1 || fs[0].Rule != "X2" || fs[0].Line != 2 || !strings.Contains(fs[0].Msg, `reads extension "inference", which no plugin before it writes; "parser" (line 3) writes it, but stands after it`) {
		t.Errorf("findings %+v, want the X2 one at line 2", fs)
	}
	cf, _ = ParseChain("c.yaml", []byte("outbound:\n  - name: parser\n  - name: reader\n"))
	if fs := ValidateChain(cf, cat); len(fs) != 0 {
		t.Errorf("writer first: %+v", fs)
	}
}

// TestLint_X1: lint reports a declared schema that does not compile.
func TestLint_X1(t *testing.T) {
	cat := &Catalog{Plugins: []Descriptor{{Name: "parser", Description: "Parses", Families: []string{family.Pipeline},
		Capabilities: &Capabilities{Extensions: []gateway.ExtensionSpec{{Key: "k", Writes: true, Schema: json.RawMessage(`{"type":7}`)}}}}}}
	fs := Lint(cat)
	if len(fs) != 1 || fs[0].Rule != "X1" || !strings.Contains(fs[0].Msg, `extension "k": schema does not compile`) {
		t.Errorf("findings %+v", fs)
	}
}

// TestExtensionLines: the catalog's one-line form of each declaration.
func TestExtensionLines(t *testing.T) {
	got := ExtensionLines([]gateway.ExtensionSpec{
		{Key: "inference", Writes: true, Schema: json.RawMessage(`{"type":"object","properties":{"e":{},"d":{},"c":{},"b":{},"a":{}}}`), Description: "what was parsed"},
		{Key: "mcp", Reads: true, Optional: true},
	})
	want := []string{"writes inference (schema: object{a, b, c, d, …}): what was parsed", "reads mcp (optional)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ExtensionLines = %q, want %q", got, want)
	}
}
