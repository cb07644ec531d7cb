package examplerun_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/abkit/abkit/examples/plugins/a2aparser"
	"github.com/abkit/abkit/examples/plugins/inferenceparser"
	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/internal/replay/fixture"
	"github.com/abkit/abkit/internal/testbin"
	"github.com/abkit/abkit/sdk/gateway"
	"github.com/abkit/abkit/sdk/plugintest"
	"github.com/abkit/abkit/sdk/sse"
)

// externalCorpus is the folder of captures written by others (OpenAI,
// Anthropic, Gemini, MCP, A2A, LaunchDarkly's SSE contract cases, HAR
// exports), kept beside the checkout and never copied into it. Its
// manifest.json names each capture's source, protocol, parser and, for the
// SSE contract cases, the expected events.
func externalCorpus(t *testing.T) string {
	t.Helper()
	dir := testbin.ExternalCorpus(context.Background())
	if dir == "" {
		t.Skipf("no external captures on this machine (a clone without them; set %s): skipping the real-traffic walk", testbin.CorpusEnv)
	}
	return dir
}

type manifestCapture struct {
	ID             string `json:"id"`
	File           string `json:"file"`
	Kind           string `json:"kind"`
	Protocol       string `json:"protocol"`
	Parser         string `json:"parser"`
	Request        string `json:"request"`
	Note           string `json:"note"`
	ExpectedEvents []struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Data string `json:"data"`
	} `json:"expected_events"`
}

