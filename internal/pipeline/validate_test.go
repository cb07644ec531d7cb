package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/abkit/abkit/sdk/gateway"
)

func infoLookup(infos ...Info) (func(string) (Info, bool), []string) {
	m := map[string]Info{}
	var names []string
	for _, i := range infos {
		if i.Capabilities.Description == "" {
			i.Capabilities.Description = "plugin " + i.Name
		}
		m[i.Name] = i
		names = append(names, i.Name)
	}
	return func(n string) (Info, bool) { i, ok := m[n]; return i, ok }, names
}

func entries(names ...string) []Entry {
	var es []Entry
	for _, n := range names {
		es = append(es, Entry{Plugin: n})
	}
	return es
}

// TestValidateRules checks each build rule: the rule ID, the entry, and
// that the message names what the rule says it must.
func TestValidateRules(t *testing.T) {
	lookup, reg := infoLookup(
		Info{Name: "a"},
		Info{Name: "b"},
		Info{Name: "cfg", TakesConfig: true},
		Info{Name: "needs-a", Capabilities: gateway.Capabilities{Requires: []string{"a"}}},
		Info{Name: "any-ab", Capabilities: gateway.Capabilities{RequiresAny: []string{"a", "b"}}},
		Info{Name: "reader", Capabilities: gateway.Capabilities{ReadsBody: true}},
		Info{Name: "wreq", Capabilities: gateway.Capabilities{WritesRequestBody: true}},
		Info{Name: "wreq2", Capabilities: gateway.Capabilities{WritesRequestBody: true}},
		Info{Name: "wresp", Capabilities: gateway.Capabilities{WritesResponseBody: true}},
		Info{Name: "wresp2", Capabilities: gateway.Capabilities{WritesResponseBody: true}},
		Info{Name: "longdesc", Capabilities: gateway.Capabilities{Description: strings.Repeat("x", 81)}},
		Info{Name: "twolines", Capabilities: gateway.Capabilities{Description: "one\ntwo"}},
		Info{Name: "runes80", Capabilities: gateway.Capabilities{Description: strings.Repeat("é", 80)}},
	)
	type want struct {
		rule, entry string // entry: index as text, "-1" for chain-wide
		contains    []string
	}
	tests := []struct {
		name string
		spec Spec
		want []want
	}{
		{"ok", Spec{Entries: entries("a", "needs-a", "any-ab")}, nil},
		{"P1 duplicate name", Spec{Entries: entries("a", "b", "a")},
			[]want{{"P1", "2", []string{`"a"`, "entries 0 and 2"}}}},
		{"P1 empty name", Spec{Entries: []Entry{{}}}, []want{{"P1", "0", []string{"no plugin"}}}},
		{"P5 description too long", Spec{Entries: entries("longdesc")}, []want{{"P5", "0", []string{"81 characters"}}}},
		{"P5 description two lines", Spec{Entries: entries("twolines")}, []want{{"P5", "0", []string{"one line"}}}},
		{"P5 80 runes is fine", Spec{Entries: entries("runes80")}, nil},
		{"P6 unknown name lists registered", Spec{Entries: entries("nope")},
			[]want{{"P6", "0", []string{`"nope"`, "registered: a, any-ab, b, cfg"}}}},
		{"P6 config on plugin without config", Spec{Entries: []Entry{{Plugin: "a", Config: []byte(`{"x":1}`)}}},
			[]want{{"P6", "0", []string{"takes no configuration"}}}},
		{"P6 null config is no config", Spec{Entries: []Entry{{Plugin: "a", Config: []byte(` null `)}}}, nil},
		{"P6 config on configurable plugin", Spec{Entries: []Entry{{Plugin: "cfg", Config: []byte(`{}`)}}}, nil},
		{"P6 off entry dropped before validation", Spec{Entries: []Entry{{Plugin: "nope", OnError: Off}, {Plugin: "a", OnError: Off}, {Plugin: "needs-a"}}},
			[]want{{"P7", "2", []string{"missing"}}}},
		{"P6 bad policy", Spec{Entries: []Entry{{Plugin: "a", OnError: "ignore"}}}, []want{{"P6", "0", []string{`"ignore"`}}}},
		{"P7 missing", Spec{Entries: entries("needs-a")}, []want{{"P7", "0", []string{`"needs-a"`, `"a"`, "missing"}}}},
		{"P7 late", Spec{Entries: entries("needs-a", "a")}, []want{{"P7", "0", []string{`"needs-a"`, `"a"`, "late"}}}},
		{"P8 none present", Spec{Entries: entries("any-ab")}, []want{{"P8", "0", []string{"none"}}}},
		{"P8 one present earlier", Spec{Entries: entries("b", "any-ab")}, nil},
		{"P8 present but late", Spec{Entries: entries("a", "any-ab", "b")}, []want{{"P8", "1", []string{`"b"`, "late"}}}},
		{"P9 two request writers", Spec{Entries: entries("wreq", "wreq2")},
			[]want{{"P9", "1", []string{`"wreq"`, `"wreq2"`, "writes_request_body"}}, {"P9", "1", []string{"reads bodies"}}}},
		{"P9 two response writers", Spec{Entries: entries("wresp", "wresp2")},
			[]want{{"P9", "1", []string{`"wresp"`, `"wresp2"`}}, {"P9", "1", []string{"reads bodies"}}}},
		{"P9 reader after writer", Spec{Entries: entries("wresp", "reader")}, []want{{"P9", "1", []string{`"reader"`, `"wresp"`}}}},
		{"P9 reader before writer", Spec{Entries: entries("reader", "wreq")}, nil},
		{"P10 waypoint rejects writers", Spec{Mode: Waypoint, Entries: entries("a", "wreq")}, []want{{"P10", "1", []string{"waypoint"}}}},
		{"P10 waypoint without writers", Spec{Mode: Waypoint, Entries: entries("a", "reader")}, nil},
		{"P10 unknown mode", Spec{Mode: "sidecar", Entries: entries("a")}, []want{{"P10", "-1", []string{"sidecar"}}}},
		{"P6 collects every error", Spec{Entries: []Entry{{Plugin: "nope"}, {Plugin: "needs-a"}, {Plugin: "a", Config: []byte("{}")}}},
			[]want{{"P6", "0", nil}, {"P7", "1", nil}, {"P6", "2", nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Validate(tt.spec, lookup, reg)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d errors %v, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Rule != w.rule || itoa(g.Entry) != w.entry {
					t.Errorf("error %d: got rule %s entry %d, want %s entry %s (%v)", i, g.Rule, g.Entry, w.rule, w.entry, g)
				}
				for _, s := range w.contains {
					if !strings.Contains(g.Error(), s) {
						t.Errorf("error %d %q does not mention %s", i, g.Error(), s)
					}
				}
				if g.Fix == "" {
					t.Errorf("error %d has no fix: %v", i, g)
				}
			}
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestNormalizesFirstP4: a writer that does not declare reads_body counts
// as a reader (P4): the chain buffers bodies for it (P11), and a second
// writer of the other direction may stand after it (P9 decision).
func TestNormalizesFirstP4(t *testing.T) {
	lookup, reg := infoLookup(
		Info{Name: "wreq", Capabilities: gateway.Capabilities{WritesRequestBody: true}},
		Info{Name: "wresp", Capabilities: gateway.Capabilities{WritesResponseBody: true}},
		Info{Name: "reader", Capabilities: gateway.Capabilities{ReadsBody: true}},
	)
	if errs := Validate(Spec{Entries: entries("wreq", "wresp")}, lookup, reg); len(errs) != 0 {
		t.Fatalf("both writers: %v", errs)
	}
	errs := Validate(Spec{Entries: entries("wreq", "wresp", "reader")}, lookup, reg)
	if len(errs) != 2 || errs[0].Rule != "P9" || errs[1].Rule != "P9" {
		t.Fatalf("reader after both writers: %v", errs)
	}
	log := &recLog{}
	w := &fake{name: "w", log: log, caps: gateway.Capabilities{WritesRequestBody: true}}
	c := buildFakes(t, Options{}, w)
	if caps, _ := c.Capabilities("w"); !caps.ReadsBody || !c.ReadsBody() {
		t.Fatal("P4: the chain did not normalise writes_request_body to reads_body")
	}
	r := req()
	r.Body = nil
	c.Run(context.Background(), r, jsonUp("x"), ExchangeOptions{})
	if cl := log.all()[0]; cl.reqBodyNil {
		t.Error("P4/P11: the writer saw no request body")
	}
	cp := gateway.Capabilities{WritesResponseBody: true, Requires: []string{"x"}}
	n := cp.Normalize()
	n.Requires[0] = "y"
	if !n.ReadsBody || cp.Requires[0] != "x" {
		t.Fatal("P4: Normalize did not imply reads_body or shares Requires")
	}
}

// TestCapabilityFieldsP3 pins the capability field names of P3.
func TestCapabilityFieldsP3(t *testing.T) {
	b, err := json.Marshal(gateway.Capabilities{ReadsBody: true, WritesRequestBody: true, WritesResponseBody: true,
		Requires: []string{"a"}, RequiresAny: []string{"b"}, Description: "d"})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"reads_body", "writes_request_body", "writes_response_body", "requires", "requires_any", "description"} {
		if _, ok := m[k]; !ok {
			t.Errorf("P3: field %q missing from %s", k, b)
		}
	}
	if len(m) != 6 {
		t.Errorf("P3: %d fields, want 6: %s", len(m), b)
	}
}

// TestBuildErrorsP1P2P6 checks errors only Build can find, and that the
// error's parts can be inspected one by one.
func TestBuildErrorsP1P2P6(t *testing.T) {
	log := &recLog{}
	good := &fake{name: "good", log: log, caps: gateway.Capabilities{Description: "good"}}
	liar := gateway.Factory{Name: "liar", New: func(json.RawMessage) (gateway.Plugin, error) {
		return (&fake{name: "other", log: log, caps: gateway.Capabilities{Description: "x"}}).plugin(), nil
	}}
	n := 0
	fickle := gateway.Factory{Name: "fickle", New: func(json.RawMessage) (gateway.Plugin, error) {
		return &fickleCaps{fake: fake{name: "fickle", log: log}, n: &n}, nil
	}}
	strict := gateway.Factory{Name: "strict", Config: &gateway.ConfigSchema{}, New: func(raw json.RawMessage) (gateway.Plugin, error) {
		if string(raw) != `{"ok":true}` {
			return nil, errors.New("want ok=true")
		}
		return (&fake{name: "strict", log: log, caps: gateway.Capabilities{Description: "s"}}).plugin(), nil
	}}
	panicky := gateway.Factory{Name: "panicky", New: func(json.RawMessage) (gateway.Plugin, error) { panic("boom") }}
	facs := []gateway.Factory{good.factory(), liar, fickle, strict, panicky, good.factory()}
	spec := Spec{Direction: gateway.Outbound, Entries: []Entry{
		{Plugin: "liar"}, {Plugin: "fickle"}, {Plugin: "strict", Config: []byte(`{"ok":false}`)}, {Plugin: "panicky"},
		{Plugin: "strict", OnError: Off}, {Plugin: "good"},
	}}
	_, err := Build(spec, facs, Options{})
	var be *BuildError
	if !errors.As(err, &be) {
		t.Fatalf("Build error %v is not a *BuildError", err)
	}
	var rules []string
	for _, part := range be.Unwrap() {
		var re *RuleError
		if !errors.As(part, &re) {
			t.Fatalf("part %v is not a *RuleError", part)
		}
		rules = append(rules, re.Rule+"@"+itoa(re.Entry)+":"+re.Plugin)
	}
	want := []string{"P1@-1:good", "P2@0:liar", "P2@1:fickle", "P6@2:strict", "P6@3:panicky"}
	if strings.Join(rules, " ") != strings.Join(want, " ") {
		t.Fatalf("got %v, want %v\n%v", rules, want, err)
	}
	if !strings.Contains(err.Error(), "outbound chain: 5 error(s)") || !strings.Contains(err.Error(), "want ok=true") {
		t.Errorf("error text: %v", err)
	}
}

type fickleCaps struct {
	fake
	n *int
}

func (f *fickleCaps) Capabilities() gateway.Capabilities {
	*f.n++
	return gateway.Capabilities{Description: "call " + itoa(*f.n)}
}

// TestBuildResolvesChain: off entries are gone, observe is kept, capability
// accessors report normalised values (P4, P6, P11, P18).
func TestBuildResolvesChainP4P6(t *testing.T) {
	log := &recLog{}
	a := &fake{name: "a", log: log, caps: gateway.Capabilities{Description: "a", WritesResponseBody: true}}
	b := &fake{name: "b", log: log, caps: gateway.Capabilities{Description: "b"}}
	c, err := Build(Spec{Entries: []Entry{{Plugin: "b", OnError: Off}, {Plugin: "a", OnError: Observe}}},
		[]gateway.Factory{a.factory(), b.factory()}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Names(); len(got) != 1 || got[0] != "a" {
		t.Fatalf("Names = %v", got)
	}
	caps, _ := c.Capabilities("a")
	if !caps.ReadsBody || !c.ReadsBody() || !c.BuffersResponses() || c.Mode() != Proxy {
		t.Fatalf("caps %+v reads %v buffers %v mode %v", caps, c.ReadsBody(), c.BuffersResponses(), c.Mode())
	}
}
