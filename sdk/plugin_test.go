package sdk_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
)

type finisher struct{}

func (finisher) Name() string { return "fin" }
func (finisher) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{Description: "Finishes", WritesResponseBody: true}
}
func (finisher) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (finisher) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (finisher) OnFinish(context.Context, *gateway.Exchange) error { return nil }

// TestServeDebugRejectsUnservable: what cannot be served is refused, every
// problem at once; a description breaking P5 is not among them.
func TestServeDebugRejectsUnservable(t *testing.T) {
	err := sdk.ServeDebug(context.Background(), sdk.Plugin{Name: "x", Description: "two\nlines",
		Pipeline: &gateway.Factory{Name: "y"}}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "make them equal") || !strings.Contains(err.Error(), "Pipeline.New is nil") {
		t.Fatalf("err %v: want the name mismatch and the nil constructor together", err)
	}
	if strings.Contains(err.Error(), "P5") {
		t.Errorf("err %v: a P5 description problem must not make the plugin unservable", err)
	}
}

// TestValidateReportsEverything_P5: Validate, for authors' tests, reports
// the P5 description problem together with what makes the plugin
// unservable; Servable reports only the latter.
func TestValidateReportsEverything_P5(t *testing.T) {
	p := sdk.Plugin{Name: "x", Description: "two\nlines"}
	err := p.Validate()
	if err == nil || !strings.Contains(err.Error(), "P5") || !strings.Contains(err.Error(), "serves no family") {
		t.Fatalf("Validate: %v: want the P5 and no-family problems together", err)
	}
	if err := p.Servable(); err == nil || strings.Contains(err.Error(), "P5") {
		t.Errorf("Servable: %v: want the no-family problem only", err)
	}
	if err := p.CheckDescription(); err == nil || !strings.Contains(err.Error(), "P5") {
		t.Errorf("CheckDescription: %v: want the P5 problem", err)
	}
}
