// Command minipipe-runtime puts the minipipe runtime under abkit's runtime
// conformance suite (family P): on sdk/runtimekit, the adapter is the
// translation between the suite's scenarios and minipipe's types alone.
//
//	go build -o bin/ ./cmd/conformance ./examples/runtimes/minipipe/cmd/minipipe-runtime
//	bin/conformance run --runtime bin/minipipe-runtime
package main

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/abkit/abkit/examples/runtimes/minipipe"
	"github.com/abkit/abkit/sdk/runtimekit"
)

func main() {
	runtimekit.Serve(runtimekit.Runtime{Name: "minipipe", Version: "v0", Pipeline: run, Alternatives: map[string]string{
		"P15.reject-status": "as-given",    // a stage's status is sent as given
		"P13.overrun":       "synchronous", // Close trusts the deadline
		"P30.overrun":       "synchronous", // each Done runs in turn under its deadline
	}})
}

// rules are the contract rules behind minipipe's problem and warning codes.
var rules = map[string]string{"no-name": "P1", "twice": "P1", "requires": "P7", "requires-any": "P8", "finished-twice": "P30", "writer": "P9", "waypoint-writer": "P10",
	"refused-write": "P17", "observed": "P6", "unterminated": "P19", "finish-failed": "P30", "request-header": "P32", "response-header": "P33", "rejection": "P34"}

func run(ctx context.Context, sc runtimekit.PipelineScenario) (*runtimekit.PipelineRun, error) {
	entries, errs := sc.Entries()
	var stages []*minipipe.Stage
	for _, e := range entries {
		stages = append(stages, stage(sc.Probes, e.Plugin, e.Observe))
	}
	pipe, err := minipipe.New(stages, minipipe.Options{FinishTimeout: time.Duration(sc.GetFinishTimeoutNs()), Waypoint: sc.GetMode() == "waypoint"})
	for _, e := range runtimekit.Errors(err) {
		var p *minipipe.Problem
		if errors.As(e, &p) {
			errs = append(errs, runtimekit.BuildError(rules[p.Kind], p.Stage, p.Error()))
		}
	}
	if len(errs) > 0 {
		return &runtimekit.PipelineRun{BuildErrors: errs}, nil
	}
	return sc.Run(ctx, runtimekit.Chain{Start: pipe.Open, Ready: pipe.Ready, Stop: pipe.Close,
		Exchange: func(ctx context.Context, idx uint32, es *runtimekit.ExchangeSpec) *runtimekit.ExchangeRun {
			client, rctx := runtimekit.NewClient(ctx, es)
			defer client.Cancel()
			rq, up := es.GetRequest(), runtimekit.NewUpstream(es.GetUpstream())
			req := &minipipe.Request{Method: rq.GetMethod(), URL: rq.GetUrl(), Scheme: rq.GetScheme(), Host: rq.GetHost(), Path: rq.GetPath(), RawQuery: rq.GetRawQuery(),
				RemoteAddr: rq.GetRemoteAddr(), Header: runtimekit.Header(rq.GetHeader()), Body: runtimekit.RequestBody(rq)}
			ex := pipe.Serve(rctx, int(idx), req, func(context.Context, *minipipe.Request) (*minipipe.Response, error) {
				if up.Err != nil {
					return nil, up.Err
				}
				resp := &minipipe.Response{Status: up.Status, Header: up.Header, Body: up.Body}
				if up.Stream != nil {
					resp.Next = up.Stream.Next
				}
				return resp, nil
			}, client)
			res := ex.Finish()
			if es.GetFinishTwice() {
				res = ex.Finish()
			}
			out := &runtimekit.ExchangeRun{Outcome: runtimekit.Outcome(res.Kind, res.Status, res.By, res.Reason, res.Took), Streamed: res.Streamed, Frames: int32(res.Frames),
				RequestBody: res.SentBody, Cancelled: res.Cancelled, UpstreamCalled: res.SentHeader != nil,
				UpstreamHeader: runtimekit.ProtoHeader(res.SentHeader)}
			client.Fill(out)
			for _, w := range res.Warnings {
				out.Warnings = append(out.Warnings, runtimekit.Warning(rules[w.Code], w.Stage, w.Text))
			}
			return out
		}}), nil
}

