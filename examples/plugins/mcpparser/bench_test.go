package mcpparser_test

import (
	"testing"

	"github.com/abkit/abkit/examples/plugins/mcpparser"
	"github.com/abkit/abkit/sdk/plugintest"
)

// A 10,000-event MCP stream: progress notifications and pings, then the
// result (docs/perf.md).
func BenchmarkStream10k(b *testing.B) {
	body := plugintest.Events("",
		"event: message\n"+`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":{{i}}}}`+"\n\nevent: ping\ndata: ping\n\n",
		"event: message\n"+`data: {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"done"}]}}`+"\n\n", 5000)
	plugintest.BenchStream(b, mcpparser.Factory(), callBody, body)
}
