package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/abkit/abkit/internal/buildinfo"
	"github.com/abkit/abkit/internal/catalog"
)

// updating reports whether -update was given: rewrite the golden files
// under testdata/golden. The flag itself is defined by x/exp/golden, which
// teatest imports; defining it again would panic.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

const (
	testCatalog = "file:../catalog/testdata/catalog.yaml"
	chains      = "../catalog/testdata/chains/"
)

type result struct {
	code     int
	out, err string
}

// run runs abctl in-process. terminal makes stdout and stderr look like a
// terminal; env is the environment.
func run(t *testing.T, terminal bool, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	app := &App{
		Out: &out, Err: &errb,
		OutTerminal: terminal, ErrTerminal: terminal,
		Getenv:  func(k string) string { return env[k] },
		Catalog: catalog.Options{Builtin: Builtins, CacheDir: "-"},
		Version: "v0.0.0-test",
	}
	code := Main(context.Background(), app, args)
	return result{code: code, out: out.String(), err: errb.String()}
}

// scrub replaces the absolute testdata path, which differs per checkout.
func scrub(t *testing.T, s string) string {
	abs, err := filepath.Abs("../catalog/testdata")
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(s, abs, "TESTDATA")
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", "golden", name)
	if updating() {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/cli -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

// TestGolden runs each command on a terminal-like and on a plain writer
// and compares stdout with testdata/golden. NO_COLOR is set so golden
// files hold no escape codes; TestColour covers colour.
func TestGolden(t *testing.T) {
	noColor := map[string]string{"NO_COLOR": "1"}
	tests := []struct {
		name string
		code int
		args []string
	}{
		{"list", 0, []string{"catalog", "list", "--source", testCatalog}},
		{"list_json", 0, []string{"catalog", "list", "--source", testCatalog, "-o", "json"}},
		{"list_yaml", 0, []string{"catalog", "list", "--source", testCatalog, "-o", "yaml"}},
		{"show", 0, []string{"catalog", "show", "tool-allowlist", "--source", testCatalog}},
		{"show_json", 0, []string{"catalog", "show", "mcp-parser", "--source", testCatalog, "-o", "json"}},
		{"lint_broken", 1, []string{"catalog", "lint", "--source", "file:../catalog/testdata/lint/broken.yaml"}},
		{"validate_everything", 1, []string{"chain", "validate", chains + "everything.yaml", "--source", testCatalog}},
		{"validate_everything_json", 1, []string{"chain", "validate", chains + "everything.yaml", "--source", testCatalog, "-o", "json"}},
		{"chain_show", 0, []string{"chain", "show", chains + "valid.yaml", "--source", testCatalog}},
		{"chain_show_yaml", 0, []string{"chain", "show", chains + "valid.yaml", "--source", testCatalog, "-o", "yaml"}},
		// An entry the catalog lacks: the table still prints, exit 1.
		{"chain_show_unknown", 1, []string{"chain", "show", chains + "p6_unknown.yaml", "--source", testCatalog}},
	}
	for _, tc := range tests {
		for _, term := range []bool{true, false} {
			if strings.Contains(tc.name, "json") || strings.Contains(tc.name, "yaml") {
				if !term {
					continue // data formats do not depend on the terminal
				}
			}
			name := tc.name
			if !strings.Contains(name, "json") && !strings.Contains(name, "yaml") {
				if term {
					name += ".term"
				} else {
					name += ".plain"
				}
			}
			t.Run(name, func(t *testing.T) {
				r := run(t, term, noColor, tc.args...)
				if r.code != tc.code {
					t.Fatalf("exit %d, want %d; stderr: %s", r.code, tc.code, r.err)
				}
				golden(t, name, scrub(t, r.out))
			})
		}
	}
}

// TestPlainIsTSV: off a terminal every line has the same number of tab
// separated fields and there is no header.
func TestPlainIsTSV(t *testing.T) {
	r := run(t, false, nil, "catalog", "list", "--source", testCatalog)
	lines := strings.Split(strings.TrimSuffix(r.out, "\n"), "\n")
	if len(lines) != 12 {
		t.Fatalf("%d lines, want 12 (one per plugin, no header):\n%s", len(lines), r.out)
	}
	for _, l := range lines {
		if n := strings.Count(l, "\t"); n != 5 {
			t.Errorf("line %q has %d tabs, want 5", l, n)
		}
		if strings.HasPrefix(l, "NAME") || strings.Contains(l, "\x1b[") {
			t.Errorf("plain output has a header or colour: %q", l)
		}
	}
}

func TestColour(t *testing.T) {
	args := []string{"catalog", "list", "--source", testCatalog}
	if r := run(t, true, nil, args...); !strings.HasPrefix(r.out, "\x1b[1mNAME") {
		t.Errorf("terminal without NO_COLOR: want a bold header, got %q", firstLine(r.out))
	}
	if r := run(t, true, map[string]string{"NO_COLOR": "1"}, args...); strings.Contains(r.out+r.err, "\x1b[") {
		t.Errorf("NO_COLOR set: output has escape codes")
	}
	if r := run(t, true, nil, append(args, "--no-color")...); strings.Contains(r.out+r.err, "\x1b[") {
		t.Errorf("--no-color: output has escape codes")
	}
	if r := run(t, false, nil, args...); strings.Contains(r.out+r.err, "\x1b[") {
		t.Errorf("not a terminal: output has escape codes")
	}
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// TestExitCodes: 0 ok, 1 findings, 2 usage, 3 unreadable plugin, file or
// gateway; messages go to stderr, never stdout.
func TestExitCodes(t *testing.T) {
	tests := []struct {
		args    []string
		code    int
		errWant string
	}{
		{[]string{"catalog", "list"}, 0, ""},
		{[]string{"catalog", "lint"}, 0, "no findings"},
		{[]string{"version"}, 0, ""},
		{[]string{"chain", "validate", chains + "valid.yaml", "--source", testCatalog}, 0, "no findings"},
		{[]string{"chain", "validate", chains + "p7_late.yaml", "--source", testCatalog}, 1, "1 finding(s)"},
		{[]string{"catalog", "lint", "--source", "file:../catalog/testdata/lint/broken.yaml"}, 1, "finding(s)"},
		{[]string{"catalog", "list", "--bogus"}, 2, "unknown flag"},
		{[]string{"catalog", "list", "-o", "xml"}, 2, `output format "xml"`},
		{[]string{"catalog", "show"}, 2, "missing NAME"},
		{[]string{"catalog", "show", "nope"}, 2, `no plugin "nope"`},
		{[]string{"catalog", "frobnicate"}, 2, "unknown command"},
		{[]string{"catalog", "list", "--source", "ftp:x"}, 2, "want builtin, dir:PATH"},
		{[]string{"catalog", "list", "--source", "file:does/not/exist.yaml"}, 3, "no such file"},
		{[]string{"chain", "validate", "does/not/exist.yaml"}, 3, "no such file"},
		{[]string{"catalog", "list", "--source", "url:http://127.0.0.1:1/plugins"}, 3, "fetch http://127.0.0.1:1/plugins"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := run(t, false, nil, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", r.code, tc.code, r.err)
			}
			if !strings.Contains(r.err, tc.errWant) {
				t.Errorf("stderr %q, want it to contain %q", r.err, tc.errWant)
			}
			if tc.code >= 2 && r.out != "" {
				t.Errorf("stdout not empty on error: %q", r.out)
			}
		})
	}
}

func TestChainFileDecodeError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(p, []byte("inbound:\n  - name: a\n    onerror: observe\n"), 0o644)
	r := run(t, false, nil, "chain", "validate", p)
	if r.code != 3 || !strings.Contains(r.err, p+":3:5:") {
		t.Errorf("exit %d, stderr %q; want 3 and file:line:column", r.code, r.err)
	}
}

// TestBuiltinCatalog: the built-in catalog lists every example plugin with
// description and capabilities, and lints clean (P1, P2, P5, ...).
func TestBuiltinCatalog(t *testing.T) {
	r := run(t, false, nil, "catalog", "list", "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	var got struct {
		Plugins []struct {
			Name         string          `json:"name"`
			Description  string          `json:"description"`
			Families     []string        `json:"families"`
			Capabilities json.RawMessage `json:"capabilities"`
			Extension    json.RawMessage `json:"extension"`
			Hooks        json.RawMessage `json:"hooks"`
			Origin       struct{ Kind string }
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Plugins) != len(Builtins()) || len(got.Plugins) == 0 {
		t.Fatalf("%d plugins, want %d", len(got.Plugins), len(Builtins()))
	}
	for _, p := range got.Plugins {
		if p.Name == "" || p.Description == "" || len(p.Families) == 0 || p.Origin.Kind != "builtin" {
			t.Errorf("incomplete entry %+v", p)
		}
		// Each family's part is present: capabilities (P), manifest (D),
		// hook specs (H).
		for _, f := range p.Families {
			part := map[string]json.RawMessage{"P": p.Capabilities, "D": p.Extension, "H": p.Hooks}[f]
			if len(part) == 0 {
				t.Errorf("%s is in family %s but has no %s part", p.Name, f, f)
			}
		}
	}
	if r := run(t, false, nil, "catalog", "lint"); r.code != 0 {
		t.Errorf("built-in catalog lint: exit %d\n%s%s", r.code, r.out, r.err)
	}
}

func TestCompletion(t *testing.T) {
	r := run(t, false, nil, "__complete", "catalog", "show", "--source", testCatalog, "")
	for _, n := range []string{"mcp-parser\tParses MCP", "tool-allowlist\t"} {
		if !strings.Contains(r.out, n) {
			t.Errorf("completion output lacks %q:\n%s", n, r.out)
		}
	}
	r = run(t, false, nil, "completion", "bash")
	if r.code != 0 || !strings.Contains(r.out, "__start_abctl") {
		t.Errorf("completion bash: exit %d", r.code)
	}
	r = run(t, false, nil, "__complete", "catalog", "list", "-o", "")
	if !strings.Contains(r.out, "json") || !strings.Contains(r.out, "yaml") {
		t.Errorf("-o completion: %q", r.out)
	}
}

func TestVersion(t *testing.T) {
	r := run(t, false, nil, "version", "-o", "json")
	var v buildinfo.Info
	if err := json.Unmarshal([]byte(r.out), &v); err != nil || v.Version != "v0.0.0-test" || v.Go == "" {
		t.Errorf("version = %+v, %v", v, err)
	}
	// --version and the version command say the same.
	flag := run(t, false, nil, "--version")
	cmd := run(t, false, nil, "version")
	if flag.code != 0 || cmd.code != 0 || flag.out != cmd.out || !strings.HasPrefix(cmd.out, "abctl v0.0.0-test (commit ") {
		t.Errorf("--version %d %q, version %d %q", flag.code, flag.out, cmd.code, cmd.out)
	}
}

// TestDocsUpToDate fails when docs/cli no longer matches the commands; run
// `go run ./internal/cli/gendocs` to regenerate.
func TestDocsUpToDate(t *testing.T) {
	tmp := t.TempDir()
	if err := GenDocs(tmp); err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.Glob(filepath.Join(tmp, "*.md"))
	have, _ := filepath.Glob("../../docs/cli/abctl*.md")
	if len(want) != len(have) {
		t.Errorf("docs/cli has %d pages, the commands make %d; run go run ./internal/cli/gendocs", len(have), len(want))
	}
	for _, w := range want {
		gen, _ := os.ReadFile(w)
		cur, err := os.ReadFile(filepath.Join("../../docs/cli", filepath.Base(w)))
		if err != nil || !bytes.Equal(gen, cur) {
			t.Errorf("docs/cli/%s is out of date; run go run ./internal/cli/gendocs", filepath.Base(w))
		}
	}
}

// BenchmarkCatalogListBuiltin runs `abctl catalog list` on the built-in
// source in-process, plain output.
func BenchmarkCatalogListBuiltin(b *testing.B) {
	var out bytes.Buffer
	app := &App{Out: &out, Err: &out, Catalog: catalog.Options{Builtin: Builtins}}
	for b.Loop() {
		out.Reset()
		if code := Main(context.Background(), app, []string{"catalog", "list"}); code != 0 {
			b.Fatalf("exit %d: %s", code, out.String())
		}
	}
}

// TestBuiltinChain: a realistic chain over the built-in plugins validates
// clean (P6–P11), and waypoint mode turns the response writer into a P10
// finding.
func TestBuiltinChain(t *testing.T) {
	if r := run(t, false, nil, "chain", "validate", "testdata/gateway.yaml"); r.code != 0 {
		t.Fatalf("exit %d:\n%s%s", r.code, r.out, r.err)
	}
	src, err := os.ReadFile("testdata/gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "waypoint.yaml")
	os.WriteFile(p, bytes.Replace(src, []byte("mode: proxy"), []byte("mode: waypoint"), 1), 0o644)
	r := run(t, false, nil, "chain", "validate", p)
	if r.code != 1 || !strings.Contains(r.out, p+":14:5\tP10\tpii-redactor\t") {
		t.Errorf("exit %d, out:\n%s", r.code, r.out)
	}
}

// TestChainShowUnknown: chain show warns on stderr once per entry naming a
// plugin the catalog lacks for its family (pipeline, extension, hook: P6,
// C2), with the nearest name and a pointer to chain validate, and exits 1
// (findings) with the data still on stdout; a fully known chain warns of
// nothing and exits 0.
func TestChainShowUnknown(t *testing.T) {
	p := filepath.Join(t.TempDir(), "chain.yaml")
	os.WriteFile(p, []byte(`inbound:
  - name: mcp-parser
  - name: tool-alowlist
outbound:
  - name: zzzzzzzzzzzz
  - name: secret-guard
extensions:
  - plugin: secret-gaurd
  - plugin: audit-hooks
hooks:
  - plugin: audit-hook
`), 0o644)
	validate := "run `abctl chain validate` for every finding"
	tests := []struct {
		name, file string
		code       int
		warnings   []string
		out        string // on stdout
	}{
		{"valid", chains + "valid.yaml", 0, nil, "mcp-parser"},
		{"unknown", p, ExitFindings, []string{
			p + `:3: inbound entry "tool-alowlist" is not a pipeline plugin in the catalog; did you mean "tool-allowlist"? ` + validate,
			p + `:5: outbound entry "zzzzzzzzzzzz" is not a pipeline plugin in the catalog; ` + validate,
			p + `:6: outbound entry "secret-guard" is not a pipeline plugin in the catalog; ` + validate,
			p + `:8: extension "secret-gaurd" is not an extension plugin in the catalog; did you mean "secret-guard"? ` + validate,
			p + `:9: extension "audit-hooks" is not an extension plugin in the catalog; ` + validate,
			p + `:11: hook "audit-hook" is not a hook plugin in the catalog; did you mean "audit-hooks"? ` + validate,
		}, "tool-alowlist"},
	}
	for _, tc := range tests {
		for _, format := range []string{"table", "json"} {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				r := run(t, false, nil, "chain", "show", tc.file, "--source", testCatalog, "-o", format)
				if r.code != tc.code {
					t.Errorf("exit %d, want %d; stderr: %s", r.code, tc.code, r.err)
				}
				var want string
				for _, w := range tc.warnings {
					want += "warning: " + w + "\n"
				}
				if diff := cmp.Diff(want, r.err); diff != "" {
					t.Errorf("stderr (-want +got):\n%s", diff)
				}
				if !strings.Contains(r.out, tc.out) {
					t.Errorf("stdout lacks %q:\n%s", tc.out, r.out)
				}
			})
		}
	}
}

// TestUsageMessages: an unknown subcommand at any level gets the nearest
// one, a missing argument is named, and help says bare abctl opens the
// TUI.
func TestUsageMessages(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"catlog"}, "catalog"},
		{[]string{"chain", "valdate", "x.yaml"}, `unknown command "valdate" for "abctl chain"; did you mean "validate"?`},
		{[]string{"catalog", "lst"}, `did you mean "list"?`},
		{[]string{"fixture", "xyz"}, "its commands are check, import"},
		{[]string{"cache", "clen"}, `did you mean "clean"?`},
		{[]string{"chain", "validate"}, "missing CHAIN file (usage: abctl chain validate CHAIN)"},
		{[]string{"chain", "show"}, "missing CHAIN file"},
		{[]string{"catalog", "show"}, "missing NAME (usage: abctl catalog show NAME)"},
		{[]string{"chain", "validate", "a.yaml", "b.yaml"}, `unexpected argument "b.yaml"`},
	} {
		r := run(t, false, nil, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.err, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.err, tc.want)
		}
	}
	if r := run(t, false, nil, "--help"); !strings.Contains(r.out, "Bare 'abctl' on a terminal opens the terminal UI") {
		t.Errorf("help does not say bare abctl opens the TUI:\n%s", r.out)
	}
}

