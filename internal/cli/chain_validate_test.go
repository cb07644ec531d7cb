package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/abkit/abkit/internal/catalog"
	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/sdk/gateway"
)

// quirky is a plugin whose factory fails in each way the runtime's build
// turns into a rejection other than an error: it panics, returns no
// instance, or returns an instance under another name, as its config asks.
type quirky struct{ name string }

func (q quirky) Name() string { return q.name }
func (quirky) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Fails to build as its config asks"}
}
func (quirky) OnRequest(context.Context, *gateway.Exchange) gateway.Action { return gateway.Continue() }
func (quirky) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

func quirkyFactory() gateway.Factory {
	return gateway.Factory{
		Name: "quirky",
		Config: &gateway.ConfigSchema{Fields: []gateway.Field{
			{Name: "panic", Type: "boolean"}, {Name: "nil", Type: "boolean"}, {Name: "alias", Type: "boolean"},
		}},
		New: func(raw json.RawMessage) (gateway.Plugin, error) {
			var c struct{ Panic, Nil, Alias bool }
			if len(raw) > 0 {
				dec := json.NewDecoder(bytes.NewReader(raw))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&c); err != nil {
					return nil, fmt.Errorf("quirky config: %w", err)
				}
			}
			switch {
			case c.Panic:
				panic("quirky: asked to panic")
			case c.Nil:
				return nil, nil
			case c.Alias:
				return quirky{name: "someone-else"}, nil
			}
			return quirky{name: "quirky"}, nil
		},
	}
}

// buildApp is an App whose catalog and in-process plugins are abctl's own
// plus quirky.
func buildApp(out, errb *bytes.Buffer) *App {
	factories := func() []gateway.Factory { return append(PipelineFactories(), quirkyFactory()) }
	builtins := func() []catalog.Builtin {
		f := quirkyFactory()
		return append(Builtins(), catalog.Builtin{Name: "quirky", Pipeline: &f})
	}
	return &App{Out: out, Err: errb, Pipeline: factories, Catalog: catalog.Options{Builtin: builtins, CacheDir: "-"}}
}

// rejected is which entries of a chain a build or validation rejects for
// their config or their factory (P6, P2), by entry index.
type rejected map[int][]string

// buildRejects builds the chain at path with the runtime, as dryrun and
// replay do, and returns the entries it rejects.
func buildRejects(t *testing.T, path string, factories []gateway.Factory) rejected {
	t.Helper()
	ch, err := replay.LoadChain(context.Background(), path, gateway.Outbound, factories)
	if err == nil {
		ch.Close(context.Background())
		return rejected{}
	}
	var be *pipeline.BuildError
	if !errors.As(err, &be) {
		t.Fatalf("build: %v, want a *pipeline.BuildError", err)
	}
	out := rejected{}
	for _, re := range be.Errs {
		if re.Rule == "P6" || re.Rule == "P2" {
			out[re.Entry] = append(out[re.Entry], re.Msg)
		}
	}
	return out
}

// validateRejects runs `abctl chain validate -o json` on path and returns
// the entries with P6 or P2 findings, each finding placed in the entry
// whose lines hold it.
func validateRejects(t *testing.T, path string) (rejected, []catalog.Finding) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), buildApp(&out, &errb), []string{"chain", "validate", path, "-o", "json"})
	var rep struct{ Findings []catalog.Finding }
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("validate exit %d: %v; stdout %q stderr %q", code, err, out.String(), errb.String())
	}
	if (code == ExitFindings) != (len(rep.Findings) > 0) || (code != ExitOK && code != ExitFindings) {
		t.Fatalf("validate exit %d with %d findings; stderr %q", code, len(rep.Findings), errb.String())
	}
	cf, err := catalog.ReadChainFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := rejected{}
	for _, f := range rep.Findings {
		if f.Rule != "P6" && f.Rule != "P2" {
			t.Errorf("unexpected finding %s", f)
			continue
		}
		if f.Line == 0 || f.Column == 0 {
			t.Errorf("finding without line and column: %s", f)
		}
		entry := -1
		for i := range cf.Outbound {
			if l := cf.Line(fmt.Sprintf("$.outbound[%d]", i)); l > 0 && l <= f.Line {
				entry = i
			}
		}
		got[entry] = append(got[entry], f.Msg)
	}
	return got, rep.Findings
}

// withDeps returns the entries a chain needs before name so that the
// build's other checks pass: its requires and the first of its
// requires_any, transitively.
func withDeps(cat *catalog.Catalog, name string) []string {
	var out []string
	var add func(n string)
	add = func(n string) {
		d, ok := cat.Lookup(n)
		if !ok || d.Capabilities == nil {
			return
		}
		deps := slices.Clone(d.Capabilities.Requires)
		if len(d.Capabilities.RequiresAny) > 0 {
			deps = append(deps, d.Capabilities.RequiresAny[0])
		}
		for _, dep := range deps {
			if !slices.Contains(out, dep) {
				add(dep)
				out = append(out, dep)
			}
		}
	}
	add(name)
	return out
}

type configCase struct {
	name   string
	plugin string
	config any // nil: no config key
	hasCfg bool
}

