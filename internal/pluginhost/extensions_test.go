package pluginhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
)

// extPlugin deletes an extension an earlier plugin set (plugin to host),
// sets one a later plugin deletes and reports in OnResponse whether it
// still sees it (host to plugin), and writes a value that breaks its
// declared schema, which the host refuses (X1) and so removes on the
// plugin's side too.
type extPlugin struct{}

func (extPlugin) Name() string { return "ext-remover" }
func (extPlugin) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Deletes and writes extensions for the removal tests",
		Extensions: []gateway.ExtensionSpec{
			{Key: "b", Writes: true},
			{Key: "typed", Writes: true, Schema: json.RawMessage(`{"type":"string"}`)},
			{Key: "seen", Writes: true},
		}}
}
func (extPlugin) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	ex.DeleteExtension("a")
	ex.SetExtension("b", "x")
	ex.SetExtension("typed", 5)
	return gateway.Continue()
}
func (extPlugin) OnResponse(_ context.Context, ex *gateway.Exchange) gateway.Action {
	_, b := ex.Extension("b")
	_, typed := ex.Extension("typed")
	ex.SetExtension("seen", fmt.Sprintf("b=%v typed=%v", b, typed))
	return gateway.Continue()
}

func serveExtensionHelper(mode string) bool {
	if mode != "ext-remover" {
		return false
	}
	sdk.Serve(sdk.Plugin{Name: "ext-remover", Description: "Deletes and writes extensions for the removal tests",
		Pipeline: &gateway.Factory{Name: "ext-remover", New: func(json.RawMessage) (gateway.Plugin, error) { return extPlugin{}, nil }}})
	return true
}

// hostPlugin is the in-process side: first sets "a", last checks what it
// sees and deletes "b".
type hostPlugin struct {
	name string
	req  func(ex *gateway.Exchange)
}

func (h hostPlugin) Name() string { return h.name }
func (h hostPlugin) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Sets or checks extensions around the plugin under test"}
}
func (h hostPlugin) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	h.req(ex)
	return gateway.Continue()
}
func (hostPlugin) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// TestExtensionRemovalAcrossBoundary: a deletion crosses the process
// boundary both ways, and a value the host refuses is gone on the plugin's
// side too, exactly as in process.
func TestExtensionRemovalAcrossBoundary(t *testing.T) {
	run := func(t *testing.T, f gateway.Factory) (after string, seen any, warnings []string) {
		first := gateway.Factory{Name: "first", New: func(json.RawMessage) (gateway.Plugin, error) {
			return hostPlugin{name: "first", req: func(ex *gateway.Exchange) { ex.SetExtension("a", 1) }}, nil
		}}
		last := gateway.Factory{Name: "last", New: func(json.RawMessage) (gateway.Plugin, error) {
			return hostPlugin{name: "last", req: func(ex *gateway.Exchange) {
				_, a := ex.Extension("a")
				_, b := ex.Extension("b")
				_, typed := ex.Extension("typed")
				after = fmt.Sprintf("a=%v b=%v typed=%v", a, b, typed)
				ex.DeleteExtension("b")
			}}, nil
		}}
		ch, err := pipeline.Build(pipeline.Spec{Entries: []pipeline.Entry{{Plugin: "first"}, {Plugin: f.Name}, {Plugin: "last"}}},
			[]gateway.Factory{first, f, last}, pipeline.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e := ch.NewExchange(pipeline.Request{Request: gateway.Request{Method: "GET", URL: "/"}}, pipeline.ExchangeOptions{})
		if e.Request(context.Background()) {
			e.Respond(context.Background(), pipeline.Upstream{Status: 200})
		}
		seen, _ = e.Gateway().Extension("seen")
		res := e.Finish()
		for _, w := range res.Warnings {
			warnings = append(warnings, w.String())
		}
		return after, seen, warnings
	}
	in := gateway.Factory{Name: "ext-remover", New: func(json.RawMessage) (gateway.Plugin, error) { return extPlugin{}, nil }}
	inAfter, inSeen, inWarn := run(t, in)
	p := loadMode(t, "ext-remover")
	out, _ := p.Factory()
	outAfter, outSeen, outWarn := run(t, out)

	const wantAfter = "a=false b=true typed=false"
	const wantSeen = "b=false typed=false"
	for _, r := range []struct {
		where string
		after string
		seen  any
		warn  []string
	}{{"in process", inAfter, inSeen, inWarn}, {"out of process", outAfter, outSeen, outWarn}} {
		if r.after != wantAfter {
			t.Errorf("%s: the later plugin saw %q, want %q", r.where, r.after, wantAfter)
		}
		if r.seen != wantSeen {
			t.Errorf("%s: the plugin saw %q in OnResponse, want %q", r.where, r.seen, wantSeen)
		}
		if len(r.warn) != 1 || !strings.Contains(r.warn[0], `X1: plugin "ext-remover": extension "typed" refused`) {
			t.Errorf("%s: warnings %q, want the X1 refusal of typed", r.where, r.warn)
		}
	}
	if !reflect.DeepEqual(inWarn, outWarn) {
		t.Errorf("warnings differ:\n in: %q\nout: %q", inWarn, outWarn)
	}
}