// stage is probe ps as a minipipe stage: each step is one probe call.
func stage(probes *runtimekit.Probes, ps *runtimekit.ProbeSpec, observe bool) *minipipe.Stage {
	c, name := ps.GetCapabilities(), ps.GetName()
	s := &minipipe.Stage{Name: name, Reads: c.GetReadsBody(), WritesRequest: c.GetWritesRequestBody(), WritesResponse: c.GetWritesResponseBody(),
		Requires: c.GetRequires(), RequiresAny: c.GetRequiresAny(), Observe: observe}
	call := func(ctx context.Context, mc *minipipe.Call, hook string, frame []byte, last bool) *runtimekit.Reply {
		pc := &runtimekit.ProbeCall{Probe: ps.GetProbe(), Hook: hook, Frame: frame, Last: last, Exchange: uint32(mc.Index)}
		pc.State, pc.HasState = mc.Bag[name]
		q := mc.Req
		pc.HasRequestBody, pc.RequestBody = q.Body != nil, q.Body
		pc.Request = &runtimekit.HTTPRequest{Method: q.Method, Url: q.URL, Header: runtimekit.ProtoHeader(q.Header), Scheme: q.Scheme, Host: q.Host, Path: q.Path,
			RawQuery: q.RawQuery, RemoteAddr: q.RemoteAddr}
		if mc.Resp != nil {
			pc.HasResponseBody, pc.ResponseBody = mc.Resp.Body != nil, mc.Resp.Body
			pc.HasResponse, pc.ResponseHeader = true, runtimekit.ProtoHeader(mc.Resp.Header)
		}
		if id, ok := mc.Identity(); ok {
			pc.IdentityJson, _ = json.Marshal(id)
		}
		if d := mc.Done; d != nil {
			pc.HasOutcome, pc.Outcome = true, runtimekit.Outcome(d.Kind, d.Status, d.By, d.Reason, d.Took)
		}
		r := probes.Call(ctx, pc)
		// Changes in place: minipipe polices framing and late headers.
		r.GetRequestHeader().Apply(q.Header)
		r.GetResponseHeader().Apply(mc.ResponseHeader())
		if id := (minipipe.Identity{}); json.Unmarshal(r.GetSetIdentityJson(), &id) == nil {
			mc.SetIdentity(id)
		}
		if r.GetSetState() {
			mc.Bag[name] = r.GetState()
		}
		if r.GetWriteRequestBody() {
			mc.SetRequestBody(r.GetBody())
		}
		if r.GetWriteResponseBody() {
			mc.SetResponseBody(r.GetBody())
		}
		r.Act(ctx)
		return r
	}
	verdict := func(r *runtimekit.Reply) (v minipipe.Verdict) {
		v.Status, v.Text, v.Stop = r.Rejects()
		if rj := runtimekit.Action(r).Rejection; rj != nil {
			v.Header, v.Body, v.Type = rj.Header, rj.Body, rj.ContentType
		}
		return v
	}
	step := func(hook string) func(context.Context, *minipipe.Call) minipipe.Verdict {
		return func(ctx context.Context, mc *minipipe.Call) minipipe.Verdict {
			return verdict(call(ctx, mc, hook, nil, false))
		}
	}
	s.Before, s.After = step("request"), step("response")
	if runtimekit.Has(ps, "stream") {
		s.Chunk = func(ctx context.Context, mc *minipipe.Call, f []byte, last bool) minipipe.Verdict {
			return verdict(call(ctx, mc, "frame", f, last))
		}
	}
	if runtimekit.Has(ps, "finish") {
		s.Done = func(ctx context.Context, mc *minipipe.Call) error { return call(ctx, mc, "finish", nil, false).Err() }
	}
	if runtimekit.Has(ps, "init") {
		l := func(hook string) func(context.Context) error { return probes.Lifecycle(ps.GetProbe(), hook) }
		s.Open, s.Close, s.Ready = l("init"), l("shutdown"), l("ready")
	}
	return s
}
