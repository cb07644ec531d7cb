package pluginhost_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/abkit/abkit/internal/pipeline"
	"github.com/abkit/abkit/internal/trace"
	"github.com/abkit/abkit/sdk"
	"github.com/abkit/abkit/sdk/gateway"
)

// undeclaredWriter reads bodies but declares no write, and writes both:
// the request body in OnRequest, and in OnResponse the response body,
// with the request body it sees then (its own earlier write, if kept).
type undeclaredWriter struct{}

func (undeclaredWriter) Name() string { return "undeclared-writer" }
func (undeclaredWriter) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{ReadsBody: true, Description: "Writes bodies it did not declare, for the P17 tests"}
}

func (undeclaredWriter) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	ex.SetRequestBody(append([]byte("u:"), ex.RequestBody()...))
	return gateway.Continue()
}

func (undeclaredWriter) OnResponse(_ context.Context, ex *gateway.Exchange) gateway.Action {
	ex.SetResponseBody([]byte("u:" + string(ex.ResponseBody()) + " after " + string(ex.RequestBody())))
	return gateway.Continue()
}

func undeclaredWriterFactory() gateway.Factory {
	return gateway.Factory{Name: "undeclared-writer", New: func(json.RawMessage) (gateway.Plugin, error) { return undeclaredWriter{}, nil }}
}

func serveUndeclaredHelper(mode string) bool {
	if mode != "undeclared-writer" {
		return false
	}
	f := undeclaredWriterFactory()
	sdk.Serve(sdk.Plugin{Name: "undeclared-writer", Description: "Writes bodies it did not declare, for the P17 tests", Pipeline: &f})
	return true
}

// bodyReader records the bodies it sees, as "name.hook=body".
type bodyReader struct {
	name string
	seen *[]string
}

func (r bodyReader) Name() string { return r.name }
func (bodyReader) Capabilities() gateway.Capabilities {
	return gateway.Capabilities{ReadsBody: true, Description: "Records the bodies it sees"}
}

func (r bodyReader) OnRequest(_ context.Context, ex *gateway.Exchange) gateway.Action {
	*r.seen = append(*r.seen, r.name+".request="+string(ex.RequestBody()))
	return gateway.Continue()
}

func (r bodyReader) OnResponse(_ context.Context, ex *gateway.Exchange) gateway.Action {
	*r.seen = append(*r.seen, r.name+".response="+string(ex.ResponseBody())+" req="+string(ex.RequestBody()))
	return gateway.Continue()
}

type undeclaredRun struct {
	Seen     []string
	Events   []trace.Event
	Upstream string
	Client   string
	Warnings []pipeline.Warning
}

// runUndeclared runs one exchange through reader a, the undeclared writer
// w and reader b.
func runUndeclared(t *testing.T, w gateway.Factory, keep bool) undeclaredRun {
	t.Helper()
	var seen []string
	reader := func(name string) gateway.Factory {
		return gateway.Factory{Name: name, New: func(json.RawMessage) (gateway.Plugin, error) { return bodyReader{name: name, seen: &seen}, nil }}
	}
	c, err := pipeline.Build(pipeline.Spec{Entries: []pipeline.Entry{{Plugin: "a"}, {Plugin: "undeclared-writer"}, {Plugin: "b"}}},
		[]gateway.Factory{reader("a"), w, reader("b")}, pipeline.Options{KeepUndeclaredWrites: keep})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	rec := trace.NewRecorder()
	var client pipeline.BufferClient
	r := c.Run(context.Background(), pipeline.Request{Request: gateway.Request{Method: "POST", URL: "/"}, Body: []byte("orig")},
		pipeline.Upstream{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{}`)},
		pipeline.ExchangeOptions{Trace: rec, Client: &client})
	return undeclaredRun{Seen: seen, Events: trace.WithoutDurations(rec.Events()), Upstream: string(r.RequestBody),
		Client: client.Body.String(), Warnings: r.Warnings}
}

// TestUndeclaredWritesSameInAndOutOfProcess_P17: an undeclared body write
// goes the same way whether its plugin runs in process or in its own
// process, under either alternative of choice P17.undeclared-write:
// refused (the later plugins see the body as it was, a P17 warning per
// write) or kept (the later plugins, and the writer's own later call, see
// it; no warning). Either way upstream and the client get the bodies the
// host had.
func TestUndeclaredWritesSameInAndOutOfProcess_P17(t *testing.T) {
	remote := loadMode(t, "undeclared-writer")
	rf, ok := remote.Factory()
	if !ok {
		t.Fatal("undeclared-writer serves no pipeline")
	}
	for _, c := range []struct {
		name     string
		keep     bool
		seen     []string
		warnings int
	}{
		{name: "refused", seen: []string{"a.request=orig", "b.request=orig", "b.response={} req=orig", "a.response={} req=orig"}, warnings: 2},
		{name: "kept", keep: true, seen: []string{"a.request=orig", "b.request=u:orig", "b.response={} req=u:orig", "a.response=u:{} after u:orig req=u:orig"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := runUndeclared(t, undeclaredWriterFactory(), c.keep)
			out := runUndeclared(t, rf, c.keep)
			if !reflect.DeepEqual(in, out) {
				t.Errorf("in and out of process differ\nin-process:  %+v\nout-of-proc: %+v", in, out)
			}
			if !reflect.DeepEqual(in.Seen, c.seen) {
				t.Errorf("the plugins saw %q; want %q", in.Seen, c.seen)
			}
			if in.Upstream != "orig" || in.Client != `{}` {
				t.Errorf("upstream got %q, the client %q; want the host's orig and {}: an undeclared write never reaches the wire", in.Upstream, in.Client)
			}
			n := 0
			for _, w := range in.Warnings {
				if w.Rule == "P17" && w.Plugin == "undeclared-writer" {
					n++
				}
			}
			if n != c.warnings || len(in.Warnings) != c.warnings {
				t.Errorf("warnings %v; want %d P17 warnings naming undeclared-writer", in.Warnings, c.warnings)
			}
		})
	}
}
