package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/abkit/abkit/sdk/gateway"
)

// gen is an endless or n-chunk Stream of size-byte chunks that checks,
// at each Next, that the client already has every chunk before it: a
// body relayed as it arrives, never held.
type gen struct {
	chunk  []byte
	n      int // chunks, then io.EOF; -1 endless
	calls  int
	client *countClient
	held   bool // a chunk was asked for before the previous reached the client
	err    error
}

func (g *gen) Next(ctx context.Context) ([]byte, error) {
	if g.client != nil && g.client.n < int64(g.calls*len(g.chunk)) {
		g.held = true
	}
	if g.n >= 0 && g.calls == g.n {
		if g.err != nil {
			return nil, g.err
		}
		return nil, io.EOF
	}
	g.calls++
	return g.chunk, nil
}

// countClient counts the body bytes a client gets.
type countClient struct {
	status int
	n      int64
}

func (c *countClient) WriteHeader(status int, h http.Header) { c.status = status }
func (c *countClient) Write(p []byte) (int, error)           { c.n += int64(len(p)); return len(p), nil }
func (c *countClient) Flush()                                {}

func bodyReq() Request {
	return Request{Request: gateway.Request{Method: "POST", URL: "http://upstream/v1/x", Header: http.Header{}}}
}

// A JSON body no plugin needs whole is relayed chunk by chunk as it
// arrives: 1 GiB goes through without the runtime holding it (a 1 GiB
// body once took serve to 3.95 GiB), and MaxBody does not apply.
func TestBodyNotNeededIsRelayedAsItArrives(t *testing.T) {
	log := &recLog{}
	c := buildFakes(t, Options{}, &fake{name: "headers-only", log: log})
	cl := &countClient{}
	g := &gen{chunk: bytes.Repeat([]byte("x"), 1<<20), n: 1024, client: cl}
	res := c.Run(context.Background(), bodyReq(), Upstream{Status: 200, Header: jsonHeader(), Stream: g},
		ExchangeOptions{Client: cl, MaxBody: 32 << 20})
	if res.Outcome.Kind != gateway.OutcomeAllow || cl.n != 1<<30 || res.Relayed != 1<<30 {
		t.Fatalf("outcome %v, client got %d bytes, relayed %d; want allow and 1 GiB", res.Outcome, cl.n, res.Relayed)
	}
	if g.held {
		t.Fatal("the runtime asked for the next chunk before the client had the last: the body was held")
	}
	if res.Body != nil {
		t.Fatalf("Result.Body holds %d bytes", len(res.Body))
	}
	if got := log.seq(); fmt.Sprint(got) != "[headers-only.on_request headers-only.on_response]" {
		t.Fatalf("calls %v", got)
	}
}

// A relayed body of unknown length (no Content-Length: NDJSON, a long
// poll) is flushed after each read, before the runtime waits for the next:
// the upstream sends one line and waits, and the client must have it
// before the upstream is let go.
func TestBodyNotNeededFlushedBeforeWaitingOnUpstream(t *testing.T) {
	c := buildFakes(t, Options{}, &fake{name: "headers-only", log: &recLog{}})
	up := &gatedStream{first: "{\"n\":1}\n", second: "{\"n\":2}\n", release: make(chan struct{})}
	cl := &flushSignal{flushed: make(chan string, 8)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan *Result, 1)
	go func() {
		done <- c.Run(ctx, bodyReq(), Upstream{Status: 200, Header: http.Header{"Content-Type": {"application/x-ndjson"}}, Stream: up}, ExchangeOptions{Client: cl})
	}()
	select {
	case got := <-cl.flushed:
		if got != up.first {
			t.Errorf("first flush sent %q, want %q", got, up.first)
		}
	case <-time.After(streamHangGuard):
		cancel()
		t.Fatal("the first line was not flushed while the upstream waited")
	}
	close(up.release)
	res := <-done
	if res.Outcome.Kind != gateway.OutcomeAllow || cl.body.String() != up.first+up.second {
		t.Errorf("outcome %+v, client got %q", res.Outcome, cl.body.String())
	}
}

