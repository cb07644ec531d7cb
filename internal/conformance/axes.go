package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/abkit/abkit/internal/probe"
	"github.com/abkit/abkit/sdk/gateway"
)

// Axes: the ways the exchange cases vary what they drive, where the rule
// allows it (docs/conformance.md, "Axes"). A case checks its rule along
// them instead of with one configuration, one framing and one request
// shape; the budgets keep the whole plugin suite on one plugin within
// seconds.

// ConfigBudget is how many configurations the config axis tries at most.
const ConfigBudget = 12

// axisConfigs are the configurations schema yields, in order: none, the
// defaults, the sample (every field set), each enum value of each field,
// both values of each boolean, each bound of each bounded number, the sample without each optional
// field, and the author's examples. Duplicates are dropped; at most
// ConfigBudget are returned.
func axisConfigs(schema *gateway.ConfigSchema) []json.RawMessage {
	out := gateway.ProbeConfigs(schema)
	if schema != nil && len(schema.Fields) > 0 {
		var sample map[string]any
		if s := schema.Sample(); s != nil {
			_ = json.Unmarshal(s, &sample)
		}
		with := func(name string, v any) {
			m := map[string]any{}
			for k, x := range sample {
				m[k] = x
			}
			if v == nil {
				delete(m, name)
			} else {
				m[name] = v
			}
			if b, err := json.Marshal(m); err == nil {
				out = append(out, b)
			}
		}
		for _, f := range schema.Fields {
			for _, e := range f.Enum {
				switch f.Type {
				case "integer", "number":
					if n, err := strconv.ParseFloat(e, 64); err == nil {
						with(f.Name, n)
					}
				case "array":
					with(f.Name, []any{e})
				default:
					with(f.Name, e)
				}
			}
			if f.Type == "boolean" {
				with(f.Name, true)
				with(f.Name, false)
			}
			if f.Type == "integer" || f.Type == "number" {
				for _, b := range []*float64{f.Minimum, f.Maximum} {
					if b != nil {
						with(f.Name, *b)
					}
				}
			}
			if !f.Required {
				with(f.Name, nil)
			}
		}
		// Examples again at the end: ProbeConfigs put them before the
		// variations; deduplication keeps the first.
	}
	seen := map[string]bool{}
	var uniq []json.RawMessage
	for _, c := range out {
		k := string(c)
		if seen[k] {
			continue
		}
		seen[k] = true
		uniq = append(uniq, c)
		if len(uniq) == ConfigBudget {
			break
		}
	}
	return uniq
}

// instanceConfigs are the axis configurations f makes an instance with:
// the rest are refused by the plugin, which is its right (a value the
// schema allows may still be refused in combination).
func instanceConfigs(t *T, f *gateway.Factory) []json.RawMessage {
	var ok []json.RawMessage
	for _, cfg := range axisConfigs(f.Config) {
		if _, err := probe.New(f, cfg); err != nil {
			t.Logf("config axis: %s refused: %v", cfgLabel(cfg), err)
			continue
		}
		ok = append(ok, cfg)
	}
	return ok
}

// framing is one way of writing the same event stream.
type framing struct {
	name string
	// apply rewrites the SSE blocks of a stream (each ending in a blank
	// line, LF line ends) into this framing.
	apply func(events []string) []string
}

// framings are the SSE shapes real servers send (the WHATWG event-stream
// grammar): line ends, comments, fields other than data, data split over
// lines, empty data, long frames and a byte order mark.
func framings() []framing {
	lineEnds := func(nl string) func([]string) []string {
		return func(ev []string) []string {
			out := make([]string, len(ev))
			for i, e := range ev {
				out[i] = strings.ReplaceAll(normaliseLF(e), "\n", nl)
			}
			return out
		}
	}
	return []framing{
		{"lf", lineEnds("\n")},
		{"crlf", lineEnds("\r\n")},
		{"cr", lineEnds("\r")},
		{"comments", func(ev []string) []string {
			out := []string{": opened\n\n"}
			for _, e := range ev {
				out = append(out, ": ping\n"+normaliseLF(e))
			}
			return out
		}},
		{"fields", func(ev []string) []string {
			out := []string{"retry: 2500\n\n"}
			for i, e := range ev {
				out = append(out, fmt.Sprintf("event: message\nid: %d\n%s", i+1, normaliseLF(e)))
			}
			return out
		}},
		{"multi-line-data", func(ev []string) []string {
			out := make([]string, len(ev))
			for i, e := range ev {
				out[i] = splitData(normaliseLF(e))
			}
			return out
		}},
		{"empty-data", func(ev []string) []string {
			out := []string{"data:\n\n"}
			for _, e := range ev {
				out = append(out, normaliseLF(e), "data\n\n")
			}
			return out
		}},
		{"long-frame", func(ev []string) []string {
			// A 64 KiB comment line inside the first event: one frame far
			// beyond a typical read buffer.
			out := slices.Clone(ev)
			if len(out) > 0 {
				out[0] = ": " + strings.Repeat("x", 64<<10) + "\n" + normaliseLF(out[0])
			}
			return out
		}},
		{"bom", func(ev []string) []string {
			out := slices.Clone(ev)
			if len(out) > 0 {
				out[0] = "\uFEFF" + normaliseLF(out[0])
			}
			return out
		}},
	}
}