// TestExternalCaptures walks the manifest: every capture imports (or is
// refused for a documented reason), frames as WHATWG says, and its parser,
// alone among the three parsers, extracts what it holds.
func TestExternalCaptures(t *testing.T) {
	dir := externalCorpus(t)
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Captures []manifestCapture `json:"captures"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, c := range m.Captures {
		t.Run(c.ID, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(dir, c.File))
			if err != nil {
				t.Fatal(err)
			}
			var req *fixture.Request
			if c.Request != "" {
				rb, err := os.ReadFile(filepath.Join(dir, c.Request))
				if err != nil {
					t.Fatal(err)
				}
				r, err := fixture.ParseRequest(c.Request, rb)
				if err != nil {
					t.Fatal(err)
				}
				req = &r
			}
			switch c.Kind {
			case "har":
				checkHAR(t, c, body)
			case "sse":
				f, err := fixture.FromSSE("external "+c.ID, body, req)
				if err != nil {
					var nt *fixture.NotTextError
					if errors.As(err, &nt) && c.Protocol == "sse-contract" {
						// Binary bodies are refused at import (docs/fixtures.md);
						// framing is still checked below.
						t.Logf("refused at import as documented: %v", err)
					} else {
						t.Fatalf("import: %v", err)
					}
				} else {
					checkUnchanged(t, f, body)
				}
				if c.Protocol == "sse-contract" {
					checkFraming(t, c, body)
				}
			case "json":
				f, err := fixture.FromJSON("external "+c.ID, body, req)
				if err != nil {
					t.Fatalf("import: %v", err)
				}
				checkUnchanged(t, f, body)
			default:
				t.Fatalf("unknown kind %q", c.Kind)
			}
			if c.Parser != "" {
				checkParsers(t, c, body, req)
			}
		})
	}
}

// checkUnchanged: captures carry no credentials, so redaction must leave
// the body as the upstream sent it.
func checkUnchanged(t *testing.T, f *fixture.Fixture, body []byte) {
	t.Helper()
	if got := f.Response.BodyBytes(); string(got) != string(body) {
		t.Errorf("import changed the body (%d bytes, was %d); notes %q", len(got), len(body), f.Notes)
	}
}

func checkFraming(t *testing.T, c manifestCapture, body []byte) {
	t.Helper()
	var fr sse.Framer
	type ev struct{ typ, id, data string }
	var got []ev
	last := ""
	emit := func(raw []byte, isFrame bool) error {
		if !isFrame {
			return nil
		}
		e := sse.Parse(raw)
		if e.HasID {
			last = e.ID
		}
		if !e.HasData {
			return nil
		}
		typ := e.Event
		if typ == "" {
			typ = "message"
		}
		got = append(got, ev{typ, last, e.Data})
		return nil
	}
	if err := fr.Feed(body, emit); err != nil {
		t.Fatal(err)
	}
	// WHATWG: an unterminated last block is not dispatched (End emits it
	// with isFrame=false).
	if _, err := fr.End(emit); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(c.ExpectedEvents) {
		t.Fatalf("framed %d events, want %d: %+v", len(got), len(c.ExpectedEvents), got)
	}
	for i, w := range c.ExpectedEvents {
		if got[i] != (ev{w.Type, w.ID, w.Data}) {
			t.Errorf("event %d = %+v, want %+v", i, got[i], w)
		}
	}
}

func checkHAR(t *testing.T, c manifestCapture, body []byte) {
	t.Helper()
	fs, warns, err := fixture.ImportHAR(c.File, body)
	if err != nil {
		if strings.Contains(err.Error(), "log.entries is empty") {
			t.Logf("refused as documented: %v", err)
			return
		}
		t.Fatalf("HAR import: %v", err)
	}
	for _, w := range warns {
		t.Logf("warning: %s", w)
	}
	if len(fs) == 0 {
		t.Fatalf("no fixture imported; warnings %q", warns)
	}
	for i, f := range fs {
		if _, err := fixture.Marshal(f); err != nil {
			t.Errorf("fixture %d does not write: %v", i, err)
		}
	}
}

// checkParsers runs all three parsers in one chain over the capture, cut
// in 7-byte frames: the capture's parser stores a result with what the
// capture holds; the other two store nothing.
func checkParsers(t *testing.T, c manifestCapture, body []byte, req *fixture.Request) {
	t.Helper()
	ctx := context.Background()
	ip, _ := inferenceparser.Factory().New(nil)
	ap, _ := a2aparser.Factory().New(nil)
	mp, _ := mcpparser.Factory().New(nil)
	plugins := []gateway.Plugin{ip, ap, mp}
	method, url, ct := "POST", "https://upstream.invalid/", "application/json"
	var reqBody []byte
	if req != nil {
		method, url, reqBody = req.Method, req.URL, req.Body
	}
	if c.Kind == "sse" {
		ct = "text/event-stream"
	}
	r := plugintest.NewRun(method, url, reqBody)
	if req != nil {
		for k, v := range req.Header {
			r.Ex.Request.Header[k] = v
		}
	}
	r.Request(ctx, plugins...)
	r.Respond(http.StatusOK, ct)
	r.Frames(ctx, plugintest.Split(body, 7), plugins...)

	inf, infOK := inferenceparser.FromExchange(r.Ex)
	a2a, a2aOK := a2aparser.FromExchange(r.Ex)
	mcp, mcpOK := mcpparser.FromExchange(r.Ex)
	claims := map[string]bool{inferenceparser.Name: infOK, a2aparser.Name: a2aOK, mcpparser.Name: mcpOK}
	if c.Protocol == "sse-framing" {
		// A framing case in a protocol's clothes but not its messages
		// (JSON over several data: lines, no JSON-RPC): nobody claims it,
		// and the data lines join into one JSON document.
		for name, ok := range claims {
			if ok {
				t.Errorf("%s claimed a framing-only capture", name)
			}
		}
		var fr sse.Framer
		n := 0
		emit := func(raw []byte, isFrame bool) error {
			if ev := sse.Parse(raw); isFrame && ev.HasData {
				n++
				if !json.Valid([]byte(ev.Data)) {
					t.Errorf("data lines did not join into JSON: %q", ev.Data)
				}
			}
			return nil
		}
		fr.Feed(body, emit)
		fr.End(emit)
		if n == 0 {
			t.Error("no event framed")
		}
		return
	}
	for name, ok := range claims {
		if ok != (name == c.Parser) {
			t.Errorf("%s claimed=%v; only %s should claim %s traffic", name, ok, c.Parser, c.Protocol)
		}
	}
	if c.Kind == "sse" {
		checkDispatched(t, c, body, req, inf, infOK, a2aOK, mcpOK)
	}
	switch c.Parser {
	case inferenceparser.Name:
		if !infOK {
			return
		}
		if inf.Style == "" {
			t.Errorf("no style: %+v", inf)
		}
		if inf.Content == "" && inf.Reasoning == "" && inf.Refusal == "" && len(inf.StopDetails) == 0 &&
			len(inf.ToolCalls) == 0 && inf.Error == "" && len(inf.Choices) == 0 {
			t.Errorf("nothing extracted: %+v", inf)
		}
		if inf.Malformed > 0 && !strings.Contains(c.Note, "...") {
			t.Errorf("%d events counted malformed: %+v", inf.Malformed, inf)
		}
	case a2aparser.Name:
		if !a2aOK {
			return
		}
		if strings.Contains(c.Note, "data is just '{'") {
			// The spec's pretty-printed block: on the wire each event's data
			// is "{", which is not JSON. Counted, never fatal.
			if a2a.Malformed == 0 {
				t.Errorf("want the broken events counted malformed: %+v", a2a)
			}
			return
		}
		if a2a.State == "" && len(a2a.Messages) == 0 && len(a2a.Artifacts) == 0 && a2a.Error == nil {
			t.Errorf("nothing extracted: %+v", a2a)
		}
		if a2a.Malformed > 0 {
			t.Errorf("%d events counted malformed: %+v", a2a.Malformed, a2a)
		}
	case mcpparser.Name:
		if !mcpOK {
			return
		}
		if len(mcp.Responses) == 0 && len(mcp.ServerCalls) == 0 {
			t.Errorf("nothing extracted: %+v", mcp)
		}
		if mcp.Malformed > 0 {
			t.Errorf("%d events counted malformed: %+v", mcp.Malformed, mcp)
		}
	}
}

// checkDispatched: fed only the blocks the runtime dispatches (those with a
// data line; P19), the parsers store what they stored from the raw bytes.
// So what a parser reports from a capture is what it reports in a chain:
// nothing it says comes from a block the runtime never hands over (a
// Gemini error object outside any data: line).
func checkDispatched(t *testing.T, c manifestCapture, body []byte, req *fixture.Request, inf inferenceparser.Result, infOK, a2aOK, mcpOK bool) {
	t.Helper()
	var frames [][]byte
	emit := func(raw []byte, isFrame bool) error {
		if isFrame {
			frames = append(frames, append([]byte(nil), raw...))
		}
		return nil
	}
	var fr sse.Framer
	if err := fr.Feed(body, emit); err != nil {
		t.Fatal(err)
	}
	if _, err := fr.End(emit); err != nil {
		t.Fatal(err)
	}
	r := fixture.Request{Method: "POST", URL: "https://upstream.invalid/"}
	if req != nil {
		r = *req
	}
	inf2, infOK2, a2aOK2, mcpOK2 := runParsers(r, http.StatusOK, "text/event-stream", frames)
	if infOK2 != infOK || a2aOK2 != a2aOK || mcpOK2 != mcpOK {
		t.Errorf("claims from dispatched frames (inference %v, a2a %v, mcp %v) differ from the raw bytes' (%v, %v, %v)", infOK2, a2aOK2, mcpOK2, infOK, a2aOK, mcpOK)
	}
	inf.Request, inf2.Request = nil, nil
	if !reflect.DeepEqual(inf, inf2) {
		t.Errorf("inference-parser from dispatched frames:\n%+v\nfrom the raw bytes:\n%+v", inf2, inf)
	}
}
