package a2aparser_test

import (
	"testing"

	"github.com/abkit/abkit/examples/plugins/a2aparser"
	"github.com/abkit/abkit/sdk/plugintest"
)

// A 10,000-event A2A stream: artifact chunks appended to one artifact, in
// 0.3 and 1.0 shapes (docs/perf.md).
func BenchmarkStream10k(b *testing.B) {
	for _, tc := range []struct{ name, req, event string }{
		{"v0.3", streamReq, `data: {"jsonrpc":"2.0","id":"r1","result":{"kind":"artifact-update","taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","parts":[{"kind":"text","text":"tok{{i}} "}]},"append":true}}` + "\n\n"},
		{"v1.0", v1Req, `data: {"jsonrpc":"2.0","id":"q","result":{"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"tok{{i}} "}]},"append":true}}}` + "\n\n"},
	} {
		body := plugintest.Events("", tc.event, "", 10000)
		b.Run(tc.name, func(b *testing.B) { plugintest.BenchStream(b, a2aparser.Factory(), tc.req, body) })
	}
}