func normaliseLF(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// splitData splits each data line of a block whose value is a JSON object
// after its first comma into two data lines; the receiver joins them with
// a line feed, which JSON reads as white space.
func splitData(block string) string {
	lines := strings.Split(block, "\n")
	var out []string
	for _, l := range lines {
		v, ok := strings.CutPrefix(l, "data: ")
		if i := strings.Index(v, ","); ok && strings.HasPrefix(v, "{") && i > 0 {
			out = append(out, "data: "+v[:i+1], "data: "+v[i+1:])
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// alongFramings is sc written in every framing (sc must be streamed).
func alongFramings(sc scenario) []scenario {
	var out []scenario
	for _, f := range framings() {
		s := sc
		s.events = f.apply(sc.events)
		s.name = sc.name + "/" + f.name
		out = append(out, s)
	}
	return out
}

// requestShapes are the request and upstream shapes real traffic has:
// every HTTP method, bodies present and absent, upstream statuses across
// 1xx–5xx, and the request headers a gateway sees (Content-Length,
// Origin, Authorization).
func requestShapes() []scenario {
	var out []scenario
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions, http.MethodTrace} {
		sc := scenario{name: "method-" + strings.ToLower(m), method: m, url: "/v1/resources/1?verbose=1", status: 200, respType: "application/json", respBody: `{"ok":true}`}
		if m == http.MethodPost || m == http.MethodPut || m == http.MethodPatch {
			sc.reqType, sc.reqBody = "application/json", `{"name":"conformance"}`
		}
		if m == http.MethodHead {
			sc.respBody = ""
		}
		out = append(out, sc)
	}
	out = append(out,
		scenario{name: "post-no-body", method: "POST", url: "/v1/chat/completions", reqType: "application/json", status: 200, respType: "application/json", respBody: `{"choices":[]}`},
		scenario{name: "empty-response", method: "POST", url: "/v1/chat/completions", reqType: "application/json", reqBody: `{"model":"gpt-4o","messages":[]}`, status: 200, respType: "application/json"},
		scenario{name: "empty-stream", method: "POST", url: "/v1/chat/completions", reqType: "application/json", reqBody: chatReq, status: 200, respType: "text/event-stream", events: []string{}},
		scenario{name: "headers", method: "POST", url: "/v1/chat/completions", reqType: "application/json", reqBody: `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`,
			reqHeader: http.Header{"Content-Length": {"62"}, "Origin": {"https://app.example.com"}, "Authorization": {"Bearer conformance-token"}},
			status:    200, respType: "application/json", respBody: `{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}]}`},
	)
	for _, st := range []int{101, 103, 204, 301, 304, 400, 401, 404, 429, 500, 502, 503} {
		sc := scenario{name: fmt.Sprintf("upstream-%d", st), method: "POST", url: "/v1/chat/completions", reqType: "application/json",
			reqBody: `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`, status: st, respType: "application/json", respBody: fmt.Sprintf(`{"error":{"code":%d}}`, st)}
		if st < 200 || st == 204 || st == 304 {
			sc.respType, sc.respBody = "", ""
		}
		out = append(out, sc)
	}
	return out
}

// exchangeAxis is what the exchange cases drive: the standard exchanges,
// then the request shapes.
func exchangeAxis() []scenario {
	return append(append(jsonScenarios(), streamScenarios()...), requestShapes()...)
}

// LongRun is how many exchanges the long-run case drives on one instance.
const LongRun = 300

// LongRunBudget bounds the long run's time.
const LongRunBudget = 4 * time.Second
