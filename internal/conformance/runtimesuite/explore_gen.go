package runtimesuite

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Generate makes scenario index of the exploration seeded with seed, for a
// runtime hosting families (P, D, H): the same seed and index always give
// the same scenario. What it draws from: chains of 1–20 probe plugins with
// random capabilities and behaviours, scripted to continue, reject, fail,
// panic, hang, be slow, write bodies and headers, set state and identity,
// or cancel, at any hook (Init, Ready, Shutdown and the closing frame
// call included); repeated and case-variant names; every on_error value;
// configs with and without schemas; exchanges of every method with and
// without bodies, JSON and event-stream answers in random framings and
// chunkings, early ends, upstream errors, cancelled clients, finishing
// twice; dispatches at every point through extensions of random
// priorities, slots, decisions, replacements and timeouts; hook chains of
// random orders, policies and outcomes.
func Generate(seed uint64, index int, families []string) *XScenario {
	r := rand.New(rand.NewPCG(seed, uint64(index)))
	g := gen{r: r}
	x := &XScenario{Seed: seed, Index: index}
	// Family P is the richest: it gets half the scenarios when hosted,
	// the other families share the rest.
	var others []string
	for _, f := range families {
		if f != "P" {
			others = append(others, f)
		}
	}
	fam := "P"
	if len(others) > 0 && (!has(families, "P") || r.IntN(2) == 0) {
		fam = others[r.IntN(len(others))]
	}
	switch fam {
	case "P":
		x.Pipeline = g.pipeline()
	case "D":
		x.Intercept = g.intercept()
	default:
		x.Hooks = g.hooks()
	}
	return x
}