// TestErrorsNamePathOnce runs the commands that fail on a missing or
// malformed file and checks that each error names the path once: "c.yaml:
// no such file or directory", not "c.yaml: open c.yaml: …".
func TestErrorsNamePathOnce(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badChain := write("bad-chain.yaml", "inbound:\n  - name: [\n")
	goodChain := write("good-chain.yaml", "inbound:\n  - name: inference-parser\n")
	badFixture := write("bad.fixture", "nonsense\n")
	badHAR := write("bad.har", "{\n")
	missing := filepath.Join(dir, "missing")
	fx := "../../fixtures/inference/anthropic-refusal.fixture"
	for _, c := range []struct {
		path string // the file the error is about
		args []string
	}{
		{missing + ".yaml", []string{"chain", "validate", missing + ".yaml"}},
		{badChain, []string{"chain", "validate", badChain}},
		{missing + ".yaml", []string{"chain", "show", missing + ".yaml"}},
		{badChain, []string{"chain", "show", badChain}},
		{missing + ".yaml", []string{"dryrun", "--chain", missing + ".yaml", fx}},
		{badChain, []string{"dryrun", "--chain", badChain, fx}},
		{missing + ".fixture", []string{"dryrun", "--chain", goodChain, missing + ".fixture"}},
		{badFixture, []string{"dryrun", "--chain", goodChain, badFixture}},
		{missing + ".sse", []string{"dryrun", "--chain", goodChain, "--sse", missing + ".sse"}},
		{missing, []string{"replay", missing}},
		{missing, []string{"replay", "--chain", goodChain, "--fixtures", missing, "--golden", dir}},
		{missing + ".fixture", []string{"fixture", "check", missing + ".fixture"}},
		{badFixture, []string{"fixture", "check", badFixture}},
		{missing + ".har", []string{"fixture", "import", "--har", missing + ".har", "--out", dir}},
		{badHAR, []string{"fixture", "import", "--har", badHAR, "--out", dir}},
		{missing + ".yaml", []string{"--source", "file:" + missing + ".yaml", "catalog", "list"}},
		{badChain, []string{"--source", "file:" + badChain, "catalog", "list"}},
		{missing, []string{"--source", "dir:" + missing, "catalog", "list"}},
		{missing + ".yaml", []string{"ui", "--chain", missing + ".yaml"}},
	} {
		r := run(t, false, nil, c.args...)
		if r.code == 0 {
			t.Errorf("%v: exit 0", c.args)
			continue
		}
		msg := r.err + r.out
		// Count the path where it is not the start of a longer one.
		if n := len(regexp.MustCompile(regexp.QuoteMeta(c.path)+`([^\w./-]|$)`).FindAllString(msg, -1)); n != 1 {
			t.Errorf("%v: the error names %s %d times:\n%s", c.args, filepath.Base(c.path), n, msg)
		}
	}
}
