package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk/gateway"
)

const inferenceSchema = `{"type":"object","required":["model"],"properties":{"model":{"type":"string"}}}`

func writerCaps(key, schema string) gateway.Capabilities {
	return gateway.Capabilities{Description: "writes " + key,
		Extensions: []gateway.ExtensionSpec{{Key: key, Writes: true, Schema: json.RawMessage(schema)}}}
}

func readerCaps(key string, optional bool) gateway.Capabilities {
	return gateway.Capabilities{Description: "reads " + key,
		Extensions: []gateway.ExtensionSpec{{Key: key, Reads: true, Optional: optional}}}
}

// TestBuild_P5Warns: a description that breaks P5 (81 runes) is reported,
// not refused: the source states the limit but never enforces it.
func TestBuild_P5Warns(t *testing.T) {
	f := &fake{name: "long", log: &recLog{}, caps: gateway.Capabilities{Description: strings.Repeat("é", 81)}}
	c := buildFakes(t, Options{}, f)
	ws := c.Warnings()
	if len(ws) != 1 || ws[0].Rule != "P5" || !ws[0].Warning || !strings.Contains(ws[0].Error(), "81 characters") {
		t.Fatalf("Warnings = %v, want one P5 warning about 81 characters", ws)
	}
	res := c.Run(context.Background(), Request{Request: gateway.Request{Method: "GET", URL: "/"}}, Upstream{Status: 200}, ExchangeOptions{})
	if res.Outcome.Kind != gateway.OutcomeAllow {
		t.Errorf("outcome %v, want allow", res.Outcome)
	}
	// Validate still reports it, as a warning, for lint and chain validate.
	errs := Validate(Spec{Entries: []Entry{{Plugin: "long"}}}, func(string) (Info, bool) {
		return Info{Name: "long", Capabilities: f.caps}, true
	}, []string{"long"})
	if len(errs) != 1 || !errs[0].Warning || len(Refusals(errs)) != 0 {
		t.Errorf("Validate = %v, want one warning and no refusal", errs)
	}
}

// TestValidate_X2: a reader needs a writer of its key before it, unless
// the read is optional or an earlier plugin's capabilities are unknown.
func TestValidate_X2(t *testing.T) {
	infos := map[string]Info{
		"parser":   {Name: "parser", Capabilities: writerCaps("inference", inferenceSchema)},
		"reader":   {Name: "reader", Capabilities: readerCaps("inference", false)},
		"optional": {Name: "optional", Capabilities: readerCaps("inference", true)},
		"unknown":  {Name: "unknown", NoCapabilities: true},
		"other":    {Name: "other", Capabilities: writerCaps("inference", `{"type":"string"}`)},
	}
	lookup := func(n string) (Info, bool) { i, ok := infos[n]; return i, ok }
	for _, tc := range []struct {
		name  string
		chain []string
		want  []string // substrings of the findings, in order
	}{
		{"writer before", []string{"parser", "reader"}, nil},
		{"no writer", []string{"reader"}, []string{`X2: entry 1 (reader): plugin "reader" reads extension "inference", which no plugin before it writes`}},
		{"writer after", []string{"reader", "parser"}, []string{`"parser" (entry 2) writes it, but stands after it; fix: move the writer`}},
		{"optional", []string{"optional"}, nil},
		{"unknown before", []string{"unknown", "reader"}, nil},
		{"two schemas", []string{"parser", "other", "reader"}, []string{`X1: entry 2 (other): plugins "parser" (entry 1) and "other" (entry 2) both write extension "inference" with different schemas`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var spec Spec
			for _, n := range tc.chain {
				spec.Entries = append(spec.Entries, Entry{Plugin: n})
			}
			errs := Validate(spec, lookup, nil)
			if len(errs) != len(tc.want) {
				t.Fatalf("Validate = %v, want %d finding(s)", errs, len(tc.want))
			}
			for i, e := range errs {
				if !e.Warning || !strings.Contains(e.Error(), tc.want[i]) {
					t.Errorf("finding %d = %q (warning %v), want a warning containing %q", i, e.Error(), e.Warning, tc.want[i])
				}
			}
		})
	}
}

