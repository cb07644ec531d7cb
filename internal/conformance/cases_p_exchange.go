package conformance

// addPipelineExchangeCases registers the cases of the request and response
// hooks' answers and body writes on every exchange (P15-P17).
func addPipelineExchangeCases(r *Registry) {
	for _, c := range []*Case{
		{
			ID: "P15/hooks/legal-actions", Rules: []string{"P15", "P16"},
			Summary: "OnRequest and OnResponse answer continue or a 4xx/5xx reject within 1 s",
			Explain: `Drives JSON, plain and event-stream exchanges (chat completions, MCP,
A2A, a health check) and the request shapes of the exchange axis (every
HTTP method, bodies absent, Content-Length/Origin/Authorization headers,
upstream statuses 1xx–5xx) through the reference pipeline, with every
configuration of the config axis, and checks every OnRequest and
OnResponse call: no panic, no dead process, a reject carries a status in
400–599, and each answer comes within 1 s.
A failure names the hook and the exchange. Fix: recover from bad input
instead of panicking, reject with a 4xx status, keep hooks off slow I/O.`,
			Applies: pipelineReady,
			Run:     p15HooksLegalActions,
		},
		{
			ID: "P17/body-write/declared-only", Rules: []string{"P17"},
			Summary: "the plugin writes only the bodies its capabilities declare",
			Explain: `Drives the standard exchanges and the request shapes, with every
configuration of the config axis, and collects every body write the
plugin attempted. A write to the request body without
writes_request_body, or to the response body without
writes_response_body, is refused by the host and never reaches the wire.
A failure means the plugin calls SetRequestBody/SetResponseBody without
declaring it. Fix: declare the capability (only one plugin per direction
may), or stop writing.`,
			Applies: pipelineReady,
			Run:     p17BodyWriteDeclaredOnly,
		},
	} {
		r.Add(c)
	}
}

func p15HooksLegalActions(t *T) {
	alongConfigs(t, func(rg *rig, scs []scenario) {
		for _, sc := range scs {
			o := rg.run(sc, nil, false)
			rg.checkHooks("P15", o, "on_request")
			rg.checkHooks("P16", o, "on_response")
		}
	})
}

func p17BodyWriteDeclaredOnly(t *T) {
	alongConfigs(t, func(rg *rig, scs []scenario) {
		for _, sc := range scs {
			o := rg.run(sc, nil, false)
			for _, w := range o.res.Warnings {
				if w.Rule == "P17" && w.Plugin == rg.name {
					t.ErrorAt("P17", o.at, "%s", w.Msg)
				}
			}
		}
	})
}