// A rejection on the response side of a relayed body denies before a
// byte of the body is read.
func TestBodyNotNeededRejectedBeforeBody(t *testing.T) {
	c := buildFakes(t, Options{}, &fake{name: "deny", log: &recLog{}, resp: func(context.Context, *gateway.Exchange) gateway.Action {
		return gateway.Reject(451, "no")
	}})
	cl := &countClient{}
	g := &gen{chunk: []byte("x"), n: -1}
	res := c.Run(context.Background(), bodyReq(), Upstream{Status: 200, Header: jsonHeader(), Stream: g}, ExchangeOptions{Client: cl})
	if res.Outcome.Kind != gateway.OutcomeDeny || cl.status != 451 || g.calls != 0 {
		t.Fatalf("outcome %v status %d, %d chunks read; want a 451 deny before the body", res.Outcome, cl.status, g.calls)
	}
}

// A relayed body that fails after the header went out is Broken, so the
// host breaks the client's connection rather than end it cleanly.
func TestBodyNotNeededUpstreamFailureIsBroken(t *testing.T) {
	c := buildFakes(t, Options{}, &fake{name: "a", log: &recLog{}})
	g := &gen{chunk: []byte("half"), n: 1, err: errors.New("connection reset")}
	res := c.Run(context.Background(), bodyReq(), Upstream{Status: 200, Header: jsonHeader(), Stream: g}, ExchangeOptions{Client: &countClient{}})
	if !res.Broken || !errors.Is(res.Err, ErrUpstream) || res.Outcome.Kind != gateway.OutcomeError {
		t.Fatalf("broken %v, err %v, outcome %v", res.Broken, res.Err, res.Outcome)
	}
}

// A body a plugin reads is held, but no more than MaxBody: past it the
// exchange ends with a 502 naming the bound, and reading stops there.
func TestBufferedBodyOverMaxBody(t *testing.T) {
	c := buildFakes(t, Options{}, &fake{name: "reader", log: &recLog{}, caps: gateway.Capabilities{ReadsBody: true}})
	cl := &countClient{}
	g := &gen{chunk: bytes.Repeat([]byte("x"), 64<<10), n: -1}
	res := c.Run(context.Background(), bodyReq(), Upstream{Status: 200, Header: jsonHeader(), Stream: g}, ExchangeOptions{Client: cl, MaxBody: 1 << 20})
	if !errors.Is(res.Err, ErrTooLarge) || cl.status != http.StatusBadGateway || res.Broken {
		t.Fatalf("err %v, status %d, broken %v; want ErrTooLarge and a 502", res.Err, cl.status, res.Broken)
	}
	if g.calls > 17 {
		t.Fatalf("%d chunks of 64 KiB read for a bound of 1 MiB", g.calls)
	}
}

// An SSE block that never ends (an endless data line) is cut at MaxBody:
// the stream is Broken, the frames before it were relayed, and the
// framer holds no more than the bound (750 MiB in 10 s once took serve
// to 3.2 GiB).
func TestSSEEndlessBlockCut(t *testing.T) {
	log := &recLog{}
	c := buildFakes(t, Options{}, &fake{name: "s", log: log, stream: true})
	cl := &countClient{}
	first := &chunks{parts: [][]byte{[]byte("data: one\n\ndata: ")}}
	endless := &gen{chunk: bytes.Repeat([]byte("x"), 64<<10), n: -1}
	st := streamThen{first, endless}
	res := c.Run(context.Background(), bodyReq(), Upstream{Status: 200, Header: sseHeader(), Stream: &st}, ExchangeOptions{Client: cl, MaxBody: 1 << 20})
	if !errors.Is(res.Err, ErrTooLarge) || !res.Broken || res.Frames != 1 || cl.n != int64(len("data: one\n\n")) {
		t.Fatalf("err %v broken %v frames %d relayed %d", res.Err, res.Broken, res.Frames, cl.n)
	}
	if endless.calls > 17 {
		t.Fatalf("%d chunks of 64 KiB read for a bound of 1 MiB", endless.calls)
	}
}

// streamThen reads a, then b.
type streamThen struct{ a, b Stream }

func (s *streamThen) Next(ctx context.Context) ([]byte, error) {
	if s.a != nil {
		p, err := s.a.Next(ctx)
		if err == io.EOF {
			s.a = nil
			err = nil
		}
		return p, err
	}
	return s.b.Next(ctx)
}