// TestExchange_X1Refused: a value that breaks its writer's schema is
// refused (the key keeps its previous value, here none), reported with the
// plugin and key in the warnings and in the trace; a valid value stands.
func TestExchange_X1Refused(t *testing.T) {
	var seen []string
	parser := &fake{name: "parser", log: &recLog{}, caps: writerCaps("inference", inferenceSchema),
		req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
			ex.SetExtension("inference", map[string]any{"model": 7}) // a number: breaks the schema
			return gateway.Continue()
		}}
	good := &fake{name: "good", log: &recLog{}, caps: gateway.Capabilities{Description: "writes a tag",
		Extensions: []gateway.ExtensionSpec{{Key: "tag", Writes: true}}},
		req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
			ex.SetExtension("tag", "t")
			ex.SetExtension("stray", 1) // undeclared: kept, reported
			return gateway.Continue()
		}}
	reader := &fake{name: "reader", log: &recLog{}, caps: readerCaps("inference", true),
		req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
			_, ok := ex.Extension("inference")
			_, tag := ex.Extension("tag")
			seen = append(seen, map[bool]string{true: "inference", false: "none"}[ok], map[bool]string{true: "tag", false: "no tag"}[tag])
			return gateway.Continue()
		}}
	c := buildFakes(t, Options{}, parser, good, reader)
	rec := trace.NewRecorder().WithoutDurations()
	res := c.Run(context.Background(), Request{Request: gateway.Request{Method: "POST", URL: "/v1/chat"}}, Upstream{Status: 200}, ExchangeOptions{Trace: rec})
	if strings.Join(seen, ",") != "none,tag" {
		t.Errorf("reader saw %v, want the refused value gone and the valid one there", seen)
	}
	var x1 []string
	for _, w := range res.Warnings {
		if w.Rule == "X1" {
			x1 = append(x1, w.String())
		}
	}
	if len(x1) != 2 || !strings.Contains(x1[0], `plugin "parser": extension "inference" refused`) || !strings.Contains(x1[0], "at /model") ||
		!strings.Contains(x1[1], `plugin "good": writes extension "stray", which it does not declare`) {
		t.Errorf("X1 warnings = %q", x1)
	}
	evs := rec.Events()
	if len(evs) < 2 || len(evs[0].Extensions) != 1 || evs[0].Extensions[0].Key != "inference" || !strings.Contains(evs[0].Extensions[0].Refused, "at /model") {
		t.Fatalf("parser's event extensions = %+v, want the refused inference value", evs[0].Extensions)
	}
	if got := evs[1].Extensions; len(got) != 2 || got[0].Key != "tag" || string(got[0].Value) != `"t"` || got[1].Key != "stray" {
		t.Errorf("good's event extensions = %+v", got)
	}
	if len(evs[2].Extensions) != 0 {
		t.Errorf("reader changed nothing, its event shows %+v", evs[2].Extensions)
	}
}

// TestExchange_ExtensionRemovedInTrace: a deleted key shows as removed at
// the step that deleted it; credentials in values are redacted.
func TestExchange_ExtensionRemovedInTrace(t *testing.T) {
	setter := &fake{name: "setter", log: &recLog{}, req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
		ex.SetExtension("auth", map[string]string{"authorization": "Bearer abcdefghijklmnopqrstuvwxyz0123456789"})
		return gateway.Continue()
	}}
	var after bool
	remover := &fake{name: "remover", log: &recLog{}, req: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
		ex.DeleteExtension("auth")
		ex.DeleteExtension("never-set") // nothing to delete: no change
		return gateway.Continue()
	}, resp: func(_ context.Context, ex *gateway.Exchange) gateway.Action {
		_, after = ex.Extension("auth")
		return gateway.Continue()
	}}
	c := buildFakes(t, Options{}, setter, remover)
	rec := trace.NewRecorder().WithoutDurations()
	c.Run(context.Background(), Request{Request: gateway.Request{Method: "GET", URL: "/"}}, Upstream{Status: 200}, ExchangeOptions{Trace: rec})
	if after {
		t.Error("the deleted extension is back in OnResponse")
	}
	evs := rec.Events()
	if v := string(evs[0].Extensions[0].Value); strings.Contains(v, "abcdefghij") || !strings.Contains(v, "REDACTED") {
		t.Errorf("setter's value in the trace = %s, want the credential redacted", v)
	}
	if got := evs[1].Extensions; len(got) != 1 || got[0].Key != "auth" || !got[0].Removed || got[0].Value != nil {
		t.Errorf("remover's event extensions = %+v, want auth removed", got)
	}
	b := evs[1].AppendJSON(nil)
	m, _ := json.Marshal(evs[1])
	if string(b) != string(m) {
		t.Errorf("AppendJSON = %s\nMarshal    = %s", b, m)
	}
}

// TestBuild_X1SchemaDoesNotCompile: a broken schema is a warning, and the
// plugin's values for that key go unchecked.
func TestBuild_X1SchemaDoesNotCompile(t *testing.T) {
	f := &fake{name: "bad", log: &recLog{}, caps: writerCaps("k", `{"type":"strin"}`)}
	c := buildFakes(t, Options{}, f)
	ws := c.Warnings()
	if len(ws) != 1 || ws[0].Rule != "X1" || !strings.Contains(ws[0].Msg, "does not compile") {
		t.Fatalf("Warnings = %v", ws)
	}
}