func has(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

type gen struct{ r *rand.Rand }

func (g gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g gen) chance(n int) bool        { return g.r.IntN(n) == 0 }

func (g gen) pipeline() *XPipeline {
	p := &XPipeline{}
	n := 1 + g.r.IntN(4)
	if g.chance(6) {
		n = 1 + g.r.IntN(20)
	}
	// Most chains are valid, so that their exchanges run; one in four has
	// one misconfiguration of the build rules (P1, P6-P10).
	fault := ""
	if g.chance(4) {
		fault = g.pick("ghost", "on-error", "repeated", "config", "mode", "writers", "requires", "reader-after-writer")
	}
	for i := range n {
		pl := XPlugin{Name: fmt.Sprintf("p%d", i)}
		if g.chance(12) && i > 0 {
			pl.Name = strings.ToUpper(p.Plugins[g.r.IntN(i)].Name) // a case variant of an earlier name
		}
		if has(pluginNames(p), pl.Name) {
			pl.Name = fmt.Sprintf("p%d", i)
		}
		for _, b := range []string{"finish", "stream", "init", "shutdown", "ready"} {
			if g.chance(2) {
				pl.Behaviours = append(pl.Behaviours, b)
			}
		}
		pl.ReadsBody = g.chance(3)
		if i == n-1 && g.chance(4) {
			// The one writer of a valid chain is its last plugin: no
			// reader comes after it (P9).
			pl.WritesRequestBody, pl.WritesResponseBody = g.chance(2), g.chance(2)
		}
		if g.chance(15) && i > 0 {
			pl.Requires = []string{p.Plugins[g.r.IntN(i)].Name}
		}
		pl.Schema = g.chance(5)
		for range g.r.IntN(3) {
			pl.Acts = append(pl.Acts, g.act(pl))
		}
		p.Plugins = append(p.Plugins, pl)
	}
	for _, pl := range p.Plugins {
		e := XEntry{Plugin: pl.Name}
		if g.chance(4) {
			e.OnError = g.pick("enforce", "observe", "off", "")
		}
		if pl.Schema && g.chance(2) {
			e.Config = g.pick(`{"x":1}`, `null`, `{}`)
		}
		p.Entries = append(p.Entries, e)
	}
	k := g.r.IntN(n)
	switch fault {
	case "ghost":
		p.Entries = append(p.Entries, XEntry{Plugin: "ghost"})
	case "on-error":
		p.Entries[k].OnError = "ignore"
	case "repeated":
		p.Entries = append(p.Entries, XEntry{Plugin: p.Plugins[k].Name})
	case "config":
		p.Plugins[k].Schema, p.Entries[k].Config = false, `{"x":1}`
	case "mode":
		p.Mode = "sideways"
	case "writers":
		p.Plugins[k].WritesResponseBody = true
		p.Plugins[n-1].WritesResponseBody = true
	case "requires":
		p.Plugins[k].Requires = []string{"absent"}
	case "reader-after-writer":
		p.Plugins[0].WritesResponseBody = true
		p.Plugins[n-1].ReadsBody = true
	}
	if p.Mode == "" && g.chance(20) {
		p.Mode = "waypoint" // with a body writer, a build error (P10)
	}
	if g.chance(3) {
		p.FinishTimeoutMs = 100 + g.r.IntN(400)
	}
	p.Start = g.chance(3)
	p.Stop = p.Start && g.chance(2)
	if g.chance(4) {
		p.Ready = 1
	}
	ne := 1 + g.r.IntN(3)
	for range ne {
		p.Exchanges = append(p.Exchanges, g.exchange())
	}
	return p
}

func pluginNames(p *XPipeline) []string {
	var out []string
	for _, pl := range p.Plugins {
		out = append(out, pl.Name)
	}
	return out
}

func (g gen) act(pl XPlugin) XAct {
	hooks := []string{"request", "request", "response"}
	for _, b := range pl.Behaviours {
		switch b {
		case "stream":
			hooks = append(hooks, "frame", "last")
		case "init", "shutdown", "ready", "finish":
			hooks = append(hooks, b)
		}
	}
	a := XAct{Hook: g.pick(hooks...), Exchange: -1, Frame: -1}
	if g.chance(2) {
		a.Exchange = g.r.IntN(3)
	}
	if a.Hook == "frame" && g.chance(2) {
		a.Frame = g.r.IntN(3)
	}
	dos := []string{"reject", "error", "panic", "slow", "write-body", "header", "state", "identity"}
	switch a.Hook {
	case "request":
		dos = append(dos, "cancel")
	case "finish":
		dos = []string{"error", "panic", "slow", "hang", "write-body", "state"}
	case "init", "ready", "shutdown":
		dos = []string{"error", "panic", "slow"}
	}
	a.Do = g.pick(dos...)
	switch a.Do {
	case "reject":
		a.Status = []int32{403, 451, 400, 599, 200, 600, 0}[g.r.IntN(7)]
	case "write-body":
		a.Body = g.pick("new body", `{"w":1}`, "")
	case "header":
		a.Body = g.pick("v1", "v2")
	}
	return a
}

// sseEvents are event-stream blocks in the framings real streams use.
var sseEvents = []string{
	"data: {\"n\":1}\n\n", "data: a\r\n\r\n", "data: b\r\r", ": ping\n\n", "event: e\nid: 7\ndata: x\n\n",
	"data: a\ndata: b\n\n", "retry: 5\n\n", "data\n\n", "\n\n", "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n",
}

func (g gen) exchange() XExchange {
	x := XExchange{Method: g.pick("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")}
	if x.Method != "GET" && x.Method != "HEAD" && g.chance(2) {
		b := g.pick(`{"q":1}`, "hello", "")
		x.Body = &b
	}
	if g.chance(3) {
		x.Header = append(x.Header, "X-Client: c"+fmt.Sprint(g.r.IntN(3)))
	}
	switch g.r.IntN(6) {
	case 0:
		x.Upstream = "error"
	case 1, 2, 3:
		x.Upstream = "sse"
		var body string
		for range g.r.IntN(5) {
			body += g.pick(sseEvents...)
		}
		if g.chance(8) {
			body += "data: unterminated"
		}
		if g.chance(10) {
			body = "\xef\xbb\xbf" + body
		}
		x.Chunks = g.chunks(body)
		x.EarlyEnd = g.chance(6)
	default:
		x.Upstream = "json"
		x.JSON = g.pick(`{}`, `{"ok":true}`, `{"a":[1,2]}`)
		if g.chance(6) {
			x.Status = []int32{201, 204, 400, 404, 500, 503}[g.r.IntN(6)]
		}
	}
	x.Cancelled = g.chance(15)
	x.FinishTwice = g.chance(15)
	return x
}

// chunks cuts body at random places (CRLFs and multi-byte runes too).
func (g gen) chunks(body string) []string {
	if body == "" {
		return []string{""}
	}
	var out []string
	for len(body) > 0 {
		n := 1 + g.r.IntN(len(body))
		if g.chance(3) {
			n = len(body)
		}
		out = append(out, body[:n])
		body = body[n:]
	}
	return out
}

// decisionPoints are the request points and a valid payload of each, and
// the event-only ones.
func (g gen) intercept() *XIntercept {
	d := &XIntercept{}
	if g.chance(6) {
		e := events[g.r.IntN(len(events))]
		d.Point, d.Payload = e.point, e.payload
	} else {
		p := payloads[g.r.IntN(len(payloads))]
		d.Point, d.Payload = p.point, p.payload
	}
	if g.chance(30) {
		d.Point = "no.such_point"
	}
	if d.Point == "provider.request" && g.chance(2) {
		d.Provider = "openai/gpt-4o"
	}
	slots := map[string][]string{"context.prepare": {"context"}, "permission.decision": {"permission"}, "tool.before": {"tool:t"},
		"provider.request": {"provider_request", "provider:openai/gpt-4o"}, "session.start": {"session_policy"}}
	n := 1 + g.r.IntN(5)
	for i := range n {
		e := XExt{ID: fmt.Sprintf("e%d", i), Priority: int32(g.r.IntN(5) - 2)}
		if g.chance(6) && i > 0 {
			e.ID = d.Extensions[g.r.IntN(i)].ID // a second registration of an ID
		}
		if g.chance(20) {
			e.ID = "" // nameless
		}
		e.Required = g.chance(3)
		if s := slots[d.Point]; len(s) > 0 && g.chance(2) {
			e.Slots = []string{s[g.r.IntN(len(s))]}
			e.Points = []string{}
		}
		e.Decision = g.pick("continue", "continue", "block", "replace", "allow", "deny", "bogus", "error", "hang")
		if e.Decision == "replace" {
			e.Replacement = g.replacement(d.Point)
		}
		if e.Decision == "hang" {
			e.TimeoutMs = 50
		}
		e.NotifyError = g.chance(8)
		d.Extensions = append(d.Extensions, e)
	}
	return d
}

func (g gen) replacement(point string) string {
	if g.chance(5) {
		return `{"nope":1}`
	}
	for _, p := range payloads {
		if p.point == point {
			return p.replacement
		}
	}
	return `{}`
}

func (g gen) hooks() *XHooks {
	h := &XHooks{}
	switch g.r.IntN(4) {
	case 0:
		h.Kind, h.Input = "submit", `{"model":"m"}`
	case 1:
		h.Kind, h.Input = "request_part", `{"index":0,"type":"message","data":{"x":1}}`
	case 2:
		h.Kind, h.Input = "response_part", `{"index":0,"type":"message","data":{"x":1}}`
	default:
		h.Kind, h.Input = "tool", `{"phase":"start","call_id":"c","name":"t"}`
		h.Policy = g.pick("", "fail-open", "fail-closed", "swallow")
	}
	n := 1 + g.r.IntN(5)
	for i := range n {
		k := XHook{ID: fmt.Sprintf("h%d", i), Order: int64(g.r.IntN(3))}
		if g.chance(6) && i > 0 {
			k.ID = h.Hooks[g.r.IntN(i)].ID
		}
		if h.Kind != "tool" {
			k.Policy = g.pick("", "fail-open", "fail-closed")
		}
		k.Do = g.pick("pass", "pass", "error", "panic", "value")
		if h.Kind == "tool" && g.chance(2) {
			k.Do = "value" // reactors mostly answer with a decision
		}
		switch {
		case h.Kind == "submit" && g.chance(4):
			k.Do = "reject"
		case k.Do == "value" && h.Kind == "submit":
			k.Value = g.pick(`{"model":"changed"}`, `{"model":""}`)
		case k.Do == "value" && h.Kind == "tool":
			k.Value = g.pick(`{"kind":"pass"}`, `{"kind":"swallow"}`, `{"kind":"rewrite","fields":{"name":"u"}}`,
				`{"kind":"replace","event":{"phase":"start","call_id":"d","name":"v"}}`, `{"kind":"rewrite","fields":{"nope":1}}`)
		case k.Do == "value":
			k.Value = `{"index":0,"type":"message","data":{"x":2}}`
		}
		h.Hooks = append(h.Hooks, k)
	}
	return h
}
