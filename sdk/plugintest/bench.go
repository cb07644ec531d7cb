package plugintest

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/abkit/abkit/sdk/gateway"
)

// Events repeats event (one whole SSE event, blank line included) n times
// with {{i}} replaced by the event's number, between head and tail.
func Events(head, event, tail string, n int) []byte {
	var b bytes.Buffer
	b.WriteString(head)
	for i := 0; i < n; i++ {
		b.WriteString(string(bytes.ReplaceAll([]byte(event), []byte("{{i}}"), []byte(strconv.Itoa(i)))))
	}
	b.WriteString(tail)
	return b.Bytes()
}

// BenchStream feeds body to the streaming plugin made by f, one SSE event
// per frame as a host delivers them, once per iteration, and reports the
// cost per event (ns/event, allocs/event) besides the per-stream figures.
func BenchStream(b *testing.B, f gateway.Factory, reqBody string, body []byte) {
	var frames [][]byte
	for rest := body; len(rest) > 0; {
		i, n := bytes.Index(rest, []byte("\n\n")), 2
		if j := bytes.Index(rest, []byte("\r\n\r\n")); j >= 0 && (i < 0 || j < i) {
			i, n = j, 4
		}
		if i < 0 {
			frames = append(frames, rest)
			break
		}
		frames = append(frames, rest[:i+n])
		rest = rest[i+n:]
	}
	p, err := f.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	s := p.(gateway.StreamingResponder)
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	// one exchange: the request, then every frame and the final call.
	stream := func() {
		ex, ctl := gateway.NewExchange(gateway.Inbound, gateway.Request{Method: "POST", URL: "/"})
		ctl.SetRequestBody([]byte(reqBody))
		p.OnRequest(ctx, ex)
		ctl.SetResponse(gateway.Response{Status: 200})
		ex.Response.Header.Set("Content-Type", "text/event-stream")
		for _, fr := range frames {
			s.OnResponseFrame(ctx, ex, fr, false)
		}
		s.OnResponseFrame(ctx, ex, nil, true)
	}
	for b.Loop() {
		stream()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(frames)), "ns/event")
	b.ReportMetric(testing.AllocsPerRun(1, stream)/float64(len(frames)), "allocs/event")
}