// mutations derives bad configs from a schema: each field's name
// misspelt, a value of the wrong type, a value outside its enum, a
// required field left out, and a block that is not a mapping.
func mutations(plugin string, schema *gateway.ConfigSchema, base map[string]any) []configCase {
	var out []configCase
	with := func(name string, edit func(m map[string]any)) {
		m := maps.Clone(base)
		if m == nil {
			m = map[string]any{}
		}
		edit(m)
		out = append(out, configCase{name: plugin + "/" + name, plugin: plugin, config: m, hasCfg: true})
	}
	out = append(out, configCase{name: plugin + "/base", plugin: plugin, config: base, hasCfg: base != nil})
	for _, f := range schema.Fields {
		typo := f.Name[:len(f.Name)-1]
		with("typo "+f.Name, func(m map[string]any) {
			v, ok := m[f.Name]
			if !ok {
				v = gatewaySample(schema, f.Name)
			}
			delete(m, f.Name)
			m[typo] = v
		})
		var wrong any = "not-a-" + f.Type
		if f.Type == "string" || f.Type == "duration" {
			wrong = 7
		}
		with("wrong type "+f.Name, func(m map[string]any) { m[f.Name] = wrong })
		if len(f.Enum) > 0 {
			bad := f.Enum[0] + "x"
			var v any = bad
			if f.Type == "array" {
				v = []any{bad}
			}
			with("enum "+f.Name, func(m map[string]any) { m[f.Name] = v })
		}
		if f.Required {
			with("missing "+f.Name, func(m map[string]any) { delete(m, f.Name) })
			out = append(out, configCase{name: plugin + "/no config block", plugin: plugin})
		}
	}
	out = append(out,
		configCase{name: plugin + "/scalar block", plugin: plugin, config: "text", hasCfg: true},
		configCase{name: plugin + "/list block", plugin: plugin, config: []any{1}, hasCfg: true})
	return out
}

func gatewaySample(s *gateway.ConfigSchema, field string) any {
	var m map[string]any
	_ = json.Unmarshal(s.Sample(), &m)
	return m[field]
}

// TestValidateRejectsWhatBuildRejects walks the config rejections the
// runtime's build can make — every schema violation of every in-process
// plugin with a config schema, the plugins' own checks, a config given to
// a plugin that takes none, and a factory that panics, returns nothing or
// returns a misnamed instance — and shows that `abctl chain validate`
// rejects the same entries, and accepts what the build accepts, with
// file:line:column.
func TestValidateRejectsWhatBuildRejects(t *testing.T) {
	var cases []configCase
	factories := append(PipelineFactories(), quirkyFactory())
	for _, f := range factories {
		if f.Config == nil {
			continue
		}
		var base map[string]any
		for _, c := range gateway.ProbeConfigs(f.Config) {
			if _, err := f.New(c); err == nil {
				if c != nil {
					_ = json.Unmarshal(c, &base)
				}
				break
			}
		}
		cases = append(cases, mutations(f.Name, f.Config, base)...)
	}
	// What only the plugins themselves (or the runtime) know.
	cases = append(cases,
		configCase{"guardrail/no rules", "guardrail", map[string]any{"check": "response"}, true},
		configCase{"guardrail/status out of range", "guardrail", map[string]any{"phrases": []any{"x"}, "status": 700}, true},
		configCase{"guardrail/negative window", "guardrail", map[string]any{"phrases": []any{"x"}, "window": -1}, true},
		configCase{"guardrail/bad regex", "guardrail", map[string]any{"patterns": []any{"("}}, true},
		configCase{"tool-allowlist/empty name", "tool-allowlist", map[string]any{"allow": []any{"search", " "}}, true},
		configCase{"rate-limiter/bad duration", "rate-limiter", map[string]any{"limit": 1, "window": "soon"}, true},
		configCase{"mcp-parser/config to a plugin that takes none", "mcp-parser", map[string]any{"x": 1}, true},
		configCase{"quirky/panics", "quirky", map[string]any{"panic": true}, true},
		configCase{"quirky/no instance", "quirky", map[string]any{"nil": true}, true},
		configCase{"quirky/misnamed instance", "quirky", map[string]any{"alias": true}, true},
	)

	var out, errb bytes.Buffer
	cat, err := catalog.Load(context.Background(), []string{"builtin"}, buildApp(&out, &errb).Catalog)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rejections := 0
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var entries []map[string]any
			for _, d := range withDeps(cat, tc.plugin) {
				entries = append(entries, map[string]any{"name": d})
			}
			target := map[string]any{"name": tc.plugin}
			if tc.hasCfg {
				target["config"] = tc.config
			}
			entries = append(entries, target)
			data, err := yaml.Marshal(map[string]any{"outbound": entries})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, fmt.Sprintf("c%d.yaml", i))
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			built := buildRejects(t, path, factories)
			validated, findings := validateRejects(t, path)
			if !slices.Equal(slices.Sorted(maps.Keys(built)), slices.Sorted(maps.Keys(validated))) {
				t.Fatalf("chain:\n%s\nthe build rejects entries %v, validate %v\nbuild: %v\nvalidate: %v", data, slices.Sorted(maps.Keys(built)), slices.Sorted(maps.Keys(validated)), built, findings)
			}
			if len(built) > 0 {
				rejections++
			}
			// Where the runtime's own message is all there is (a plugin's
			// own check, a broken factory), validate quotes it.
			for e, msgs := range built {
				for _, m := range msgs {
					if strings.Contains(m, "config rejected") && !strings.Contains(strings.Join(validated[e], "\n"), "config") {
						t.Errorf("build says %q; validate says %q", m, validated[e])
					}
				}
			}
		})
	}
	if rejections < 30 {
		t.Errorf("only %d of %d cases were rejections; the walk is not exercising the build", rejections, len(cases))
	}
}

