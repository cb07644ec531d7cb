package replay_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abkit/abkit/internal/replay"
	"github.com/abkit/abkit/sdk/gateway"
)

type longDesc struct{}

func (longDesc) Name() string { return "long-desc" }
func (longDesc) Capabilities() gateway.Capabilities {
	// 81 runes, as AuthBridge's static-inject: one over P5's limit.
	return gateway.Capabilities{Description: strings.Repeat("é", 81)}
}
func (longDesc) OnRequest(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}
func (longDesc) OnResponse(context.Context, *gateway.Exchange) gateway.Action {
	return gateway.Continue()
}

// TestLoadChain_P5Warns: the chain abctl serve and dryrun load runs a
// plugin whose description breaks P5, and reports it as a warning.
func TestLoadChain_P5Warns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chain.yaml")
	if err := os.WriteFile(path, []byte("outbound:\n  - name: long-desc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := gateway.Factory{Name: "long-desc", New: func(json.RawMessage) (gateway.Plugin, error) { return longDesc{}, nil }}
	ch, err := replay.LoadChain(context.Background(), path, gateway.Outbound, []gateway.Factory{f})
	if err != nil {
		t.Fatalf("LoadChain refused the chain: %v", err)
	}
	defer ch.Close(context.Background())
	ws := ch.Warnings()
	if len(ws) != 1 || ws[0].Rule != "P5" || !strings.Contains(ws[0].Error(), "warning: P5") {
		t.Errorf("warnings %v, want the P5 one", ws)
	}
}
