package conformance

import (
	"slices"
	"strings"

	"github.com/abkit/abkit/internal/pipeline"
)

// outputProtocols gives, for an extension key whose traffic the suite's
// own scenarios carry, those scenarios (rig.go): a plugin that declares it
// writes one of them parses that protocol, and must extract something
// from it. A key not listed here is of a protocol the suite has no
// traffic for; it is not checked.
func outputProtocols(key string) ([]string, bool) {
	switch key {
	case "inference":
		return []string{"chat", "cr-charset-comments", "chat-json"}, true
	case "mcp":
		return []string{"mcp", "multiline-unterminated", "mcp-json"}, true
	case "a2a":
		return []string{"a2a"}, true
	}
	return nil, false
}

// declaredOutputs are the keys of d's plugin that it declares it writes,
// not optionally, and that the suite has traffic for.
func declaredOutputs(d *Reported) []string {
	if d.Pipeline == nil {
		return nil
	}
	var out []string
	for _, x := range d.Pipeline.Capabilities.Extensions {
		if _, ok := outputProtocols(x.Key); ok && x.Writes && !x.Optional && !slices.Contains(out, x.Key) {
			out = append(out, x.Key)
		}
	}
	return out
}

// addOutputCases registers the case of the extensions a plugin declares it
// writes (X1).
func addOutputCases(r *Registry) {
	for _, c := range []*Case{
		{
			ID: "X1/outputs/written", Rules: []string{"X1"},
			Summary: "a plugin that declares it writes an extension writes a valid one on its protocol's traffic",
			Explain: `For every extension the plugin declares it writes (Capabilities.Extensions,
Writes and not Optional) whose protocol the suite has traffic for
(inference: the chat exchanges; mcp: the MCP exchanges; a2a: the A2A
stream), drives each exchange of that protocol through a fresh chain and
checks that at least one ends with the key set to a value the host
accepted (a value that breaks the declared schema is refused, X1, and
does not count).
A failure means a parser that parses nothing: its frame mapping misses
the protocol's events, or it writes under another key. Fix: run the
exchange named in the log through your parser's tests; if the plugin
writes the key only sometimes, declare it Optional.`,
			Applies: all(pipelineReady, needOutputs),
			Run:     x1OutputsWritten,
		},
	} {
		r.Add(c)
	}
}

func x1OutputsWritten(t *T) {
	byName := map[string]scenario{}
	for _, sc := range append(streamScenarios(), jsonScenarios()...) {
		byName[sc.name] = sc
	}
	for _, key := range declaredOutputs(t.Describe()) {
		var tried []string
		written := false
		names, _ := outputProtocols(key)
		for _, name := range names {
			sc := byName[name]
			rg := newRig(t, pipeline.Options{})
			o := rg.run(sc, nil, false)
			rg.checkHooks("X1", o, "on_request", "on_response", "on_response_frame")
			tried = append(tried, o.at)
			if v, ok := o.extensions[key]; ok && v != "null" {
				t.Logf("%s: %s = %s", o.at, key, v)
				written = true
			}
		}
		if !written {
			t.Errorf("X1", "the plugin declares it writes extension %q, but none of the %s exchanges the suite drives left a value there (%s); a parser that extracts nothing from its protocol's traffic, or a value its schema refused",
				key, protocolName(key), strings.Join(tried, "; "))
		}
	}
}

func protocolName(key string) string {
	switch key {
	case "inference":
		return "chat completion"
	case "mcp":
		return "MCP"
	case "a2a":
		return "A2A"
	}
	return key
}

func needOutputs(d *Reported) string {
	if len(declaredOutputs(d)) == 0 {
		return "the plugin declares no written extension of a protocol the suite has traffic for (inference, mcp, a2a)"
	}
	return ""
}
