// Package gatewayplugins holds two small gateway plugins the boundary tests
// run both in-process and as binaries (testdata/headerstamp,
// testdata/bearergate) behind abctl serve: one stamps request headers
// ([P32]), one checks a bearer token, rejects with a challenge (P34) and
// establishes the identity (P36).
//
// [P32]: https://github.com/abkit/abkit/blob/main/docs/contracts.md
package gatewayplugins

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
)

// Token is the one bearer token BearerGate accepts.
const Token = "good-token"

type stamp struct{}

func (stamp) Name() string { return "header-stamp" }
func (stamp) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Stamps the request's host, path and subject into a header"}
}

func (stamp) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	r := &ex.Request
	sub := "-"
	if id, ok := ex.Identity(); ok {
		sub = id.Subject
	}
	r.Header.Set("X-Gateway-Stamp", r.Host+"|"+r.Path+"|"+r.RawQuery+"|"+sub)
	r.Header.Del("X-Internal")
	return gateway.Continue()
}

func (stamp) OnResponse(_ context.Context, ex *gateway.Exchange) gateway.Action {
	ex.Response.Header.Set("X-Gateway", "stamped")
	return gateway.Continue()
}

type gate struct{}

func (gate) Name() string { return "bearer-gate" }
func (gate) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Rejects requests without the bearer token, with a challenge"}
}

func (gate) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	tok, ok := strings.CutPrefix(ex.Request.Header.Get("Authorization"), "Bearer ")
	if !ok || tok != Token {
		return gateway.Challenge("abkit-test", "invalid_token", "missing or wrong bearer token")
	}
	ex.SetIdentity(gateway.Identity{Subject: "alice", Scopes: []string{"read"}})
	// The credential stops here: the upstream gets its own.
	ex.Request.Header.Set("Authorization", "Bearer upstream-credential")
	return gateway.Continue()
}

func (gate) OnResponse(context.Context, *gateway.Exchange) gateway.Action { return gateway.Continue() }

func factory(name string, p gateway.Plugin) *gateway.Factory {
	return &gateway.Factory{Name: name, New: func(json.RawMessage) (gateway.Plugin, error) { return p, nil }}
}

// StampFactory and GateFactory are the in-process builds.
func StampFactory() gateway.Factory { return *factory("header-stamp", stamp{}) }
func GateFactory() gateway.Factory  { return *factory("bearer-gate", gate{}) }

// Stamp and Gate are the plugins the binaries serve.
func Stamp() sdk.Plugin {
	return sdk.Plugin{Name: "header-stamp", Description: stamp{}.Capabilities().Description, Pipeline: factory("header-stamp", stamp{})}
}
func Gate() sdk.Plugin {
	return sdk.Plugin{Name: "bearer-gate", Description: gate{}.Capabilities().Description, Pipeline: factory("bearer-gate", gate{})}
}
