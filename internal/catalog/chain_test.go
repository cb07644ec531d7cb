package catalog

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func testCatalog(t testing.TB) *Catalog {
	t.Helper()
	c, err := Load(context.Background(), []string{"file:testdata/catalog.yaml"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// want is the part of a finding the broken-chain table pins down; the
// message is checked for the names it must mention.
type want struct {
	Line   int
	Rule   string
	Plugin string
}

// TestBrokenChains checks every broken chain under testdata/chains against
// the exact findings: P6, P7, P8, P9, P10, P11, D17, D18 (and a file with
// all of them at once, which must report every one, not just the first).
func TestBrokenChains(t *testing.T) {
	cat := testCatalog(t)
	tests := []struct {
		file     string
		want     []want
		mentions []string // words the messages must contain, in order of findings
	}{
		{"valid.yaml", nil, nil},
		// P6: unknown name lists the registered names.
		{"p6_unknown.yaml", []want{{3, "P6", "tool-alowlist"}}, []string{"registered: a2a-parser, any-consumer"}},
		// P6: config block on a plugin that takes none.
		{"p6_config.yaml", []want{{2, "P6", "header-tagger"}}, []string{"takes no configuration"}},
		// P6: unknown error policy.
		{"p6_on_error.yaml", []want{{2, "P6", "header-tagger"}}, []string{`"ignore"`}},
		// P6: off entries are dropped before validation.
		{"p6_off.yaml", []want{{9, "P7", "tool-allowlist"}}, []string{"missing"}},
		// P7: missing and late.
		{"p7_missing.yaml", []want{{3, "P7", "tool-allowlist"}}, []string{`"mcp-parser", which is missing`}},
		{"p7_late.yaml", []want{{2, "P7", "tool-allowlist"}}, []string{"stands late (line 4, not before line 2)"}},
		// P8: none present, present but late.
		{"p8_none.yaml", []want{{3, "P8", "any-consumer"}}, []string{"none is in the chain"}},
		{"p8_late.yaml", []want{{3, "P8", "any-consumer"}}, []string{`"a2a-parser" is present but stands late`}},
		// P9: two writers; a body reader after the writer.
		{"p9_two_writers.yaml", []want{{3, "P9", "response-redactor"}, {3, "P9", "response-redactor"}}, []string{"reads bodies but stands after", `"response-rewriter" (line 2) and "response-redactor" (line 3) both declare writes_response_body`}},
		{"p9_reader_after_writer.yaml", []want{{3, "P9", "mcp-parser"}}, []string{`stands after "request-rewriter" (line 2)`}},
		// P10: writers in a waypoint chain; an unknown mode, reported once.
		{"p10_waypoint.yaml", []want{{4, "P10", "request-rewriter"}}, []string{"waypoint"}},
		{"p10_mode.yaml", []want{{1, "P10", ""}}, []string{`unknown chain mode "sidecar"`}},
		// P11: a streaming plugin with no body reader in the chain.
		{"p11_no_body.yaml", []want{{3, "P11", "frame-watcher"}}, []string{"gets no body (nil)"}},
		// D17: bad slot names, each on its own line.
		{"d17_slot.yaml", []want{{5, "D17", "secret-guard"}, {6, "D17", "secret-guard"}}, []string{`invalid slot "tool:"`, `invalid slot "prompt"`}},
		// D18: a second owner names both claimants.
		{"d18_owner.yaml", []want{{4, "D18", "search-owner"}}, []string{`claimed by "secret-guard" (line 2) and by "search-owner"`}},
		{"everything.yaml", []want{
			{4, "P7", "tool-allowlist"},
			{6, "P10", "request-rewriter"},
			{7, "P6", "nope"},
			{9, "P6", "header-tagger"},
			{11, "P11", "frame-watcher"},
			// Same line: in column order (the D18 claim comes first).
			{15, "D18", "search-owner"},
			{15, "D17", "search-owner"},
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "chains", tc.file)
			cf, err := ReadChainFile(path)
			if err != nil {
				t.Fatal(err)
			}
			fs := ValidateChain(cf, cat)
			var got []want
			for _, f := range fs {
				got = append(got, want{f.Line, f.Rule, f.Plugin})
				if f.File != path {
					t.Errorf("finding %v: file %q, want %q", f, f.File, path)
				}
				if f.Fix == "" || f.Msg == "" {
					t.Errorf("finding %v: empty message or fix", f)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nall: %v", diff, fs)
			}
			for i, m := range tc.mentions {
				if i < len(fs) && !strings.Contains(fs[i].Msg, m) {
					t.Errorf("finding %d message %q does not mention %q", i, fs[i].Msg, m)
				}
			}
		})
	}
}

// TestChainExtensionsAndHooks covers the family D and H checks of chain
// files: D5 (no plugin ID), C2 (not in catalog), D4 (priority), D3
// (timeout), H3 (hook policy), H6 (bus tool policy).
func TestChainExtensionsAndHooks(t *testing.T) {
	cat := testCatalog(t)
	src := `tool_policy: drop
extensions:
  - plugin: ""
  - plugin: header-tagger
  - plugin: secret-guard
    priority: 5000
    timeout: 2m
hooks:
  - plugin: audit-hooks
    id: nope
    policy: swallow
  - plugin: mcp-parser
`
	cf, err := ParseChain("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []want
	for _, f := range ValidateChain(cf, cat) {
		got = append(got, want{f.Line, f.Rule, f.Plugin})
	}
	wantF := []want{
		{1, "H6", ""},
		{3, "D5", ""},
		{4, "C2", "header-tagger"},
		{6, "D4", "secret-guard"},
		{7, "D3", "secret-guard"},
		{10, "C2", "audit-hooks"},
		{11, "H3", "audit-hooks"},
		{12, "C2", "mcp-parser"},
	}
	if diff := cmp.Diff(wantF, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestChainFileStrict(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unknown field", "inbound:\n  - name: a\n    onerror: observe\n", "x.yaml:3:5: "},
		{"wrong type", "inbound:\n  - name: [a, b]\n", "x.yaml:2:"},
		{"duplicate key", "mode: proxy\nmode: waypoint\n", "x.yaml:2:1: "},
		{"syntax", "inbound:\n  - name: a\n   bad: [\n", "x.yaml:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseChain("x.yaml", []byte(tc.src))
			var pe *PosError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *PosError", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) || pe.Line == 0 {
				t.Errorf("err = %q, want prefix %q and a line", err, tc.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	cat := testCatalog(t)
	cf, err := ReadChainFile("testdata/chains/p7_late.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := Resolve(cf, cat)
	if len(r.Chains) != 1 || r.Chains[0].Direction != "inbound" || !r.Chains[0].BuffersBodies {
		t.Fatalf("chains = %+v", r.Chains)
	}
	e := r.Chains[0].Entries[0]
	if diff := cmp.Diff([]ResolvedDep{{Name: "mcp-parser", Kind: "requires", Status: DepLate}}, e.Deps); diff != "" {
		t.Errorf("deps (-want +got):\n%s", diff)
	}

	cf, err = ReadChainFile("testdata/chains/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r = Resolve(cf, cat)
	// D4: priority ascending, then plugin ID; D12: slot owners are required.
	var ext []string
	for _, x := range r.Extensions {
		ext = append(ext, x.Plugin)
		if !x.Required {
			t.Errorf("%s owns slots %v but is not required-class (D12)", x.Plugin, x.Slots)
		}
	}
	if diff := cmp.Diff([]string{"search-owner", "secret-guard"}, ext); diff != "" {
		t.Errorf("extension order (-want +got):\n%s", diff)
	}
	// H1: order ascending; H3/H6 effective policies.
	if diff := cmp.Diff([]ResolvedHook{
		{Plugin: "audit-hooks", ID: "audit-tool", Kind: "tool", Order: 5, Policy: "fail-open"},
		{Plugin: "audit-hooks", ID: "audit-submit", Kind: "submit", Order: 10, Policy: "fail-closed"},
	}, r.Hooks); diff != "" {
		t.Errorf("hooks (-want +got):\n%s", diff)
	}
}

// TestUnknownPluginSuggestsNearest: P6 and C2 findings (P6, C2) for a misspelt
// plugin name say which registered name was meant.
func TestUnknownPluginSuggestsNearest(t *testing.T) {
	tests := []struct{ name, chain, want string }{
		{"P6 inbound", "inbound:\n  - name: mcp-parser\n  - name: tool-alowlist\n    config: {allow: [a]}\n", `did you mean "tool-allowlist"?`},
		{"P6 far name", "inbound:\n  - name: zzzzzzzzzzzz\n", "use one of the registered names"},
		{"C2 extension", "extensions:\n  - plugin: search-ownr\n", `did you mean "search-owner"?`},
		{"C2 hook plugin", "hooks:\n  - plugin: audit-hook\n", `did you mean "audit-hooks"?`},
		{"C2 hook id", "hooks:\n  - plugin: audit-hooks\n    id: audit-submt\n", `did you mean "audit-submit"?`},
	}
	cat := testCatalog(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cf, err := ParseChain("c.yaml", []byte(tc.chain))
			if err != nil {
				t.Fatal(err)
			}
			fs := ValidateChain(cf, cat)
			if len(fs) != 1 {
				t.Fatalf("findings = %+v, want 1", fs)
			}
			if got := fs[0].Fix; !strings.Contains(got, tc.want) {
				t.Errorf("fix = %q, want it to contain %q", got, tc.want)
			}
		})
	}
}

// TestJSONChainLines: a chain file written as JSON (it is YAML) gets the
// same finding lines as its YAML form; quoted keys must not lose them (P6).
func TestJSONChainLines(t *testing.T) {
	tests := []struct {
		name, chain string
		line        int
	}{
		{"yaml", "inbound:\n  - name: mcp-parser\n  - name: tool-alowlist\n", 3},
		{"json", "{\"inbound\": [\n  {\"name\": \"mcp-parser\"},\n  {\"name\": \"tool-alowlist\"}\n]}\n", 3},
		{"quoted yaml keys", "'inbound':\n  - \"name\": mcp-parser\n  - \"name\": tool-alowlist\n", 3},
	}
	cat := testCatalog(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cf, err := ParseChain("c", []byte(tc.chain))
			if err != nil {
				t.Fatal(err)
			}
			fs := ValidateChain(cf, cat)
			if len(fs) != 1 || fs[0].Line != tc.line {
				t.Fatalf("findings = %+v, want one on line %d", fs, tc.line)
			}
		})
	}
}

// TestDecoderPanicIsAnError: a document that makes go-yaml panic is
// refused with an error naming the file, not a crash.
func TestDecoderPanicIsAnError(t *testing.T) {
	_, err := ParseChain("odd.yaml", []byte("outbound:\n  ! 0\n00008:000000:"))
	if err == nil {
		t.Fatal("ParseChain accepted the document")
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "odd.yaml: ") || !strings.Contains(msg, "YAML decoder cannot read") {
		t.Errorf("error = %q, want one naming odd.yaml and the decoder", msg)
	}
}