// TestValidateConfigFindings pins the findings of the examples:
// the offending key's line and column, and the nearest name.
func TestValidateConfigFindings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "chain.yaml")
	src := `inbound:
  - name: mcp-parser
  - name: guardrail
    config:
      phrases: [x]
      chek: response
outbound:
  - name: mcp-parser
  - name: guardrail
    config:
      phrases: [x]
      check: respnse
  - name: tool-allowlist
    config:
      allow: search
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, false, nil, "chain", "validate", path)
	if r.code != ExitFindings {
		t.Fatalf("exit %d, want 1; stderr %s", r.code, r.err)
	}
	for _, want := range []string{
		path + ":6:7\tP6\tguardrail\tinbound chain: config: unknown field \"chek\"\tdid you mean \"check\"?",
		path + ":12:7\tP6\tguardrail\toutbound chain: config: field \"check\": \"respnse\" is not one of request, response, both\tdid you mean \"response\"?",
		path + ":15:7\tP6\ttool-allowlist\toutbound chain: config: field \"allow\": want a list, got \"search\"",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
}

// TestValidateEmptyChain: an empty file is a finding; /dev/null is not ok.
func TestValidateEmptyChain(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, false, nil, "chain", "validate", empty)
	if r.code != ExitFindings || !strings.Contains(r.out, "C3") || !strings.Contains(r.out, "names no plugin") {
		t.Errorf("validate %s: exit %d, stdout %q; want exit 1 with a C3 finding", empty, r.code, r.out)
	}
	// /dev/null is refused before decoding (a device where a file is
	// expected, docs/limits.md): an error, never "ok".
	if _, err := os.Stat(os.DevNull); err == nil {
		r := run(t, false, nil, "chain", "validate", os.DevNull)
		if r.code == ExitOK || strings.Contains(r.err, "ok:") {
			t.Errorf("validate %s: exit %d, stderr %q; want a finding or an error", os.DevNull, r.code, r.err)
		}
	}
}

// TestValidateRunsBinaryFactory: a plugin from a dir: source is started
// and its factory run with the entry's config, so what only the plugin
// knows (a guardrail with no rules) is a finding, with abctl holding no
// in-process plugins at all.
func TestValidateRunsBinaryFactory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chain.yaml")
	src := "outbound:\n  - name: inference-parser\n  - name: guardrail\n    config:\n      check: response\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	app := &App{Out: &out, Err: &errb, Catalog: CatalogOptions(), Pipeline: func() []gateway.Factory { return nil }}
	app.Catalog.CacheDir = "-"
	code := Main(context.Background(), app, []string{"chain", "validate", "--source", "dir:" + binDir, path})
	want := path + ":4:5\tP6\tguardrail\toutbound chain: plugin \"guardrail\": config rejected: guardrail config: no rules"
	if code != ExitFindings || !strings.Contains(out.String(), want) {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s\nwant a line starting %q", code, out.String(), errb.String(), want)
	}
}

// TestEntryNumbersMatch: the number a dry-run's build error gives an entry
// is the number chain show lists it under (the entry's place in the file,
// off entries counted), and validate points at the same entry's line.
func TestEntryNumbersMatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chain.yaml")
	chain := "inbound:\n  - name: inference-parser\n  - name: pii-redactor\n    on_error: off\n  - name: guardrail\n"
	if err := os.WriteFile(path, []byte(chain), 0o644); err != nil {
		t.Fatal(err)
	}
	fx := "../../fixtures/inference/anthropic-refusal.fixture"
	r := run(t, false, nil, "dryrun", "--chain", path, "--direction", "inbound", fx)
	if r.code != 3 || !strings.Contains(r.err, "entry 3 (guardrail)") {
		t.Fatalf("dryrun: exit %d, stderr %q; want exit 3 naming entry 3 (guardrail)", r.code, r.err)
	}
	r = run(t, false, nil, "chain", "show", path)
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
		f := strings.Split(l, "\t")
		got = append(got, f[1]+" "+f[2])
	}
	if want := []string{"1 inference-parser", "2 pii-redactor", "3 guardrail"}; !slices.Equal(got, want) {
		t.Errorf("chain show numbers %q, want %q", got, want)
	}
	r = run(t, false, nil, "chain", "validate", path)
	if !strings.Contains(r.out, path+":5:5\tP6\tguardrail") {
		t.Errorf("validate does not point at entry 3's line 5:\n%s", r.out)
	}
}
